// The core client against the real Python server: streaming, cancel, a reviewed write with a
// dropped hunk, provider errors, a refused handshake and a server restart.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DisconnectedError, type Notification, type SocketLike } from "../../src/core/client";
import { reviewAnswer, reviewOf } from "../../src/core/diff";
import { diagnoseHandshake } from "../../src/core/host";
import { RpcError } from "../../src/core/rpc";
import { applyNotification, newTurn } from "../../src/core/stream";
import { testHost } from "../helpers/node";
import { clientFor, demoServer, untilConnected, type DemoServer } from "../helpers/server";

let server: DemoServer;

beforeAll(async () => {
	server = await demoServer({ delay: 0.01 });
});

afterAll(async () => {
	await server.cleanup();
});

describe("the client against the real server", () => {
	it("streams a chat answer whose deltas add up to the final text", async () => {
		const client = clientFor(server);
		client.start();
		await untilConnected(client);
		let turn = newTurn();
		const result = await client.call("chat/send", { text: "hello" }, { onNotification: (n) => (turn = applyNotification(turn, n)) });
		expect(result.text).toBe("You said: hello See [[Welcome]].");
		expect(turn.text).toBe(result.text);
		client.stop();
	});

	it("Stop cancels a long answer at once with -32800", async () => {
		const client = clientFor(server);
		client.start();
		await untilConnected(client);
		const controller = new AbortController();
		const deltas: Notification[] = [];
		const call = client.call("chat/send", { text: "slow please" }, {
			signal: controller.signal,
			onNotification: (n) => {
				deltas.push(n);
				if (deltas.length === 3) controller.abort();
			},
		});
		await expect(call).rejects.toMatchObject({ code: -32800 });
		expect(deltas.length).toBeLessThan(50);
		expect((await client.call("health", {})).status).toBe("ok");
		client.stop();
	});

	it("a reviewed edit with one hunk dropped writes exactly the kept hunk", async () => {
		const before = readFileSync(join(server.vault, "Plan.md"), "utf8");
		const client = clientFor(server, {
			onServerRequest: {
				"tool/confirm": async (request) => {
					expect(request.title).toBe("Edit Plan.md: 2 changes");
					const changes = reviewOf(request.changes ?? []);
					expect(changes[0]?.before).toBe(before);
					expect(changes[0]?.hunks).toHaveLength(2);
					return reviewAnswer(changes, [[true, false]]);
				},
			},
		});
		client.start();
		await untilConnected(client);
		let turn = newTurn();
		await client.call("chat/send", { text: "edit the plan" }, { onNotification: (n) => (turn = applyNotification(turn, n)) });
		expect(turn.tools[0]).toMatchObject({ name: "edit_note", isError: false });
		const after = readFileSync(join(server.vault, "Plan.md"), "utf8");
		expect(after).toBe(before.replace("Step 2: do thing 2.", "Step 2: do the better thing."));
		const undone = await client.call("note/undo", { path: "Plan.md" });
		expect(undone.removed).toBe(false);
		expect(readFileSync(join(server.vault, "Plan.md"), "utf8")).toBe(before);
		client.stop();
	});

	it("a provider error arrives as the server's sentence, marked retryable", async () => {
		const client = clientFor(server);
		client.start();
		await untilConnected(client);
		const error = await client.call("chat/send", { text: "fail now" }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(RpcError);
		expect((error as RpcError).code).toBe(-32010);
		expect((error as RpcError).retryable).toBe(true);
		expect((error as RpcError).message).toMatch(/overloaded/i);
		client.stop();
	});

	it("a handshake refused for its Origin is explained as a 403, not a silent drop", async () => {
		const client = clientFor(server, {
			socket: (url) => new WebSocket(url, { origin: "https://evil.example" }) as unknown as SocketLike,
			diagnose: async (endpoint) => (await diagnoseHandshake(testHost(), endpoint.url, "https://evil.example")).message,
		});
		client.start();
		const end = Date.now() + 10_000;
		while (client.connection.status !== "disconnected" && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
		const state = client.connection;
		client.stop();
		expect(state.status).toBe("disconnected");
		expect(state.status === "disconnected" && state.reason).toMatch(/refused this connection \(HTTP 403/);
		expect((await diagnoseHandshake(testHost(), server.info().url, "app://obsidian.md")).message).toMatch(/answers now/);
	});

	it("survives a server restart: calls fail with a reason, then work again on the new server", async () => {
		const client = clientFor(server);
		client.start();
		await untilConnected(client);
		const firstPid = server.info().pid;
		await server.stop();
		await expect(client.call("health", {})).rejects.toBeInstanceOf(DisconnectedError);
		await server.start();
		await untilConnected(client);
		expect(server.info().pid).not.toBe(firstPid);
		expect((await client.call("health", {})).status).toBe("ok");
		client.stop();
	});
});
