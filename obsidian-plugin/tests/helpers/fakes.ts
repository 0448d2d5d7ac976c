// A scripted socket and a manual clock for testing the client without a server.
import type { SocketLike, Timers } from "../../src/core/client";
import { serverProof } from "../../src/core/proof";

export class FakeSocket implements SocketLike {
	readyState = 0;
	sent: Record<string, unknown>[] = [];
	closedWith: number | null = null;
	onopen: ((event: Event) => void) | null = null;
	onmessage: ((event: MessageEvent) => void) | null = null;
	onclose: ((event: CloseEvent) => void) | null = null;
	onerror: ((event: Event) => void) | null = null;

	constructor(
		readonly url: string,
		readonly protocols?: string[],
	) {}

	send(data: string): void {
		this.sent.push(JSON.parse(data) as Record<string, unknown>);
	}

	close(code = 1000, reason = ""): void {
		this.closedWith = code;
		this.serverClose(code, reason);
	}

	open(): void {
		this.readyState = 1;
		this.onopen?.({} as Event);
	}

	/** Send the server proof for the nonce in this socket's URL, as a server knowing `token` does,
	 * and wait until the client has checked it. */
	async prove(token: string): Promise<void> {
		const nonce = new URL(this.url).searchParams.get("nonce") ?? "";
		const sentBefore = this.sent.length;
		this.receive({ method: "$/serverProof", params: { proof: await serverProof(token, nonce) } });
		// The check is asynchronous (Web Crypto): wait until the client answered it.
		for (let i = 0; i < 400 && this.sent.length === sentBefore && this.closedWith === null; i++) {
			await new Promise((resolve) => setTimeout(resolve, 5));
		}
		await settle();
	}

	receive(message: object): void {
		this.onmessage?.({ data: JSON.stringify({ jsonrpc: "2.0", ...message }) } as MessageEvent);
	}

	serverClose(code: number, reason = ""): void {
		if (this.readyState === 3) return;
		this.readyState = 3;
		this.onclose?.({ code, reason } as CloseEvent);
	}

	/** The last request with this method that was sent. */
	last(method: string): { id: number; params: Record<string, unknown> } {
		const found = [...this.sent].reverse().find((m) => m.method === method);
		if (!found) throw new Error(`no ${method} sent`);
		return found as unknown as { id: number; params: Record<string, unknown> };
	}
}

export class ManualClock implements Timers {
	private time = 0;
	private nextHandle = 1;
	private tasks = new Map<number, { at: number; callback: () => void }>();

	setTimeout(callback: () => void, ms: number): number {
		const handle = this.nextHandle++;
		this.tasks.set(handle, { at: this.time + ms, callback });
		return handle;
	}

	clearTimeout(handle: number): void {
		this.tasks.delete(handle);
	}

	now(): number {
		return this.time;
	}

	/** Move time forward, running what falls due, in order. */
	advance(ms: number): void {
		const end = this.time + ms;
		for (;;) {
			const due = [...this.tasks.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
			if (!due) break;
			this.tasks.delete(due[0]);
			this.time = Math.max(this.time, due[1].at);
			due[1].callback();
		}
		this.time = end;
	}

	/** Jump the clock without running anything (the machine slept). */
	jump(ms: number): void {
		this.time += ms;
	}

	get pendingDelays(): number[] {
		return [...this.tasks.values()].map((t) => t.at - this.time);
	}
}

/** Let pending promise callbacks run. */
export async function settle(): Promise<void> {
	for (let i = 0; i < 10; i++) await Promise.resolve();
}
