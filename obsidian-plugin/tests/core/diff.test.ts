import { describe, expect, it } from "vitest";
import { applyHunks, diffHunks, diffRows, reviewAnswer, reviewOf } from "../../src/core/diff";

const PLAN = Array.from({ length: 20 }, (_, i) => `Step ${i + 1}: do thing ${i + 1}.\n`).join("");
/** Four edits about five lines apart, as the model's edit_note would make them. */
const EDITED = PLAN.replace("Step 2: do thing 2.", "Step 2: do the better thing.")
	.replace("Step 7: do thing 7.", "Step 7: skip.")
	.replace("Step 12: do thing 12.\n", "")
	.replace("Step 17: do thing 17.\n", "Step 17: do thing 17.\nStep 17b: and one more.\n");

/** Every subset of n items, as keep flags. */
function subsets(n: number): boolean[][] {
	return Array.from({ length: 2 ** n }, (_, mask) => Array.from({ length: n }, (_, i) => (mask & (1 << i)) !== 0));
}

describe("hunks with no context lines", () => {
	it("splits four close edits into four hunks", () => {
		const hunks = diffHunks(PLAN, EDITED);
		expect(hunks).toHaveLength(4);
		expect(hunks.map((h) => h.oldStart)).toEqual([1, 6, 11, 17]);
		expect(hunks[2]).toEqual({ oldStart: 11, removed: ["Step 12: do thing 12.\n"], added: [] });
		expect(hunks[3]).toEqual({ oldStart: 17, removed: [], added: ["Step 17b: and one more.\n"] });
	});

	it("splits one edit whose change falls on two separate lines into two hunks", () => {
		const before = "a\nb\nc\nd\n";
		const after = "A\nb\nc\nD\n";
		expect(diffHunks(before, after)).toEqual([
			{ oldStart: 0, removed: ["a\n"], added: ["A\n"] },
			{ oldStart: 3, removed: ["d\n"], added: ["D\n"] },
		]);
	});

	it("keeps a last line without a line break exactly, and diffs a new note as one hunk", () => {
		expect(applyHunks("a\nb", diffHunks("a\nb", "a\nb\nc"), [true])).toBe("a\nb\nc");
		expect(diffHunks("", "# Kites\n\nKites fly.\n")).toEqual([{ oldStart: 0, removed: [], added: ["# Kites\n", "\n", "Kites fly.\n"] }]);
		expect(diffHunks("same\n", "same\n")).toEqual([]);
	});

	it("every subset of kept hunks gives exactly the kept edits", () => {
		const hunks = diffHunks(PLAN, EDITED);
		const edits: [string, string][] = [
			["Step 2: do thing 2.", "Step 2: do the better thing."],
			["Step 7: do thing 7.", "Step 7: skip."],
			["Step 12: do thing 12.\n", ""],
			["Step 17: do thing 17.\n", "Step 17: do thing 17.\nStep 17b: and one more.\n"],
		];
		for (const keep of subsets(4)) {
			let expected = PLAN;
			keep.forEach((kept, i) => {
				const edit = edits[i];
				if (kept && edit) expected = expected.replace(edit[0], edit[1]);
			});
			expect(applyHunks(PLAN, hunks, keep)).toBe(expected);
		}
	});
});

describe("review answers from the changes alone", () => {
	const changes = reviewOf([{ path: "Plan.md", before: PLAN, after: EDITED }]);

	it("all kept approves as asked; none kept denies", () => {
		expect(reviewAnswer(changes, [[true, true, true, true]])).toEqual({ approved: true });
		expect(reviewAnswer(changes, [[false, false, false, false]])).toEqual({ approved: false });
	});

	it("any other subset approves with the exact text of the kept hunks", () => {
		for (const keep of subsets(4).slice(1, -1)) {
			const review = reviewAnswer(changes, [keep]);
			expect(review).toEqual({ approved: true, changes: [{ path: "Plan.md", after: applyHunks(PLAN, changes[0]!.hunks, keep) }] });
		}
	});

	it("a new note is marked created; keeping part of it keeps those lines", () => {
		const [created] = reviewOf([{ path: "Ideas/Kites.md", before: null, after: "# Kites\n\nKites fly.\n" }]);
		expect(created?.created).toBe(true);
		expect(created?.hunks).toHaveLength(1);
	});

	it("several changed notes answer one text per note", () => {
		const two = reviewOf([
			{ path: "A.md", before: "a\n", after: "A\n" },
			{ path: "B.md", before: "b\n", after: "B\n" },
		]);
		expect(reviewAnswer(two, [[true], [false]])).toEqual({
			approved: true,
			changes: [
				{ path: "A.md", after: "A\n" },
				{ path: "B.md", after: "b\n" },
			],
		});
	});
});

describe("preview rows", () => {
	it("lists unchanged, removed and added lines in order", () => {
		expect(diffRows("a\nb\nc\n", "a\nB\nc\nd")).toEqual([
			{ kind: " ", text: "a" },
			{ kind: "-", text: "b" },
			{ kind: "+", text: "B" },
			{ kind: " ", text: "c" },
			{ kind: "+", text: "d" },
		]);
	});
});
