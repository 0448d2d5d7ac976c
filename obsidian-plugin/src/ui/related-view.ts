// The related-notes side view: follows the active note and lists its nearest notes
// (vault/related): title, why it is related (shared links or tags, else its closest passage's
// heading; the score in a tooltip), its first lines as plain text, whether they already link.
// Click opens a note; dragging one into the editor inserts a [[wikilink]]. It refreshes
// (debounced) when the active note changes or is saved. With no embedder it says what to do,
// with a button to set one up.
import { ItemView, setIcon, type TAbstractFile, type WorkspaceLeaf } from "obsidian";
import type { RelatedNote } from "../core/protocol";
import type { Assistant } from "./assistant";
import { previewText } from "../core/preview";
import { closeness, relatedReason } from "../core/words";

export const RELATED_VIEW_TYPE = "ai-bridge-related";
const REFRESH_MS = 400;
const LIMIT = 12;

export class RelatedView extends ItemView {
	private listEl!: HTMLElement;
	private titleEl!: HTMLElement;
	private timer: number | null = null;
	private shown: string | null = null;
	private generation = 0;

	constructor(
		leaf: WorkspaceLeaf,
		private readonly plugin: Assistant,
	) {
		super(leaf);
	}

	override getViewType(): string {
		return RELATED_VIEW_TYPE;
	}

	override getDisplayText(): string {
		return "Related notes";
	}

	override getIcon(): string {
		return "sparkles";
	}

	override async onOpen(): Promise<void> {
		const root = this.contentEl;
		root.empty();
		root.addClass("aib-related-view");
		this.titleEl = root.createDiv({ cls: "aib-related-title" });
		this.listEl = root.createDiv({ cls: "aib-related-list" });
		this.registerEvent(this.app.workspace.on("active-leaf-change", () => this.schedule()));
		this.registerEvent(this.app.workspace.on("file-open", () => this.schedule()));
		this.registerEvent(
			this.app.vault.on("modify", (file: TAbstractFile) => {
				if (file.path === this.shown) this.schedule(true);
			}),
		);
		this.register(() => this.clearTimer());
		// One listener each for every row (rows come and go with each refresh).
		this.registerDomEvent(this.listEl, "click", (event) => {
			if (!(event.target instanceof Element)) return;
			if (event.target.closest(".aib-related-setup")) {
				this.plugin.openSetup();
				return;
			}
			const path = this.rowPath(event);
			if (path) void this.app.workspace.openLinkText(path, this.shown ?? "", event.ctrlKey || event.metaKey);
		});
		this.registerDomEvent(this.listEl, "dragstart", (event) => {
			const path = this.rowPath(event);
			if (path) event.dataTransfer?.setData("text/plain", this.wikilink(path));
		});
		this.schedule();
	}

	override async onClose(): Promise<void> {
		this.clearTimer();
	}

	/** Refresh soon (a burst of changes refreshes once); `again` refreshes the same note. */
	schedule(again = false): void {
		this.clearTimer();
		this.timer = window.setTimeout(() => {
			this.timer = null;
			void this.refresh(again);
		}, REFRESH_MS);
	}

	private clearTimer(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.timer = null;
	}

	/** Show the notes related to the active note now. */
	async refresh(again = true): Promise<void> {
		const file = this.app.workspace.getActiveFile();
		if (!file || file.extension !== "md") {
			if (!this.shown) this.showMessage("Open a note to see the notes related to it.");
			return;
		}
		if (file.path === this.shown && !again) return;
		this.shown = file.path;
		const generation = ++this.generation;
		this.titleEl.setText(`Related to ${file.basename}`);
		try {
			const related = await this.plugin.client.call("vault/related", { path: file.path, limit: LIMIT });
			if (generation !== this.generation) return;
			if (!related.ready) {
				await this.notReady();
				return;
			}
			const previews = await Promise.all(related.results.map((note) => this.preview(note)));
			if (generation !== this.generation) return;
			this.render(related.results, previews);
		} catch (error) {
			if (generation === this.generation) this.showMessage((error as Error).message);
		}
	}

	private async notReady(): Promise<void> {
		let embedder: unknown = null;
		try {
			embedder = (await this.plugin.client.call("health", {})).index.embedder;
		} catch {
			embedder = null;
		}
		if (embedder) {
			this.showMessage("Your notes are being embedded: related notes appear here when that is done.");
			return;
		}
		this.showMessage("Related notes need semantic search: choose an embedder (a local one is free).");
		this.listEl.createEl("button", { text: "Set up semantic search", cls: "mod-cta aib-related-setup" });
	}

	private showMessage(message: string): void {
		this.listEl.empty();
		this.listEl.createDiv({ cls: "aib-note aib-related-message", text: message });
	}

	/** The note's first lines from the vault (the closest passage when it cannot be read). */
	private async preview(note: RelatedNote): Promise<string> {
		const file = this.app.vault.getFileByPath(note.path);
		try {
			if (file) return previewText(await this.app.vault.cachedRead(file), note.title);
		} catch {
			// unreadable now (being moved, a sync conflict): its closest passage instead
		}
		let snippet = note.snippet ?? "";
		if (note.heading && snippet.startsWith(`${note.heading}: `)) snippet = snippet.slice(note.heading.length + 2);
		// The server's snippet is on one line: its list items go back on lines of their own.
		return previewText(snippet.replace(/ (?:[-*+]|\d+[.)]) (?=\S)/g, "\n"));
	}

	/** A shared link's target as the note it resolves to is named. */
	private linkName(target: string): string {
		return this.app.metadataCache.getFirstLinkpathDest(target, this.shown ?? "")?.basename ?? target.split("/").pop() ?? target;
	}

	private render(results: RelatedNote[], previews: string[]): void {
		this.listEl.empty();
		if (results.length === 0) {
			this.showMessage("No related notes found.");
			return;
		}
		for (const [i, note] of results.entries()) {
			const row = this.listEl.createDiv({ cls: "aib-related-item", attr: { draggable: "true", "data-path": note.path } });
			const head = row.createDiv({ cls: "aib-related-head" });
			head.createSpan({ cls: "aib-related-name", text: note.title });
			const linked = note.linksTo || note.linkedFrom;
			const link = head.createSpan({
				cls: ["aib-related-link", linked ? "is-linked" : "is-unlinked"],
				attr: { "aria-label": linked ? "Already linked" : "Not linked yet" },
			});
			setIcon(link, linked ? "link" : "unlink");
			row.createDiv({
				cls: "aib-related-reason",
				text: relatedReason(note, (target) => this.linkName(target)),
				attr: { title: `${closeness(note.score)}: similarity ${note.score.toFixed(2)} (1 would be the same text)` },
			});
			if (previews[i]) row.createDiv({ cls: "aib-related-snippet", text: previews[i] });
			row.createDiv({ cls: "aib-related-path", text: note.path });
		}
	}

	private rowPath(event: Event): string | null {
		const row = event.target instanceof Element ? event.target.closest<HTMLElement>(".aib-related-item") : null;
		return row?.dataset.path ?? null;
	}

	/** The [[link]] Obsidian would write for `path` from the shown note. */
	private wikilink(path: string): string {
		const file = this.app.vault.getFileByPath(path);
		const text = file ? this.app.metadataCache.fileToLinktext(file, this.shown ?? "", true) : path.replace(/\.md$/, "");
		return `[[${text}]]`;
	}
}
