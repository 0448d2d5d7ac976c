import { describe, expect, it } from "vitest";
import { Backoff } from "../../src/core/backoff";

describe("Backoff", () => {
	it("doubles up to the cap, with jitter between half and all of each step", () => {
		const low = new Backoff({ baseMs: 100, maxMs: 1000, random: () => 0 });
		expect([1, 2, 3, 4, 5, 6].map(() => low.next())).toEqual([50, 100, 200, 400, 500, 500]);
		const high = new Backoff({ baseMs: 100, maxMs: 1000, random: () => 1 });
		expect([1, 2, 3, 4, 5].map(() => high.next())).toEqual([100, 200, 400, 800, 1000]);
	});

	it("starts over after reset", () => {
		const backoff = new Backoff({ baseMs: 100, maxMs: 1000, random: () => 1 });
		backoff.next();
		backoff.next();
		backoff.reset();
		expect(backoff.next()).toBe(100);
	});
});
