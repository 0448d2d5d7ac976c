import { describe, expect, it } from "vitest";
import { Backoff } from "../../src/core/backoff";
import { BridgeClient, DisconnectedError, NoServerError, type ConnectionState, type Notification } from "../../src/core/client";
import { RpcError } from "../../src/core/rpc";
import { FakeSocket, ManualClock, settle } from "../helpers/fakes";

function setup(options: { endpointFails?: () => boolean; diagnose?: string } = {}) {
	const clock = new ManualClock();
	const sockets: FakeSocket[] = [];
	const states: ConnectionState[] = [];
	const global: Notification[] = [];
	const client = new BridgeClient({
		socket: (url) => {
			const socket = new FakeSocket(url);
			sockets.push(socket);
			return socket;
		},
		endpoint: async () => {
			if (options.endpointFails?.()) throw new NoServerError("No server is running for this vault.");
			return { url: "ws://127.0.0.1:9", token: "secret" };
		},
		client: { name: "test", version: "0" },
		timers: clock,
		diagnose: options.diagnose ? async () => options.diagnose ?? null : undefined,
		onState: (state) => states.push(state),
		onNotification: (n) => global.push(n),
		onServerRequest: {
			"tool/confirm": async (params) => ({ approved: params.tool === "ok" }),
			"note/apply": async (params) => {
				if (params.path === "Open.md") throw new RpcError({ code: -32022, message: "Open.md has changes in Obsidian." });
				throw new Error("the editor is gone");
			},
		},
		backoff: new Backoff({ baseMs: 100, maxMs: 1000, random: () => 1 }),
		heartbeatMs: 1000,
	});
	return { clock, sockets, states, global, client };
}

async function connected(s: ReturnType<typeof setup>): Promise<FakeSocket> {
	s.client.start();
	await settle();
	const socket = s.sockets[s.sockets.length - 1];
	if (!socket) throw new Error("no socket");
	socket.open();
	await socket.prove("secret");
	const init = socket.last("initialize");
	expect(init.params.token).toBe("secret");
	socket.receive({ id: init.id, result: { protocolVersion: 1, server: { name: "s", version: "1" }, capabilities: { methods: [], chat: true }, vault: { name: "v", noteCount: 3 } } });
	await settle();
	return socket;
}

describe("BridgeClient", () => {
	it("initializes with the token and reports connected with the vault", async () => {
		const s = setup();
		await connected(s);
		expect(s.client.connection).toEqual({ status: "connected", vault: "v", notes: 3, pending: 0, done: 0, total: 0, chat: true });
	});

	it("matches replies to calls by id, whatever their order", async () => {
		const s = setup();
		const socket = await connected(s);
		const a = s.client.call("health", {});
		const b = s.client.call("vault/search", { query: "x" });
		const [ida, idb] = [socket.last("health").id, socket.last("vault/search").id];
		socket.receive({ id: idb, result: { results: [], tookMs: 1, pending: 0 } });
		socket.receive({ id: ida, result: { status: "ok" } });
		expect(await a).toEqual({ status: "ok" });
		expect(await b).toEqual({ results: [], tookMs: 1, pending: 0 });
	});

	it("routes notifications to the request named by requestId, others to the global handler", async () => {
		const s = setup();
		const socket = await connected(s);
		const seen: Notification[] = [];
		const call = s.client.call("chat/send", { text: "hi" }, { onNotification: (n) => seen.push(n) });
		const id = socket.last("chat/send").id;
		socket.receive({ method: "chat/delta", params: { requestId: id, text: "He" } });
		socket.receive({ method: "chat/delta", params: { requestId: 999, text: "other" } });
		socket.receive({ method: "budget/warning", params: { period: "day", spentUsd: 1, budgetUsd: 1.2 } });
		socket.receive({ id, result: { text: "Hello" } });
		await call;
		expect(seen.map((n) => (n.method === "chat/delta" ? n.params.text : null))).toEqual(["He"]);
		expect(s.global.map((n) => n.method)).toEqual(["chat/delta", "budget/warning"]);
	});

	it("aborting a call sends $/cancelRequest and the call ends with the server's -32800", async () => {
		const s = setup();
		const socket = await connected(s);
		const controller = new AbortController();
		const call = s.client.call("chat/send", { text: "long" }, { signal: controller.signal });
		const id = socket.last("chat/send").id;
		controller.abort();
		expect(socket.last("$/cancelRequest").params).toEqual({ id });
		socket.receive({ id, error: { code: -32800, message: "Request cancelled." } });
		await expect(call).rejects.toMatchObject({ code: -32800 });
	});

	it("answers server requests with the handler's result", async () => {
		const s = setup();
		const socket = await connected(s);
		socket.receive({ id: "s1", method: "tool/confirm", params: { tool: "ok" } });
		await settle();
		expect(socket.sent.find((m) => m.id === "s1")).toEqual({ jsonrpc: "2.0", id: "s1", result: { approved: true } });
	});

	it("a server request's conflict keeps its code (-32022); any other failure is -32603", async () => {
		const s = setup();
		const socket = await connected(s);
		socket.receive({ id: "s2", method: "note/apply", params: { path: "Open.md" } });
		socket.receive({ id: "s3", method: "note/apply", params: { path: "Other.md" } });
		await settle();
		expect(socket.sent.find((m) => m.id === "s2")).toEqual({ jsonrpc: "2.0", id: "s2", error: { code: -32022, message: "Open.md has changes in Obsidian." } });
		expect(socket.sent.find((m) => m.id === "s3")).toEqual({ jsonrpc: "2.0", id: "s3", error: { code: -32603, message: "the editor is gone" } });
	});

	it("a server request without a handler (or named after an object's own property) is answered -32603", async () => {
		const s = setup();
		const socket = await connected(s);
		socket.receive({ id: "s4", method: "settings/confirm", params: { server: "x" } });
		socket.receive({ id: "s5", method: "toString", params: {} });
		await settle();
		expect(socket.sent.find((m) => m.id === "s4")).toEqual({ jsonrpc: "2.0", id: "s4", error: { code: -32603, message: "This client does not handle settings/confirm." } });
		expect(socket.sent.find((m) => m.id === "s5")).toEqual({ jsonrpc: "2.0", id: "s5", error: { code: -32603, message: "This client does not handle toString." } });
	});

	it("fails running calls when the connection drops and reconnects with growing delays", async () => {
		const s = setup();
		const socket = await connected(s);
		const call = s.client.call("health", {});
		socket.serverClose(1001);
		await expect(call).rejects.toBeInstanceOf(DisconnectedError);
		await settle();
		expect(s.client.connection).toMatchObject({ status: "disconnected", reason: "The server stopped.", retryInMs: 100 });
		s.clock.advance(100);
		await settle();
		expect(s.sockets).toHaveLength(2);
		s.sockets[1]?.serverClose(1006);
		await settle();
		expect(s.client.connection).toMatchObject({ status: "disconnected", retryInMs: 200 });
	});

	it("a wrong token closes with a reason that says so, not a silent drop", async () => {
		const s = setup();
		s.client.start();
		await settle();
		const socket = s.sockets[0]!;
		socket.open();
		await socket.prove("secret");
		socket.receive({ id: socket.last("initialize").id, error: { code: -32001, message: "Wrong token." } });
		await settle();
		expect(socket.closedWith).toBe(4401);
		expect(s.client.connection).toMatchObject({ status: "disconnected" });
		expect((s.client.connection as { reason: string }).reason).toMatch(/refused the token/);
	});

	it("a handshake refused before opening is explained by the diagnosis (a 403, say)", async () => {
		const s = setup({ diagnose: "The server refused this connection (HTTP 403: Origin not allowed)." });
		s.client.start();
		await settle();
		s.sockets[0]!.serverClose(1006);
		await settle();
		expect(s.client.connection).toMatchObject({ status: "disconnected", reason: expect.stringContaining("403") as string });
	});

	it("with no server it says why and keeps trying", async () => {
		let missing = true;
		const s = setup({ endpointFails: () => missing });
		s.client.start();
		await settle();
		expect(s.client.connection).toMatchObject({ status: "disconnected", reason: "No server is running for this vault." });
		missing = false;
		s.clock.advance(100);
		await settle();
		expect(s.sockets).toHaveLength(1);
	});

	it("calls while disconnected fail at once with the reason", async () => {
		const s = setup({ endpointFails: () => true });
		s.client.start();
		await settle();
		await expect(s.client.call("health", {})).rejects.toThrow("No server is running for this vault.");
	});

	it("the heartbeat asks health and follows the index backlog", async () => {
		const s = setup();
		const socket = await connected(s);
		s.clock.advance(1000);
		const beat = socket.last("health");
		socket.receive({ id: beat.id, result: { status: "ok", provider: null, index: { notes: 10, pending: 40, done: 10, total: 50 } } });
		await settle();
		expect(s.client.connection).toMatchObject({ status: "connected", notes: 10, pending: 40, done: 10, total: 50, chat: false });
	});

	it("a heartbeat that is not answered drops the connection", async () => {
		const s = setup();
		const socket = await connected(s);
		s.clock.advance(1000);
		s.clock.advance(1000);
		expect(socket.closedWith).toBe(4000);
		await settle();
		expect(s.client.connection.status).toBe("disconnected");
	});

	it("waking from sleep starts a fresh connection", async () => {
		const s = setup();
		const socket = await connected(s);
		s.clock.jump(60_000);
		s.clock.advance(1000);
		expect(socket.closedWith).toBe(4000);
		await settle();
		expect(s.states).toContainEqual({ status: "disconnected", reason: "Reconnecting after sleep.", retryInMs: 100 });
	});

	it("stop closes the socket, fails calls and does not reconnect", async () => {
		const s = setup();
		const socket = await connected(s);
		const call = s.client.call("health", {});
		s.client.stop();
		await expect(call).rejects.toBeInstanceOf(DisconnectedError);
		s.clock.advance(60_000);
		expect(s.sockets).toHaveLength(1);
		expect(socket.closedWith).toBe(1000);
		expect(RpcError).toBeDefined();
	});
});
