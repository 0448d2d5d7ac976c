// Assembling one assistant turn from the notifications of its request: text deltas in order,
// tool calls with their results, then the final result or error.
import { LOCAL_COST } from "./model-picker";
import type { Notification } from "./client";
import type { ChatSendResult } from "./protocol";
import type { RpcError } from "./rpc";

export interface ToolChip {
	id: string;
	name: string;
	arguments: Record<string, unknown>;
	result: string | null;
	isError: boolean;
	/** The user's review of a write: the dialog is open, the write was not approved, or it was
	 * made and then undone. */
	review: "waiting" | "denied" | "undone" | null;
}

export interface Turn {
	text: string;
	/** The notes and files sent with the message as context (its chips). */
	sent: string[];
	tools: ToolChip[];
	done: boolean;
	result: ChatSendResult | null;
	/** The notes the answer drew on (a chat turn's, or a search summary's). */
	sources: string[];
	error: RpcError | Error | null;
	cancelled: boolean;
}

export function newTurn(): Turn {
	return { text: "", sent: [], tools: [], done: false, result: null, sources: [], error: null, cancelled: false };
}

/** The turn after one notification of its request. */
export function applyNotification(turn: Turn, notification: Notification): Turn {
	switch (notification.method) {
		case "chat/delta":
			return { ...turn, text: turn.text + text(notification.params.text) };
		case "chat/toolCall": {
			const call = notification.params;
			return {
				...turn,
				tools: [
					...turn.tools,
					{
						id: text(call.id),
						name: text(call.name),
						arguments: call.arguments ?? {},
						result: null,
						isError: false,
						review: null,
					},
				],
			};
		}
		case "chat/toolResult": {
			const result = notification.params;
			return {
				...turn,
				tools: turn.tools.map((tool) =>
					tool.id === text(result.id) ? { ...tool, result: text(result.content), isError: result.isError === true } : tool,
				),
			};
		}
		default:
			return turn;
	}
}

/** The turn with the review state of tool call `id` (its tool/confirm's callId). */
export function markReview(turn: Turn, id: string, review: ToolChip["review"]): Turn {
	return { ...turn, tools: turn.tools.map((tool) => (tool.id === id ? { ...tool, review } : tool)) };
}

/** What a tool chip says: running, waiting for your review, done, failed, not applied, or undone. */
export function chipState(tool: ToolChip): { label: string; kind: "running" | "waiting" | "done" | "failed" | "skipped" } {
	if (tool.review === "denied") return { label: "not applied", kind: "skipped" };
	if (tool.review === "undone") return { label: "undone", kind: "skipped" };
	if (tool.result === null) return tool.review === "waiting" ? { label: "waiting for your review", kind: "waiting" } : { label: "running", kind: "running" };
	return tool.isError ? { label: "failed", kind: "failed" } : { label: "done", kind: "done" };
}

/** A turn's notes, the context apart from the sources: `context`, the notes and files sent with
 * the message that reached the model (the server lists only those); `read`, the notes the model
 * searched or read this turn. */
export function splitSources(sources: string[], sent: string[]): { context: string[]; read: string[] } {
	const given = new Set(sent);
	return { context: sources.filter((path) => given.has(path)), read: sources.filter((path) => !given.has(path)) };
}

/** The turn once its request answered. The final text is the server's (deltas concatenate to it). */
export function finishTurn(turn: Turn, result: ChatSendResult): Turn {
	return { ...turn, text: result.text, result, sources: result.sources ?? [], done: true };
}

/** A search summary once its request answered: its text and sources, no chat usage. */
export function finishSummary(turn: Turn, summary: string, sources: string[]): Turn {
	return { ...turn, text: summary, sources, done: true };
}

export function failTurn(turn: Turn, error: Error, cancelled: boolean): Turn {
	return { ...turn, error: cancelled ? null : error, cancelled, done: true };
}

/** "gpt-4o · 1,234 tokens read · 56 written · $0.0012" for a finished turn (or a rewrite): the
 * model that answered when the server names it; with no price, LOCAL_COST for a local model. */
export function usageLine(result: Pick<ChatSendResult, "usage" | "costUsd"> & { model?: string }, local = false): string {
	const tokens = `${result.usage.inputTokens.toLocaleString("en")} tokens read · ${result.usage.outputTokens.toLocaleString("en")} written`;
	const line = `${tokens} · ${costWords(result.costUsd, local)}`;
	return result.model ? `${result.model} · ${line}` : line;
}

/** The cost in the one wording used everywhere: dollars, LOCAL_COST, or "price not known". */
export function costWords(costUsd: number | null | undefined, local: boolean): string {
	if (costUsd !== null && costUsd !== undefined) return `$${costUsd.toFixed(4)}`;
	return local ? LOCAL_COST : "price not known";
}

/** The usage line's tooltip: what the numbers and the cost mean. */
export function usageTitle(result: Pick<ChatSendResult, "usage" | "costUsd">, local = false): string {
	const read = "Tokens read: your message, the notes sent along and the conversation so far. Written: the answer.";
	if (result.costUsd !== null && result.costUsd !== undefined) {
		return `${read} The cost is the provider's list price for these tokens (obsidian-ai-bridge usage shows the day's and month's totals).`;
	}
	return local
		? `${read} The model runs on this computer: nothing is paid per token.`
		: `${read} The provider's prices for this model are not known, so the cost cannot be shown.`;
}

/** A field that should be a string: itself, or "" when it is anything else. */
export function text(value: unknown): string {
	return typeof value === "string" ? value : "";
}
