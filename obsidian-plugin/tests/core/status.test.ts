import { describe, expect, it } from "vitest";
import { statusText, statusTitle } from "../../src/core/status";

const connected = { status: "connected" as const, vault: "Notes", notes: 12000, pending: 0 };

describe("status bar", () => {
	it("says connected, indexing N notes, or disconnected with the reason in its tooltip", () => {
		expect(statusText(connected)).toBe("Assistant: connected");
		expect(statusText({ ...connected, pending: 3500 })).toBe("Assistant: indexing 3,500 notes");
		const down = { status: "disconnected" as const, reason: "The server refused the token.", retryInMs: 500 };
		expect(statusText(down)).toBe("Assistant: disconnected");
		expect(statusTitle(down)).toBe("The server refused the token.");
	});

	it("follows the embedding job from index/progress", () => {
		const progress = { phase: "embedding" as const, done: 1200, total: 30000, model: "ollama:nomic-embed-text" };
		expect(statusText(connected, progress)).toBe("Assistant: embedding 1,200/30,000 chunks");
		expect(statusText(connected, { ...progress, phase: "confirm" })).toBe("Assistant: embedding waits for your approval");
		expect(statusText(connected, { ...progress, phase: "ready" })).toBe("Assistant: connected");
	});
});
