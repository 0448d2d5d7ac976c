import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { applyChanges, planApply, sha256Hex } from "../../src/core/apply";

const BEFORE = "# Plan\n\nStep 1.\nStep 2.\nStep 3.\nStep 4.\nStep 5.\n";
const AFTER = BEFORE.replace("Step 4.", "Step four.");

describe("writes through Obsidian (note/apply)", () => {
	it("a note open nowhere is written by the server", () => {
		expect(planApply({ kind: "closed" }, "Plan.md", BEFORE, AFTER)).toEqual({ kind: "server" });
	});

	it("an open note that is still what was reviewed gets the write", () => {
		for (const kind of ["editor", "file"] as const) {
			const plan = planApply({ kind, text: BEFORE }, "Plan.md", BEFORE, AFTER);
			expect(plan.kind).toBe("apply");
			if (plan.kind === "apply") {
				expect(plan.text).toBe(AFTER);
				expect(applyChanges(BEFORE, plan.changes)).toBe(AFTER);
				expect(plan.changes).toHaveLength(1);
			}
		}
	});

	it("unsaved typing elsewhere in the editor survives beside the write", () => {
		const typed = BEFORE.replace("Step 1.", "Step 1. Call Anna first.");
		const plan = planApply({ kind: "editor", text: typed }, "Plan.md", BEFORE, AFTER);
		expect(plan).toMatchObject({ kind: "apply", text: typed.replace("Step 4.", "Step four.") });
		const below = BEFORE + "A line typed at the end.\n";
		expect(planApply({ kind: "editor", text: below }, "Plan.md", BEFORE, AFTER)).toMatchObject({
			kind: "apply",
			text: AFTER + "A line typed at the end.\n",
		});
	});

	it("typing on the lines the write changes is a conflict, and nothing is applied", () => {
		const typed = BEFORE.replace("Step 4.", "Step 4 (soon).");
		const plan = planApply({ kind: "editor", text: typed }, "Plan.md", BEFORE, AFTER);
		expect(plan.kind).toBe("conflict");
		if (plan.kind === "conflict") expect(plan.message).toContain("Plan.md");
	});

	it("a note open in another view that changed since the review is a conflict (stale)", () => {
		const stale = BEFORE.replace("Step 1.", "Step one.");
		expect(planApply({ kind: "file", text: stale }, "Plan.md", BEFORE, AFTER).kind).toBe("conflict");
	});

	it("hashes text as the server hashes a note's UTF-8 bytes", async () => {
		const text = "Grüße ✓\n";
		expect(await sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
	});
});
