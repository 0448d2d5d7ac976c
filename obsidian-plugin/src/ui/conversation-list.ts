// The conversation list of the panel: stored conversations with search (on the server:
// conversations/list {query}, debounced), open, rename and delete, each from its row.
import { Component, Notice, setIcon } from "obsidian";
import type { BridgeClient } from "../core/client";
import type { ConversationSummary } from "../core/protocol";
import { actionOf } from "./dom";

const SEARCH_DEBOUNCE_MS = 250;

export class ConversationList extends Component {
	private readonly listEl: HTMLElement;
	private readonly listItemsEl: HTMLElement;
	private searchTimer: number | null = null;
	private conversations: ConversationSummary[] = [];
	private listQuery = "";

	constructor(
		root: HTMLElement,
		private readonly client: BridgeClient,
		private readonly on: { open(id: string): void; deleted(id: string): void },
	) {
		super();
		this.listEl = root.createDiv({ cls: "aib-list is-hidden" });
		const search = this.listEl.createEl("input", {
			type: "search",
			cls: "aib-list-search",
			attr: { placeholder: "Search conversations", "aria-label": "Search conversations" },
		});
		this.listItemsEl = this.listEl.createDiv({ cls: "aib-list-items" });
		this.registerDomEvent(this.listItemsEl, "click", (event) => this.onListClick(event));
		this.registerDomEvent(this.listItemsEl, "keydown", (event) => {
			if (!(event.target instanceof HTMLInputElement)) return;
			if (event.key === "Enter") this.onListAction("save", event.target);
			if (event.key === "Escape") void this.loadList(this.listQuery);
		});
		this.registerDomEvent(search, "input", () => {
			this.clearSearchTimer();
			this.searchTimer = window.setTimeout(() => {
				this.searchTimer = null;
				void this.loadList(search.value.trim());
			}, SEARCH_DEBOUNCE_MS);
		});
	}

	hide(): void {
		this.listEl.addClass("is-hidden");
	}

	private clearSearchTimer(): void {
		if (this.searchTimer !== null) window.clearTimeout(this.searchTimer);
		this.searchTimer = null;
	}

	override onunload(): void {
		this.clearSearchTimer();
	}

	/** Show the list (loading it) or hide it. */
	toggle(): void {
		const hidden = this.listEl.hasClass("is-hidden");
		this.listEl.toggleClass("is-hidden", !hidden);
		if (hidden) void this.loadList("");
	}

	private async loadList(query: string): Promise<void> {
		this.listQuery = query;
		try {
			const params = query ? { limit: 30, query } : { limit: 30 };
			this.conversations = (await this.client.call("conversations/list", params)).conversations;
		} catch (error) {
			this.listItemsEl.empty();
			this.listItemsEl.createDiv({ cls: "aib-error", text: (error as Error).message });
			return;
		}
		this.listItemsEl.empty();
		if (this.conversations.length === 0) {
			this.listItemsEl.createDiv({ cls: "aib-note", text: query ? "No conversation matches." : "No conversations yet." });
		}
		for (const conversation of this.conversations) {
			const row = this.listItemsEl.createDiv({ cls: "aib-list-item", attr: { "data-id": conversation.id } });
			row.createSpan({ cls: "aib-list-title", text: conversation.title, attr: { "data-action": "open" } });
			row.createSpan({ cls: "aib-list-date", text: conversation.updatedAt.slice(0, 10) });
			for (const [icon, label, action] of [
				["pencil", "Rename", "rename"],
				["trash-2", "Delete", "delete"],
			] as const) {
				const button = row.createEl("button", { cls: `clickable-icon aib-list-${action}`, attr: { "aria-label": label, "data-action": action } });
				setIcon(button, icon);
			}
		}
	}

	private onListClick(event: MouseEvent): void {
		const action = actionOf(event);
		if (action && event.target instanceof Element) this.onListAction(action, event.target);
	}

	/** A button (or Enter) in a conversation's row. */
	private onListAction(action: string, target: Element): void {
		const row = target.closest<HTMLElement>(".aib-list-item");
		const conversation = this.conversations.find((c) => c.id === row?.dataset.id);
		if (!row || !conversation) return;
		const client = this.client;
		const reload = (): Promise<void> => this.loadList(this.listQuery);
		const fail = (error: Error): void => void new Notice(error.message);
		switch (action) {
			case "open":
				this.on.open(conversation.id);
				return;
			case "rename": {
				row.empty();
				const input = row.createEl("input", { type: "text", cls: "aib-list-rename-input", attr: { "aria-label": "New title" } });
				input.value = conversation.title;
				row.createEl("button", { text: "Save", cls: "mod-cta", attr: { "data-action": "save" } });
				row.createEl("button", { text: "Cancel", attr: { "data-action": "cancel" } });
				input.focus();
				input.select();
				return;
			}
			case "save": {
				const title = row.querySelector("input")?.value.trim() ?? "";
				if (!title || title === conversation.title) void reload();
				else client.call("conversations/rename", { id: conversation.id, title }).then(reload, fail);
				return;
			}
			case "delete":
				row.empty();
				row.createSpan({ cls: "aib-list-title", text: `Delete “${conversation.title}”?` });
				row.createEl("button", { text: "Delete", cls: "mod-warning", attr: { "data-action": "confirm-delete" } });
				row.createEl("button", { text: "Keep", attr: { "data-action": "cancel" } });
				return;
			case "confirm-delete":
				client.call("conversations/delete", { id: conversation.id }).then(() => {
					this.on.deleted(conversation.id);
					return reload();
				}, fail);
				return;
			case "cancel":
				void reload();
		}
	}
}
