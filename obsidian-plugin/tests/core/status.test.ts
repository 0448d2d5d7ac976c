import { describe, expect, it } from "vitest";
import { count, indexingLine, statusText, statusTitle } from "../../src/core/status";

const connected = { status: "connected" as const, vault: "Notes", notes: 12000, pending: 0, done: 0, total: 0, chat: true };

describe("status bar", () => {
	it("says starting, connected, indexing done / total notes, or disconnected with the reason in its tooltip", () => {
		expect(statusText({ status: "connecting" }, null, true)).toBe("Assistant: starting…");
		expect(statusText({ status: "connecting" })).toBe("Assistant: connecting…");
		expect(statusText(connected)).toBe("Assistant: connected");
		expect(statusText({ ...connected, pending: 18796, done: 1204, total: 20000 })).toBe("Assistant: indexing 1,204 / 20,000 notes");
		expect(statusText({ ...connected, pending: 1, done: 0, total: 1 })).toBe("Assistant: indexing 0 / 1 note");
		expect(statusText({ ...connected, pending: 1, done: 0, total: 0 })).toBe("Assistant: listing the vault's notes…");
		const down = { status: "disconnected" as const, reason: "The server refused the token.", retryInMs: 500 };
		expect(statusText(down)).toBe("Assistant: disconnected");
		expect(statusTitle(down)).toBe("The server refused the token.");
		expect(statusTitle({ ...connected, notes: 1 })).toBe("Connected to the assistant server for Notes (1 note indexed).");
	});

	it("counts with plurals and thousands separators", () => {
		expect([count(0, "note"), count(1, "note"), count(2, "note"), count(20000, "note")]).toEqual([
			"0 notes",
			"1 note",
			"2 notes",
			"20,000 notes",
		]);
	});

	it("follows the embedding job from index/progress", () => {
		const progress = { phase: "embedding" as const, done: 1200, total: 30000, model: "ollama:nomic-embed-text" };
		expect(statusText(connected, progress)).toBe("Assistant: embedding 1,200/30,000 passages");
		expect(statusText(connected, { ...progress, phase: "confirm" })).toBe("Assistant: embedding waits for your approval");
		expect(statusText(connected, { ...progress, phase: "ready" })).toBe("Assistant: connected");
	});

	it("with the install card shown, says the server is not installed rather than disconnected", () => {
		const off = { status: "disconnected" as const, reason: "x", retryInMs: 500 };
		expect(statusText(off)).toBe("Assistant: disconnected");
		expect(statusText(off, null, false, true)).toBe("Assistant: not installed");
	});
});

describe("the panel's indexing line", () => {
	const connected = { status: "connected" as const, vault: "v", notes: 1204, pending: 18796, done: 1204, total: 20000, chat: true };

	it("says how far indexing is while search is partial, and nothing once whole", () => {
		expect(indexingLine(connected, null)).toBe("Indexing 1,204 of 20,000 notes; search uses what is indexed.");
		expect(indexingLine({ ...connected, pending: 0 }, null)).toBeNull();
		const embedding = { phase: "embedding" as const, done: 300, total: 1200, model: "m" };
		expect(indexingLine({ ...connected, pending: 0 }, embedding)).toBe("Preparing search by meaning (25 %); search by words works meanwhile.");
		expect(indexingLine({ status: "connecting" }, embedding)).toBeNull();
	});
});
