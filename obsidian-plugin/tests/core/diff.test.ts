import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { applyHunks, parseHunks, reviewAnswer } from "../../src/core/diff";
import { PYTHON, REPO_ROOT } from "../helpers/node";

const OLD = Array.from({ length: 20 }, (_, i) => `Step ${i + 1}.\n`).join("");
const NEW = OLD.replace("Step 2.\n", "Step two.\n").replace("Step 19.\n", "Step nineteen.\n");

/** The server's own diff (plugin_bridge.vault.notes.encoding.unified_diff), so the parser reads the real format. */
function serverDiff(old: string | null, next: string): string {
	const code = "import json,sys; from plugin_bridge.vault.notes.encoding import unified_diff as d; a=json.load(sys.stdin); print(d('Plan.md', a[0], a[1]), end='')";
	return execFileSync(PYTHON, ["-c", code], { cwd: REPO_ROOT, input: JSON.stringify([old, next]), encoding: "utf8" });
}

describe("diff hunks", () => {
	it("splits the server's diff into hunks and applies all of them to give the new text", () => {
		const hunks = parseHunks(serverDiff(OLD, NEW));
		expect(hunks).toHaveLength(2);
		expect(applyHunks(OLD, hunks, [true, true])).toBe(NEW);
		expect(applyHunks(OLD, hunks, [false, false])).toBe(OLD);
	});

	it("a dropped hunk leaves its lines as they were", () => {
		const hunks = parseHunks(serverDiff(OLD, NEW));
		expect(applyHunks(OLD, hunks, [true, false])).toBe(OLD.replace("Step 2.\n", "Step two.\n"));
		expect(applyHunks(OLD, hunks, [false, true])).toBe(OLD.replace("Step 19.\n", "Step nineteen.\n"));
	});

	it("keeps a last line without a line break exactly", () => {
		const old = "a\nb";
		const next = "a\nb\nc";
		const hunks = parseHunks(serverDiff(old, next));
		expect(applyHunks(old, hunks, [true])).toBe(next);
	});

	it("a new note's diff rebuilds its content", () => {
		const content = "# Kites\n\nKites fly.\n";
		expect(applyHunks("", parseHunks(serverDiff(null, content)), [true])).toBe(content);
	});
});

describe("review answers", () => {
	const edits = [
		{ old_text: "Step 2.", new_text: "Step two." },
		{ old_text: "Step 19.", new_text: "Step nineteen." },
	];

	it("all hunks kept approves as asked; none kept denies", () => {
		const hunks = parseHunks(serverDiff(OLD, NEW));
		expect(reviewAnswer("edit_note", { path: "Plan.md", edits }, hunks, [true, true], OLD)).toEqual({ approved: true });
		expect(reviewAnswer("edit_note", { path: "Plan.md", edits }, hunks, [false, false], OLD)).toEqual({ approved: false });
	});

	it("an edit with one hunk dropped becomes edits that write exactly the kept hunk", () => {
		const hunks = parseHunks(serverDiff(OLD, NEW));
		const review = reviewAnswer("edit_note", { path: "Plan.md", edits }, hunks, [true, false], OLD);
		expect(review.approved).toBe(true);
		if (!review.approved || !review.arguments) throw new Error("expected arguments");
		let text = OLD;
		for (const edit of review.arguments.edits as { old_text: string; new_text: string }[]) {
			expect(text.split(edit.old_text)).toHaveLength(2);
			text = text.replace(edit.old_text, edit.new_text);
		}
		expect(text).toBe(OLD.replace("Step 2.\n", "Step two.\n"));
	});

	it("a created note keeps only the kept hunks in its content", () => {
		const lines = Array.from({ length: 30 }, (_, i) => `line ${i}\n`).join("");
		const old = lines;
		const next = lines.replace("line 1\n", "line one\n").replace("line 28\n", "line twenty-eight\n");
		const hunks = parseHunks(serverDiff(old, next));
		const review = reviewAnswer("create_note", { path: "x.md", content: next }, hunks, [false, true], old);
		expect(review).toEqual({ approved: true, arguments: { path: "x.md", content: old.replace("line 28\n", "line twenty-eight\n") } });
	});

	it("an unknown tool is never approved with rebuilt arguments", () => {
		const hunks = parseHunks(serverDiff(OLD, NEW));
		expect(reviewAnswer("delete_everything", {}, hunks, [true, false], OLD)).toEqual({ approved: false });
	});
});
