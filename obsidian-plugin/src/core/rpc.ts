// JSON-RPC 2.0 framing for the bridge, free of I/O: text frames in, events out.
// The client (client.ts) owns the socket; this module only encodes, decodes and matches ids.

export interface RpcErrorBody {
	code: number;
	message: string;
	data?: unknown;
}

/** An error answer of the server; `message` is one sentence meant for the user. */
export class RpcError extends Error {
	readonly code: number;
	readonly data: unknown;

	constructor(body: RpcErrorBody) {
		super(body.message);
		this.name = "RpcError";
		this.code = body.code;
		this.data = body.data;
	}

	/** Whether the provider said trying again later may help (-32010 with data.retryable). */
	get retryable(): boolean {
		const data = this.data as { retryable?: unknown } | undefined;
		return this.code === -32010 && data?.retryable === true;
	}
}

export type IncomingEvent =
	| { kind: "result"; id: number; result: unknown }
	| { kind: "error"; id: number | null; error: RpcError }
	| { kind: "notification"; method: string; params: Record<string, unknown> }
	| { kind: "request"; id: string | number; method: string; params: Record<string, unknown> }
	| { kind: "invalid"; reason: string };

/** Turns outgoing calls into frames and incoming frames into events. */
export class RpcCodec {
	private nextId = 1;

	/** A request frame and its id. */
	request(method: string, params: object): { id: number; frame: string } {
		const id = this.nextId++;
		return { id, frame: JSON.stringify({ jsonrpc: "2.0", id, method, params }) };
	}

	notification(method: string, params: object): string {
		return JSON.stringify({ jsonrpc: "2.0", method, params });
	}

	cancel(id: number): string {
		return this.notification("$/cancelRequest", { id });
	}

	/** The answer to a server request. */
	reply(id: string | number, result: object): string {
		return JSON.stringify({ jsonrpc: "2.0", id, result });
	}

	replyError(id: string | number, code: number, message: string): string {
		return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
	}

	/** What one text frame from the server means. */
	decode(frame: string): IncomingEvent {
		let message: unknown;
		try {
			message = JSON.parse(frame);
		} catch {
			return { kind: "invalid", reason: "the frame is not JSON" };
		}
		if (!isObject(message) || message.jsonrpc !== "2.0") {
			return { kind: "invalid", reason: "not a JSON-RPC 2.0 message" };
		}
		const { id, method } = message;
		if (typeof method === "string") {
			const params = isObject(message.params) ? message.params : {};
			if (typeof id === "string" || typeof id === "number") {
				return { kind: "request", id, method, params };
			}
			return { kind: "notification", method, params };
		}
		if (isObject(message.error)) {
			const body = message.error;
			const error = new RpcError({
				code: typeof body.code === "number" ? body.code : -32603,
				message: typeof body.message === "string" ? body.message : "The server failed.",
				data: body.data,
			});
			return { kind: "error", id: typeof id === "number" ? id : null, error };
		}
		if (typeof id === "number" && "result" in message) {
			return { kind: "result", id, result: message.result };
		}
		return { kind: "invalid", reason: "a reply without a known id" };
	}
}

export function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
