// The status bar's words for a connection state.
import type { ConnectionState } from "./client";

export function statusText(state: ConnectionState): string {
	switch (state.status) {
		case "connecting":
			return "Assistant: connecting…";
		case "connected":
			return state.pending > 0
				? `Assistant: indexing ${state.pending.toLocaleString("en")} notes`
				: "Assistant: connected";
		case "disconnected":
			return "Assistant: disconnected";
	}
}

export function statusTitle(state: ConnectionState): string {
	switch (state.status) {
		case "connecting":
			return "Connecting to the assistant server.";
		case "connected":
			return `Connected to the assistant server for ${state.vault} (${state.notes.toLocaleString("en")} notes indexed).`;
		case "disconnected":
			return state.reason;
	}
}
