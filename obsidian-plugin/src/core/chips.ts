// The context of the next message as chips above the input: @-mentioned notes, folders and tags,
// what a command added, and the active note (or its selection) while the toggle is on. Each chip
// can be removed; removing the active note's chip leaves it out of the next message only.
import type { ChatSendParams } from "./protocol";

export type ContextItem = NonNullable<ChatSendParams["context"]>[number];

export interface Chip {
	key: string;
	label: string;
	item: ContextItem;
	/** The active note's chip (follows the editor) rather than one the user added. */
	active: boolean;
}

/** Files other than notes that go along as themselves: images (to a model that sees) and PDFs. */
export const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(["png", "jpg", "jpeg", "gif", "webp"]);
export const ATTACHMENT_EXTENSIONS: ReadonlySet<string> = new Set([...IMAGE_EXTENSIONS, "pdf"]);

export function extensionOf(path: string): string {
	const name = path.split("/").pop() ?? path;
	const dot = name.lastIndexOf(".");
	return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

export function isImagePath(path: string): boolean {
	return IMAGE_EXTENSIONS.has(extensionOf(path));
}

export function isAttachmentPath(path: string): boolean {
	return ATTACHMENT_EXTENSIONS.has(extensionOf(path));
}

/**
 * The vault path a drag from Obsidian carries in its text: `obsidian://open?vault=V&file=F`
 * (the file explorer), `[[F]]` or `![[F]]` (a link); null for anything else.
 */
export function vaultPathFromDrag(text: string): string | null {
	const line = text.trim().split("\n")[0]?.trim() ?? "";
	if (line.startsWith("obsidian://")) {
		try {
			return new URL(line).searchParams.get("file");
		} catch {
			return null;
		}
	}
	const link = /^!?\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]$/.exec(line);
	return link?.[1]?.trim() ?? null;
}

export function keyOf(item: ContextItem): string {
	if ("note" in item) return `note:${item.note}${item.selection ? ":selection" : ""}`;
	if ("folder" in item) return `folder:${item.folder}`;
	return `tag:${item.tag}`;
}

export function labelOf(item: ContextItem): string {
	if ("note" in item) {
		const name = item.note.replace(/\.md$/, "").split("/").pop() ?? item.note;
		return item.selection ? `Selection in ${name}` : name;
	}
	if ("folder" in item) return `${item.folder}/`;
	return item.tag.startsWith("#") ? item.tag : `#${item.tag}`;
}

/** `items` with `item` added once (the same note, folder or tag twice is one chip). */
export function withItem(items: ContextItem[], item: ContextItem): ContextItem[] {
	const key = keyOf(item);
	return items.some((i) => keyOf(i) === key) ? items : [...items, item];
}

export function withoutKey(items: ContextItem[], key: string): ContextItem[] {
	return items.filter((item) => keyOf(item) !== key);
}

/**
 * The chips to show: the added items, then the active note's when the toggle is on, it was not
 * removed for this message, and it is not already there.
 */
export function chipsFor(items: ContextItem[], active: ContextItem | null, includeActive: boolean): Chip[] {
	const chips = items.map((item) => ({ key: keyOf(item), label: labelOf(item), item, active: false }));
	if (active && includeActive && !items.some((item) => "note" in item && "note" in active && item.note === active.note)) {
		chips.push({ key: keyOf(active), label: labelOf(active), item: active, active: true });
	}
	return chips;
}

/** Three example prompts for an empty conversation, built from the vault. */
export interface Example {
	text: string;
	context: ContextItem[];
}

export function examplePrompts(vault: { recent: string | null; folder: string | null; tag: string | null }): Example[] {
	const examples: Example[] = [];
	if (vault.recent) {
		const name = vault.recent.replace(/\.md$/, "").split("/").pop() ?? vault.recent;
		examples.push({ text: `Summarize ${name} in three bullet points`, context: [{ note: vault.recent }] });
	}
	if (vault.folder) examples.push({ text: `What are the open questions in ${vault.folder}?`, context: [{ folder: vault.folder }] });
	if (vault.tag) {
		const tag = vault.tag.replace(/^#/, "");
		examples.push({ text: `What do my notes tagged #${tag} have in common?`, context: [{ tag }] });
	}
	if (examples.length < 3) examples.push({ text: "Which of my notes mention a deadline?", context: [] });
	return examples.slice(0, 3);
}
