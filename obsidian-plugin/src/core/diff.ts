// Reviewable writes: the unified diff of a tool/confirm preview split into hunks, the note's new
// text from the hunks the user kept, and the tool arguments that write exactly that.

export interface DiffLine {
	kind: " " | "-" | "+";
	text: string;
	/** False for a last line followed by "\ No newline at end of file". */
	newline: boolean;
}

export interface Hunk {
	header: string;
	oldStart: number;
	oldCount: number;
	lines: DiffLine[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** The hunks of a unified diff (file headers are skipped). */
export function parseHunks(diff: string): Hunk[] {
	const hunks: Hunk[] = [];
	const rows = diff.split("\n");
	if (rows[rows.length - 1] === "") rows.pop();
	let current: Hunk | null = null;
	for (const row of rows) {
		const header = HUNK_HEADER.exec(row);
		if (header) {
			current = {
				header: row,
				oldStart: Number(header[1]),
				oldCount: header[2] === undefined ? 1 : Number(header[2]),
				lines: [],
			};
			hunks.push(current);
		} else if (current && row.startsWith("\\")) {
			const last = current.lines[current.lines.length - 1];
			if (last) last.newline = false;
		} else if (current && (row.startsWith(" ") || row.startsWith("-") || row.startsWith("+"))) {
			current.lines.push({ kind: row.charAt(0) as DiffLine["kind"], text: row.slice(1), newline: true });
		}
	}
	return hunks;
}

/** Lines with their line breaks kept. */
function splitLines(text: string): string[] {
	const lines: string[] = [];
	let start = 0;
	for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
		lines.push(text.slice(start, end + 1));
		start = end + 1;
	}
	if (start < text.length) lines.push(text.slice(start));
	return lines;
}

function joinSide(lines: DiffLine[], keep: (line: DiffLine) => boolean): string {
	return lines
		.filter(keep)
		.map((line) => line.text + (line.newline ? "\n" : ""))
		.join("");
}

/** The old side and the new side of one hunk, as text. */
export function hunkSides(hunk: Hunk): { before: string; after: string } {
	return {
		before: joinSide(hunk.lines, (l) => l.kind !== "+"),
		after: joinSide(hunk.lines, (l) => l.kind !== "-"),
	};
}

/** `old` with the kept hunks applied (a dropped hunk leaves its lines as they were). */
export function applyHunks(old: string, hunks: Hunk[], keep: boolean[]): string {
	const lines = splitLines(old.replace(/\r\n/g, "\n"));
	const out: string[] = [];
	let next = 0; // index in lines of the next line not yet copied
	hunks.forEach((hunk, i) => {
		const start = hunk.oldCount === 0 ? hunk.oldStart : hunk.oldStart - 1;
		out.push(...lines.slice(next, start));
		const { before, after } = hunkSides(hunk);
		out.push(keep[i] ? after : before);
		next = start + hunk.oldCount;
	});
	out.push(...lines.slice(next));
	return out.join("");
}

export type Review =
	| { approved: false }
	| { approved: true; arguments?: Record<string, unknown> };

/**
 * The tool/confirm answer for the kept hunks: every hunk kept approves the call as asked, none
 * kept denies it, some kept approves it with arguments that write exactly those hunks.
 * `old` is the note's current text ("" for a new note).
 */
export function reviewAnswer(
	tool: string,
	args: Record<string, unknown>,
	hunks: Hunk[],
	keep: boolean[],
	old: string,
): Review {
	if (keep.every(Boolean)) return { approved: true };
	if (!keep.some(Boolean)) return { approved: false };
	const text = applyHunks(old, hunks, keep);
	switch (tool) {
		case "create_note":
			return { approved: true, arguments: { ...args, content: text } };
		case "append_to_note": {
			const base = old.replace(/\r\n/g, "\n");
			const added = text.slice(base.length);
			const content = base === "" || base.endsWith("\n") ? added : added.replace(/^\n/, "");
			return { approved: true, arguments: { ...args, content } };
		}
		case "edit_note":
			return { approved: true, arguments: { ...args, edits: keptEdits(old, hunks, keep, text) } };
		default:
			return { approved: false };
	}
}

/** One edit per kept hunk when its old side is unique in the note, else one whole-note edit. */
function keptEdits(old: string, hunks: Hunk[], keep: boolean[], text: string): { old_text: string; new_text: string }[] {
	const base = old.replace(/\r\n/g, "\n");
	const edits = hunks
		.filter((_, i) => keep[i])
		.map(hunkSides)
		.map(({ before, after }) => ({ old_text: before, new_text: after }));
	const unique = edits.every(({ old_text }) => old_text !== "" && base.split(old_text).length === 2);
	return unique ? edits : [{ old_text: base, new_text: text }];
}
