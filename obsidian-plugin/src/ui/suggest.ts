// The suggestion list under the chat input (see core/mentions.ts for what it offers).
import { Component } from "obsidian";
import { insertionFor, suggestionsFor, type Suggestion, type SuggestionSource } from "../core/mentions";

export class Suggestions extends Component {
	private readonly listEl: HTMLElement;
	private items: Suggestion[] = [];
	private selected = 0;
	private start = 0;
	private closeTimer: number | null = null;

	constructor(
		parent: HTMLElement,
		private readonly input: HTMLTextAreaElement,
		private readonly source: () => SuggestionSource,
		private readonly onPick: (item: Suggestion) => void = () => undefined,
		/** What "/" says when the server has no prompts: where they live, how to add one. */
		private readonly noPrompts: () => string = () => "",
	) {
		super();
		this.listEl = parent.createDiv({ cls: "aib-suggestions is-hidden" });
	}

	override onload(): void {
		this.registerDomEvent(this.input, "input", () => this.refresh());
		this.registerDomEvent(this.listEl, "mousedown", (event) => {
			const row = event.target instanceof Element ? event.target.closest<HTMLElement>(".aib-suggestion") : null;
			if (!row) return;
			event.preventDefault();
			this.pick(Number(row.dataset.index));
		});
		// A click on a suggestion lands after the blur: close a moment later.
		this.registerDomEvent(this.input, "blur", () => {
			this.clearCloseTimer();
			this.closeTimer = window.setTimeout(() => this.close(), 150);
		});
	}

	override onunload(): void {
		this.clearCloseTimer();
		this.close();
	}

	private clearCloseTimer(): void {
		if (this.closeTimer !== null) window.clearTimeout(this.closeTimer);
		this.closeTimer = null;
	}

	private refresh(): void {
		const before = this.input.value.slice(0, this.input.selectionStart ?? this.input.value.length);
		const source = this.source();
		const found = suggestionsFor(before, source);
		if (found && before.startsWith("/") && source.prompts.length === 0) {
			this.showHint(this.noPrompts());
			return;
		}
		if (!found || found.items.length === 0) {
			this.close();
			return;
		}
		this.items = found.items;
		this.start = found.start;
		this.selected = 0;
		this.render();
	}

	/** A line of help in place of the list (nothing to pick). */
	private showHint(text: string): void {
		this.items = [];
		this.listEl.empty();
		if (!text) {
			this.close();
			return;
		}
		this.listEl.removeClass("is-hidden");
		this.listEl.createDiv({ cls: "aib-suggestion-hint", text });
	}

	private render(): void {
		this.listEl.empty();
		this.listEl.removeClass("is-hidden");
		this.items.forEach((item, i) => {
			const row = this.listEl.createDiv({ cls: "aib-suggestion" });
			row.toggleClass("is-selected", i === this.selected);
			row.createSpan({ cls: "aib-suggestion-kind", text: item.kind });
			row.createSpan({ text: item.kind === "prompt" ? `${item.value} · ${item.label}` : item.value });
			row.dataset.index = String(i);
		});
	}

	/** Keys while the list is open: arrows move, Enter or Tab picks, Escape closes. True when handled. */
	handleKey(event: KeyboardEvent): boolean {
		if (this.items.length === 0) return false;
		if (event.key === "ArrowDown" || event.key === "ArrowUp") {
			const step = event.key === "ArrowDown" ? 1 : -1;
			this.selected = (this.selected + step + this.items.length) % this.items.length;
			this.render();
		} else if (event.key === "Enter" || event.key === "Tab") {
			this.pick(this.selected);
		} else if (event.key === "Escape") {
			this.close();
		} else {
			return false;
		}
		event.preventDefault();
		return true;
	}

	private pick(index: number): void {
		const item = this.items[index];
		if (!item) return;
		const cursor = this.input.selectionStart ?? this.input.value.length;
		const value = this.input.value;
		const inserted = insertionFor(item);
		this.input.value = value.slice(0, this.start) + inserted + value.slice(cursor);
		const at = this.start + inserted.length;
		this.input.setSelectionRange(at, at);
		this.onPick(item);
		this.close();
	}

	close(): void {
		this.items = [];
		this.listEl.addClass("is-hidden");
		this.listEl.empty();
	}
}
