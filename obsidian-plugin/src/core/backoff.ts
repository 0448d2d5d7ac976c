// Reconnect delays: exponential with jitter (half to all of the step), capped, reset once connected.

export interface BackoffOptions {
	baseMs: number;
	maxMs: number;
	random?: () => number;
}

export class Backoff {
	private attempt = 0;
	private readonly random: () => number;

	constructor(private readonly options: BackoffOptions = { baseMs: 500, maxMs: 30_000 }) {
		this.random = options.random ?? Math.random;
	}

	/** The wait before the next attempt: a random share of base × 2^attempt, at most maxMs. */
	next(): number {
		const ceiling = Math.min(this.options.maxMs, this.options.baseMs * 2 ** this.attempt);
		this.attempt += 1;
		return Math.round(ceiling * (0.5 + this.random() / 2));
	}

	reset(): void {
		this.attempt = 0;
	}

	get attempts(): number {
		return this.attempt;
	}
}
