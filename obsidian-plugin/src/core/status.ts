// The status bar's words for a connection state.
import type { ConnectionState } from "./client";
import type { IndexProgress } from "./protocol";

/** `n thing` or `n things`, with thousands separators. */
export function count(n: number, thing: string): string {
	return `${n.toLocaleString("en")} ${n === 1 ? thing : `${thing}s`}`;
}

/** The status bar's text; `embedding` is the last index/progress of the embedding job;
 * `starting`: the plugin started the server and waits for it; `notInstalled`: the panel shows
 * the install card. */
export function statusText(state: ConnectionState, embedding: IndexProgress | null = null, starting = false, notInstalled = false): string {
	switch (state.status) {
		case "connecting":
			return starting ? "Assistant: starting…" : "Assistant: connecting…";
		case "connected":
			if (state.pending > 0) {
				if (state.total === 0) return "Assistant: listing the vault's notes…";
				return `Assistant: indexing ${state.done.toLocaleString("en")} / ${count(state.total, "note")}`;
			}
			if (embedding?.phase === "embedding" || embedding?.phase === "loading") {
				const done = embedding.done.toLocaleString("en");
				return `Assistant: embedding ${done}/${count(embedding.total, "passage")}`;
			}
			if (embedding?.phase === "confirm") return "Assistant: embedding waits for your approval";
			return "Assistant: connected";
		case "disconnected":
			return notInstalled ? "Assistant: not installed" : "Assistant: disconnected";
	}
}

export function statusTitle(state: ConnectionState, starting = false): string {
	switch (state.status) {
		case "connecting":
			return starting ? "Starting the assistant server." : "Connecting to the assistant server.";
		case "connected":
			return `Connected to the assistant server for ${state.vault} (${count(state.notes, "note")} indexed).`;
		case "disconnected":
			return state.reason;
	}
}

/** The panel's line while search is partial (issue 39): the notes indexed so far, or the
 * passages embedded for search by meaning; null when search is whole. */
export function indexingLine(state: ConnectionState, embedding: IndexProgress | null): string | null {
	if (state.status !== "connected") return null;
	if (state.pending > 0) {
		if (state.total === 0) return "Listing your notes; search uses what is indexed.";
		return `Indexing ${state.done.toLocaleString("en")} of ${count(state.total, "note")}; search uses what is indexed.`;
	}
	if (embedding?.phase === "embedding" || embedding?.phase === "loading") {
		const part = embedding.total > 0 ? ` (${Math.floor((100 * embedding.done) / embedding.total)} %)` : "";
		return `Preparing search by meaning${part}; search by words works meanwhile.`;
	}
	return null;
}
