// A note's first lines as a reader sees them (issue 39's related-notes rows): Markdown's marks
// taken away — front matter, the title heading, list and quote markers, emphasis, code ticks,
// embeds, comments, table rules — and links shown by their text, table cells split by " · ".

const MAX_LINES = 4;
const MAX_CHARS = 300;

/** One line of Markdown as plain text ("" for a line that shows nothing). */
function plainLine(line: string): string {
	if (/^\s*\|?[\s:|-]*-[\s:|-]*$/.test(line) && line.includes("|")) return ""; // a table's |---|---|
	return line
		.replace(/^\s*\|(.*)\|\s*$/, (_all, cells: string) => cells.split("|").map((cell) => cell.trim()).join(" · "))
		.replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+(\[.\]\s+)?|\d+[.)]\s+)/, "")
		.replace(/!\[\[[^\]]*\]\]|!\[[^\]]*\]\([^)]*\)/g, "")
		.replace(/\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]/g, (_all, target: string, alias?: string) => alias ?? target)
		.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
		.replace(/(\*\*|__|~~|==)(.+?)\1/g, "$2")
		.replace(/(^|[^\w*])[*_]([^*_\s](?:[^*_]*[^*_\s])?)[*_](?![\w*])/g, "$1$2")
		.replace(/`+([^`]*)`+/g, "$1")
		.replace(/<[^>]+>/g, "")
		.trim();
}

/** The first lines of `markdown` as plain text, one per line; a first heading that only repeats
 * `title` is left out. */
export function previewText(markdown: string, title = ""): string {
	const body = markdown.replace(/^---\r?\n[\s\S]*?\r?\n---(\r?\n|$)/, "").replace(/%%[\s\S]*?%%/g, "");
	const lines: string[] = [];
	let fenced = false;
	let chars = 0;
	for (const raw of body.split(/\r?\n/)) {
		if (/^\s*(```|~~~)/.test(raw)) {
			fenced = !fenced;
			continue;
		}
		const line = fenced ? raw.trim() : plainLine(raw);
		if (!line || (lines.length === 0 && /^#\s/.test(raw) && line.toLowerCase() === title.toLowerCase())) continue;
		lines.push(line);
		chars += line.length;
		if (lines.length >= MAX_LINES || chars >= MAX_CHARS) break;
	}
	const text = lines.join("\n");
	return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS - 1).trimEnd()}…` : text;
}
