// The status bar's words for a connection state.
import type { ConnectionState } from "./client";
import type { IndexProgress } from "./protocol";

/** The status bar's text; `embedding` is the last index/progress of the embedding job. */
export function statusText(state: ConnectionState, embedding: IndexProgress | null = null): string {
	switch (state.status) {
		case "connecting":
			return "Assistant: connecting…";
		case "connected":
			if (state.pending > 0) return `Assistant: indexing ${state.pending.toLocaleString("en")} notes`;
			if (embedding?.phase === "embedding" || embedding?.phase === "loading") {
				const done = embedding.done.toLocaleString("en");
				return `Assistant: embedding ${done}/${embedding.total.toLocaleString("en")} chunks`;
			}
			if (embedding?.phase === "confirm") return "Assistant: embedding waits for your approval";
			return "Assistant: connected";
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
