import { describe, expect, it } from "vitest";
import { RpcCodec, RpcError } from "../../src/core/rpc";

describe("RpcCodec", () => {
	it("numbers requests from 1 and frames them as JSON-RPC 2.0", () => {
		const codec = new RpcCodec();
		const first = codec.request("health", {});
		const second = codec.request("vault/search", { query: "kafka" });
		expect(first.id).toBe(1);
		expect(JSON.parse(second.frame)).toEqual({ jsonrpc: "2.0", id: 2, method: "vault/search", params: { query: "kafka" } });
	});

	it("decodes results, errors, notifications and server requests", () => {
		const codec = new RpcCodec();
		expect(codec.decode('{"jsonrpc":"2.0","id":3,"result":{"ok":1}}')).toEqual({ kind: "result", id: 3, result: { ok: 1 } });
		const error = codec.decode('{"jsonrpc":"2.0","id":4,"error":{"code":-32010,"message":"Overloaded.","data":{"retryable":true}}}');
		expect(error.kind).toBe("error");
		if (error.kind === "error") {
			expect(error.id).toBe(4);
			expect(error.error).toBeInstanceOf(RpcError);
			expect(error.error.retryable).toBe(true);
			expect(error.error.message).toBe("Overloaded.");
		}
		expect(codec.decode('{"jsonrpc":"2.0","method":"chat/delta","params":{"requestId":5,"text":"Hi"}}')).toEqual({
			kind: "notification",
			method: "chat/delta",
			params: { requestId: 5, text: "Hi" },
		});
		expect(codec.decode('{"jsonrpc":"2.0","id":"s1","method":"tool/confirm","params":{"tool":"x"}}')).toEqual({
			kind: "request",
			id: "s1",
			method: "tool/confirm",
			params: { tool: "x" },
		});
	});

	it("reports frames that are not JSON-RPC instead of throwing", () => {
		const codec = new RpcCodec();
		expect(codec.decode("not json").kind).toBe("invalid");
		expect(codec.decode("[1,2]").kind).toBe("invalid");
		expect(codec.decode('{"jsonrpc":"1.0","id":1,"result":{}}').kind).toBe("invalid");
	});

	it("frames cancellation and answers to server requests", () => {
		const codec = new RpcCodec();
		expect(JSON.parse(codec.cancel(7))).toEqual({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id: 7 } });
		expect(JSON.parse(codec.reply("s1", { approved: true }))).toEqual({ jsonrpc: "2.0", id: "s1", result: { approved: true } });
	});

	it("only a -32010 with retryable true is retryable", () => {
		expect(new RpcError({ code: -32010, message: "x", data: { retryable: false } }).retryable).toBe(false);
		expect(new RpcError({ code: -32602, message: "x", data: { retryable: true } }).retryable).toBe(false);
	});
});
