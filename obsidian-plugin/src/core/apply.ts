// Writes through Obsidian (the server's note/apply request): what a write the server wants to make
// does to a note that is open in Obsidian. Free of Obsidian: the adapter (ui/write-through.ts)
// says where the note is open and carries the outcome out through the editor or vault.process.
import { diffHunks, splitLines } from "./diff";

/** Where the note is open: in an editor (its text, saved or not), in another view, or nowhere. */
export type OpenNote =
	| { kind: "editor"; text: string }
	| { kind: "file"; text: string }
	| { kind: "closed" };

/** A replacement of the characters [from, to) of the current text. */
export interface TextChange {
	from: number;
	to: number;
	text: string;
}

export type ApplyPlan =
	/** The note is not open: the server writes it itself ({applied: false}). */
	| { kind: "server" }
	/** Apply these changes to the current text; `text` is the result. */
	| { kind: "apply"; changes: TextChange[]; text: string }
	/** The note no longer matches what was reviewed, and the write cannot go in beside the
	 * user's changes: nothing is written (error -32022). */
	| { kind: "conflict"; message: string };

/**
 * What to do with a write of `before` → `after` to a note open as `open`.
 *
 * An editor may hold unsaved typing: the write's hunks go in beside it when none of them touches
 * the lines the user changed, else it is a conflict. A note open elsewhere must still be `before`.
 */
export function planApply(open: OpenNote, path: string, before: string, after: string): ApplyPlan {
	if (open.kind === "closed") return { kind: "server" };
	const current = open.text;
	if (current === before) return { kind: "apply", changes: wholeChanges(before, after), text: after };
	const conflict = {
		kind: "conflict" as const,
		message: `${path} has changes in Obsidian that overlap this write, so nothing was written: read it again and redo the change.`,
	};
	if (open.kind !== "editor") return conflict;
	const user = changedRange(before, current);
	const changes: TextChange[] = [];
	for (const change of wholeChanges(before, after)) {
		// Touching or overlapping the user's range is a conflict; an insertion exactly at its edge too.
		if (change.to < user.from || change.from > user.to) {
			const shift = change.from > user.to ? user.delta : 0;
			changes.push({ from: change.from + shift, to: change.to + shift, text: change.text });
		} else {
			return conflict;
		}
	}
	return { kind: "apply", changes, text: applyChanges(current, changes) };
}

/** The write as character changes of `before`, one per line hunk. */
function wholeChanges(before: string, after: string): TextChange[] {
	const lines = splitLines(before);
	const starts: number[] = [];
	let offset = 0;
	for (const line of lines) {
		starts.push(offset);
		offset += line.length;
	}
	starts.push(offset);
	return diffHunks(before, after).map((hunk) => {
		const from = starts[hunk.oldStart] ?? offset;
		const to = starts[hunk.oldStart + hunk.removed.length] ?? offset;
		return { from, to, text: hunk.added.join("") };
	});
}

/** The characters of `before` the user changed to get `current`, and the length change. */
function changedRange(before: string, current: string): { from: number; to: number; delta: number } {
	let head = 0;
	const max = Math.min(before.length, current.length);
	while (head < max && before[head] === current[head]) head++;
	let tail = 0;
	while (tail < max - head && before[before.length - 1 - tail] === current[current.length - 1 - tail]) tail++;
	return { from: head, to: before.length - tail, delta: current.length - before.length };
}

/** `text` with non-overlapping changes (given in order) applied. */
export function applyChanges(text: string, changes: TextChange[]): string {
	let out = "";
	let next = 0;
	for (const change of changes) {
		out += text.slice(next, change.from) + change.text;
		next = change.to;
	}
	return out + text.slice(next);
}

/** The sha256 hex of a text's UTF-8 bytes, as the server hashes notes. */
export async function sha256Hex(text: string): Promise<string> {
	const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
	return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
