import { describe, expect, it } from "vitest";
import { applyNotification, chipState, failTurn, finishSummary, finishTurn, markReview, newTurn, splitSources, usageLine, usageTitle } from "../../src/core/stream";
import type { Notification } from "../../src/core/client";
import type { ChatSendResult } from "../../src/core/protocol";

const RESULT: ChatSendResult = {
	conversationId: "c1",
	text: "Hello there",
	stopReason: "end_turn",
	usage: { inputTokens: 1234, outputTokens: 56, cacheReadTokens: 0, cacheWriteTokens: 0 },
	costUsd: 0.0012,
	sources: ["Welcome.md"],
};

describe("turn assembly", () => {
	it("appends deltas in order and tracks tool calls with their results", () => {
		let turn = newTurn();
		const steps: Notification[] = [
			{ method: "chat/delta", params: { requestId: 1, text: "Hel" } },
			{ method: "chat/toolCall", params: { requestId: 1, id: "t1", name: "search_notes", arguments: { query: "x" } } },
			{ method: "chat/toolResult", params: { requestId: 1, id: "t1", isError: false, content: "[]" } },
			{ method: "chat/toolCall", params: { requestId: 1, id: "t2", name: "read_note", arguments: { path: "a.md" } } },
			{ method: "chat/toolResult", params: { requestId: 1, id: "t2", isError: true, content: "gone" } },
			{ method: "chat/delta", params: { requestId: 1, text: "lo" } },
			// A method this plugin does not know (a newer server) changes nothing.
			{ method: "unknown/thing", params: {} } as unknown as Notification,
		];
		for (const step of steps) turn = applyNotification(turn, step);
		expect(turn.text).toBe("Hello");
		expect(turn.tools.map((t) => [t.name, t.result, t.isError])).toEqual([
			["search_notes", "[]", false],
			["read_note", "gone", true],
		]);
		expect(turn.done).toBe(false);
	});

	it("the final text is the server's and the turn is done", () => {
		const turn = finishTurn(applyNotification(newTurn(), { method: "chat/delta", params: { requestId: 1, text: "Hel" } }), RESULT);
		expect(turn).toMatchObject({ text: "Hello there", done: true, result: RESULT, sources: ["Welcome.md"] });
	});

	it("a search summary carries its sources and no chat usage", () => {
		const turn = finishSummary(newTurn(), "Kafka is a log [[Kafka]].", ["Kafka.md"]);
		expect(turn).toMatchObject({ text: "Kafka is a log [[Kafka]].", sources: ["Kafka.md"], done: true, result: null });
	});

	it("a cancelled turn keeps its text and shows no error", () => {
		const partial = applyNotification(newTurn(), { method: "chat/delta", params: { requestId: 1, text: "Half" } });
		expect(failTurn(partial, new Error("Request cancelled."), true)).toMatchObject({ text: "Half", cancelled: true, error: null, done: true });
		expect(failTurn(partial, new Error("Boom."), false).error?.message).toBe("Boom.");
	});

	it("usage shows tokens and cost, or that the cost is unknown", () => {
		expect(usageLine(RESULT)).toBe("1,234 tokens read · 56 written · $0.0012");
		expect(usageLine({ ...RESULT, costUsd: null })).toBe("1,234 tokens read · 56 written · price not known");
		expect(usageLine({ ...RESULT, costUsd: null }, true)).toBe("1,234 tokens read · 56 written · free, runs on this computer");
		expect(usageLine({ ...RESULT, model: "demo-small" })).toMatch(/^demo-small · 1,234 tokens read/);
		expect(usageTitle(RESULT)).toMatch(/list price/);
		expect(usageTitle({ ...RESULT, costUsd: null }, true)).toMatch(/runs on this computer/);
	});
});

describe("tool chips under review", () => {
	it("say waiting for your review while the dialog is open, and not applied when denied", () => {
		let turn = applyNotification(newTurn(), {
			method: "chat/toolCall",
			params: { requestId: 1, id: "c1", name: "edit_note", arguments: {} },
		});
		expect(chipState(turn.tools[0]!)).toEqual({ label: "running", kind: "running" });
		turn = markReview(turn, "c1", "waiting");
		expect(chipState(turn.tools[0]!)).toEqual({ label: "waiting for your review", kind: "waiting" });
		turn = markReview(turn, "c1", "denied");
		turn = applyNotification(turn, {
			method: "chat/toolResult",
			params: { requestId: 1, id: "c1", isError: true, content: "The user did not approve running tool 'edit_note'; not run." },
		});
		expect(chipState(turn.tools[0]!)).toEqual({ label: "not applied", kind: "skipped" });
		const failed = applyNotification(markReview(turn, "c1", null), { method: "chat/toolResult", params: { requestId: 1, id: "c1", isError: true, content: "x" } });
		expect(chipState(failed.tools[0]!).kind).toBe("failed");
	});
});

describe("context apart from sources", () => {
	it("lists what went with the message as context and only what the model read as sources", () => {
		expect(splitSources(["Open.md", "Read.md"], ["Open.md", "Never.png"])).toEqual({ context: ["Open.md"], read: ["Read.md"] });
	});

	it("shows an undone write as undone, not as done", () => {
		const tool = { id: "c", name: "edit_note", arguments: {}, result: "ok", isError: false, review: "undone" as const };
		expect(chipState(tool)).toEqual({ label: "undone", kind: "skipped" });
	});
});
