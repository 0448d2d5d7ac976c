// Reviewable writes: each change a tool/confirm carries ({path, before, after}, computed by the
// server) split into hunks diffed with no context lines, so every edit, and every separate hunk
// of one edit, can be kept or dropped on its own; the text the kept hunks make; and the answer.
// Nothing here knows a tool's name: the review is built from the change alone.

/** One file a write changes: its text now ("" or null for a new note) and after the write. */
export interface FileChange {
	path: string;
	before?: string | null;
	after: string;
}

/** A run of changed lines: `removed` replaced by `added`, starting at old line `oldStart` (0-based). */
export interface Hunk {
	oldStart: number;
	removed: string[];
	added: string[];
}

/** Above this many line pairs the middle of a change is one hunk (the diff is quadratic). */
const MAX_CELLS = 4_000_000;

/** A text's lines, each with its line break kept (the last may have none). */
export function splitLines(text: string): string[] {
	const lines: string[] = [];
	let start = 0;
	for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
		lines.push(text.slice(start, end + 1));
		start = end + 1;
	}
	if (start < text.length) lines.push(text.slice(start));
	return lines;
}

/** The hunks that turn `before` into `after`: a longest-common-subsequence line diff, zero context. */
export function diffHunks(before: string, after: string): Hunk[] {
	const a = splitLines(before);
	const b = splitLines(after);
	let head = 0;
	while (head < a.length && head < b.length && a[head] === b[head]) head++;
	let tail = 0;
	while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
	const oldMid = a.slice(head, a.length - tail);
	const newMid = b.slice(head, b.length - tail);
	if (oldMid.length === 0 && newMid.length === 0) return [];
	if (oldMid.length * newMid.length > MAX_CELLS) return [{ oldStart: head, removed: oldMid, added: newMid }];
	return middleHunks(oldMid, newMid).map((hunk) => ({ ...hunk, oldStart: hunk.oldStart + head }));
}

function middleHunks(a: string[], b: string[]): Hunk[] {
	const n = a.length;
	const m = b.length;
	const width = m + 1;
	// lcs[i * width + j]: length of the common subsequence of a[i..] and b[j..].
	const lcs = new Uint32Array((n + 1) * width);
	for (let i = n - 1; i >= 0; i--) {
		for (let j = m - 1; j >= 0; j--) {
			lcs[i * width + j] =
				a[i] === b[j] ? (lcs[(i + 1) * width + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * width + j] ?? 0, lcs[i * width + j + 1] ?? 0);
		}
	}
	const hunks: Hunk[] = [];
	let current: Hunk | null = null;
	let i = 0;
	let j = 0;
	while (i < n || j < m) {
		if (i < n && j < m && a[i] === b[j]) {
			current = null;
			i++;
			j++;
			continue;
		}
		if (!current) {
			current = { oldStart: i, removed: [], added: [] };
			hunks.push(current);
		}
		if (j >= m || (i < n && (lcs[(i + 1) * width + j] ?? 0) >= (lcs[i * width + j + 1] ?? 0))) {
			current.removed.push(a[i] ?? "");
			i++;
		} else {
			current.added.push(b[j] ?? "");
			j++;
		}
	}
	return hunks;
}

/** `before` with the kept hunks applied (a dropped hunk leaves its lines as they were). */
export function applyHunks(before: string, hunks: Hunk[], keep: boolean[]): string {
	const lines = splitLines(before);
	const out: string[] = [];
	let next = 0;
	hunks.forEach((hunk, i) => {
		out.push(...lines.slice(next, hunk.oldStart));
		out.push(...(keep[i] ? hunk.added : hunk.removed));
		next = hunk.oldStart + hunk.removed.length;
	});
	out.push(...lines.slice(next));
	return out.join("");
}

/** One change as the review shows it: its path, its hunks, whether the note is new. */
export interface ReviewedChange {
	path: string;
	before: string;
	created: boolean;
	hunks: Hunk[];
}

export function reviewOf(changes: FileChange[]): ReviewedChange[] {
	return changes.map((change) => {
		const before = change.before ?? "";
		return { path: change.path, before, created: change.before === null || change.before === undefined, hunks: diffHunks(before, change.after) };
	});
}

export type Review =
	| { approved: false }
	| { approved: true; changes?: { path: string; after: string }[] };

/**
 * The tool/confirm answer for the kept hunks (`keep[c][h]`: hunk h of change c): every hunk kept
 * approves the call as asked, none kept denies it, some kept approves it with the exact text of
 * each changed note (the server writes that after checking the note is still `before`).
 */
export function reviewAnswer(changes: ReviewedChange[], keep: boolean[][]): Review {
	const all = changes.every((change, c) => change.hunks.every((_, h) => keep[c]?.[h] === true));
	if (all) return { approved: true };
	const any = changes.some((change, c) => change.hunks.some((_, h) => keep[c]?.[h] === true));
	if (!any) return { approved: false };
	return {
		approved: true,
		changes: changes.map((change, c) => ({ path: change.path, after: applyHunks(change.before, change.hunks, keep[c] ?? []) })),
	};
}

/** Every line of a change in order, unchanged ones too, for a preview of the whole text. */
export function diffRows(before: string, after: string): { kind: " " | "-" | "+"; text: string }[] {
	const lines = splitLines(before);
	const rows: { kind: " " | "-" | "+"; text: string }[] = [];
	let next = 0;
	const plain = (line: string): string => line.replace(/\n$/, "");
	for (const hunk of diffHunks(before, after)) {
		for (const line of lines.slice(next, hunk.oldStart)) rows.push({ kind: " ", text: plain(line) });
		for (const line of hunk.removed) rows.push({ kind: "-", text: plain(line) });
		for (const line of hunk.added) rows.push({ kind: "+", text: plain(line) });
		next = hunk.oldStart + hunk.removed.length;
	}
	for (const line of lines.slice(next)) rows.push({ kind: " ", text: plain(line) });
	return rows;
}
