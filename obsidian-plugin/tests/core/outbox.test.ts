import { describe, expect, it } from "vitest";
import { inputState, Outbox } from "../../src/core/outbox";

describe("the reconnect queue", () => {
	it("while reconnecting the input stays enabled and messages wait", () => {
		expect(inputState({ status: "connecting" })).toMatchObject({ enabled: true, queues: true });
		expect(inputState({ status: "disconnected", reason: "The server stopped.", retryInMs: 2000 })).toMatchObject({ enabled: true, queues: true });
		expect(inputState({ status: "connected", vault: "v", notes: 1, pending: 0, done: 0, total: 0, chat: true })).toEqual({ enabled: true, reason: null, queues: false });
	});

	it("with no reconnect under way the input is disabled with the reason", () => {
		expect(inputState({ status: "disconnected", reason: "The assistant was stopped.", retryInMs: null })).toEqual({
			enabled: false,
			reason: "The assistant was stopped.",
			queues: false,
		});
	});

	it("messages go out in order on reconnect; one that fails stays first", async () => {
		const outbox = new Outbox<string>();
		outbox.push("one");
		outbox.push("two");
		outbox.push("three");
		const sent: string[] = [];
		await expect(
			outbox.flush(async (item) => {
				if (item === "two" && !sent.includes("retry")) {
					sent.push("retry");
					throw new Error("disconnected again");
				}
				sent.push(item);
			}),
		).rejects.toThrow("disconnected again");
		expect(outbox.size).toBe(2);
		await outbox.flush(async (item) => void sent.push(item));
		expect(sent).toEqual(["one", "retry", "two", "three"]);
		expect(outbox.size).toBe(0);
	});
});
