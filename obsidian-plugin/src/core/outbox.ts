// Messages typed while the plugin reconnects: the input stays enabled, a message sent meanwhile
// waits here and goes out, in order, once the connection is back. When the server is gone and no
// reconnect is under way, the input is disabled and says why.
import type { ConnectionState } from "./client";

export interface InputState {
	enabled: boolean;
	/** Why the input is disabled, or what happens to a message sent now; null when connected. */
	reason: string | null;
	/** A message sent now waits for the connection. */
	queues: boolean;
}

export function inputState(state: ConnectionState): InputState {
	if (state.status === "connected") return { enabled: true, reason: null, queues: false };
	if (state.status === "connecting" || state.retryInMs !== null) {
		return { enabled: true, reason: "Reconnecting: a message sent now goes out once the server is back.", queues: true };
	}
	return { enabled: false, reason: state.reason, queues: false };
}

export class Outbox<T> {
	private readonly waiting: T[] = [];

	get size(): number {
		return this.waiting.length;
	}

	/** Keep a message until the connection is back. */
	push(item: T): void {
		this.waiting.push(item);
	}

	/** Everything waiting, oldest first; the outbox is empty afterwards. */
	take(): T[] {
		return this.waiting.splice(0);
	}

	/** Send every waiting message in order, one after the other; one that fails stays first. */
	async flush(send: (item: T) => Promise<void>): Promise<void> {
		while (this.waiting.length > 0) {
			const item = this.waiting[0] as T;
			await send(item);
			this.waiting.shift();
		}
	}
}
