// What the chat input suggests: `@` offers notes, folders and tags (sent as context of the
// message), `/` at the start offers the server's custom prompts.

export type Suggestion =
	| { kind: "note"; value: string }
	| { kind: "folder"; value: string }
	| { kind: "tag"; value: string }
	| { kind: "prompt"; value: string; label: string };

export interface SuggestionSource {
	notes: string[];
	folders: string[];
	tags: string[];
	prompts: { command: string; name: string }[];
}

const LIMIT = 8;

/** What to suggest for the text before the cursor, and where the typed token starts. */
export function suggestionsFor(
	before: string,
	source: SuggestionSource,
): { start: number; items: Suggestion[] } | null {
	const slash = /^\/(\S*)$/.exec(before);
	if (slash) {
		const typed = (slash[1] ?? "").toLowerCase();
		const items: Suggestion[] = source.prompts
			.filter((p) => p.command.slice(1).toLowerCase().includes(typed))
			.slice(0, LIMIT)
			.map((p) => ({ kind: "prompt", value: p.command, label: p.name }));
		return { start: 0, items };
	}
	const at = /(?:^|\s)@([^\s@]*)$/.exec(before);
	if (!at) return null;
	const typed = (at[1] ?? "").toLowerCase();
	const start = before.length - typed.length - 1;
	const match = (value: string): boolean => value.toLowerCase().includes(typed);
	const items: Suggestion[] = [
		...source.tags.filter(match).map((value): Suggestion => ({ kind: "tag", value })),
		...source.folders.filter(match).map((value): Suggestion => ({ kind: "folder", value })),
		...source.notes.filter(match).map((value): Suggestion => ({ kind: "note", value })),
	];
	items.sort((a, b) => Number(!a.value.toLowerCase().startsWith(typed)) - Number(!b.value.toLowerCase().startsWith(typed)));
	return { start, items: items.slice(0, LIMIT) };
}

/** The text a suggestion puts in the input. */
export function insertionFor(item: Suggestion): string {
	switch (item.kind) {
		case "note":
			return `[[${item.value.replace(/\.md$/, "")}]] `;
		case "folder":
			return `${item.value}/ `;
		case "tag":
			return `${item.value} `;
		case "prompt":
			return `${item.value} `;
	}
}
