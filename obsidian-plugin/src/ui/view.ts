// The assistant panel (right sidebar): conversations (search, rename, delete), the streaming chat
// with Stop, an empty state with example prompts, context chips, `@` and `/` suggestions, and the
// connection: while reconnecting a message waits and goes out on reconnect; with no reconnect
// under way the input is disabled and says why.
import { getAllTags, ItemView, MarkdownView, Notice, setIcon, TFile, type WorkspaceLeaf } from "obsidian";
import { chipsFor, examplePrompts, withItem, withoutKey, type ContextItem, type Example } from "../core/chips";
import { DisconnectedError, type Notification } from "../core/client";
import type { Suggestion } from "../core/mentions";
import { inputState, Outbox } from "../core/outbox";
import type { ChatSendParams, ConversationSummary, StoredMessage } from "../core/protocol";
import { ErrorCode } from "../core/protocol";
import { RpcError } from "../core/rpc";
import { applyNotification, failTurn, finishSummary, finishTurn, markReview, newTurn, text, type ToolChip, type Turn } from "../core/stream";
import type { Assistant } from "./assistant";
import { Suggestions } from "./suggest";
import { TurnView } from "./turn-view";

export const VIEW_TYPE = "ai-bridge-assistant";

export interface Ask {
	text: string;
	promptId?: string;
	context?: ContextItem[];
}

const SEARCH_DEBOUNCE_MS = 250;

export class AssistantView extends ItemView {
	private conversationId: string | null = null;
	private running: AbortController | null = null;
	private lastAsk: Ask | null = null;
	private messagesEl!: HTMLElement;
	private bannerEl!: HTMLElement;
	private listEl!: HTMLElement;
	private listItemsEl!: HTMLElement;
	private chipsEl!: HTMLElement;
	private inputEl!: HTMLTextAreaElement;
	private reasonEl!: HTMLElement;
	private sendButton!: HTMLButtonElement;
	private stopButton!: HTMLButtonElement;
	private contextToggle!: HTMLInputElement;
	private pendingContext: ContextItem[] = [];
	/** The active note was removed from the next message's chips. */
	private skipActive = false;
	private messages: TurnView[] = [];
	private live: { view: TurnView; turn: Turn } | null = null;
	private readonly outbox = new Outbox<Ask>();
	private searchTimer: number | null = null;
	private examples: Example[] = [];
	private conversations: ConversationSummary[] = [];
	private listQuery = "";

	constructor(
		leaf: WorkspaceLeaf,
		private readonly plugin: Assistant,
	) {
		super(leaf);
	}

	override getViewType(): string {
		return VIEW_TYPE;
	}

	override getDisplayText(): string {
		return "Assistant";
	}

	override getIcon(): string {
		return "bot";
	}

	override async onOpen(): Promise<void> {
		const root = this.contentEl;
		root.empty();
		root.addClass("aib-view");
		const header = root.createDiv({ cls: "aib-header" });
		this.iconButton(header, "plus", "New conversation", () => this.newConversation());
		this.iconButton(header, "history", "Conversations", () => this.toggleList());
		this.iconButton(header, "save", "Save conversation as note", () => void this.exportConversation());
		this.bannerEl = root.createDiv({ cls: "aib-banner" });
		this.registerDomEvent(this.bannerEl, "click", (event) => this.onBannerClick(event));
		this.buildList(root);
		this.messagesEl = root.createDiv({ cls: "aib-messages" });
		this.registerDomEvent(this.messagesEl, "click", (event) => this.onMessagesClick(event));
		this.buildComposer(root);
		this.registerEvent(this.app.workspace.on("active-leaf-change", () => this.renderChips()));
		this.register(() => this.clearSearchTimer());
		this.showConnection();
		this.showEmptyState();
	}

	override async onClose(): Promise<void> {
		this.stop();
	}

	private buildList(root: HTMLElement): void {
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

	private buildComposer(root: HTMLElement): void {
		const composer = root.createDiv({ cls: "aib-composer" });
		this.chipsEl = composer.createDiv({ cls: "aib-chips" });
		this.registerDomEvent(this.chipsEl, "click", (event) => {
			const chip = event.target instanceof HTMLElement ? event.target.closest<HTMLElement>(".aib-chip") : null;
			if (!chip || actionOf(event) !== "remove") return;
			if (chip.hasClass("is-active-note")) this.skipActive = true;
			else this.pendingContext = withoutKey(this.pendingContext, chip.dataset.key ?? "");
			this.renderChips();
		});
		this.inputEl = composer.createEl("textarea", {
			cls: "aib-input",
			attr: { placeholder: "Ask about your notes. @ mentions a note, / runs a prompt.", rows: "3" },
		});
		const suggestions = this.addChild(
			new Suggestions(composer, this.inputEl, () => this.plugin.suggestionSource(), (item) => this.addMention(item)),
		);
		this.registerDomEvent(this.inputEl, "keydown", (event) => {
			if (suggestions.handleKey(event)) return;
			if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
				event.preventDefault();
				void this.submit();
			}
		});
		const bar = composer.createDiv({ cls: "aib-composer-bar" });
		const label = bar.createEl("label", { cls: "aib-context-toggle" });
		this.contextToggle = label.createEl("input", { type: "checkbox" });
		this.contextToggle.checked = this.plugin.settings.sendContext;
		label.appendText(" Active note");
		this.registerDomEvent(this.contextToggle, "change", () => {
			this.plugin.settings.sendContext = this.contextToggle.checked;
			this.skipActive = false;
			this.renderChips();
			void this.plugin.saveSettings();
		});
		this.reasonEl = bar.createDiv({ cls: "aib-input-reason" });
		this.sendButton = bar.createEl("button", { text: "Send", cls: "mod-cta aib-send" });
		this.stopButton = bar.createEl("button", { text: "Stop", cls: "aib-stop is-hidden" });
		this.registerDomEvent(this.sendButton, "click", () => void this.submit());
		this.registerDomEvent(this.stopButton, "click", () => this.stop());
		this.renderChips();
	}

	private iconButton(parent: HTMLElement, icon: string, label: string, onClick: () => void): HTMLElement {
		const button = parent.createEl("button", { cls: "clickable-icon", attr: { "aria-label": label } });
		setIcon(button, icon);
		this.registerDomEvent(button, "click", onClick);
		return button;
	}

	/** Show the connection state: nothing when connected, else the reason and what to do; the
	 * input follows it, and messages that waited go out once connected. */
	showConnection(): void {
		if (!this.bannerEl) return;
		const state = this.plugin.client.connection;
		const input = inputState(state);
		this.inputEl.disabled = !input.enabled;
		this.sendButton.disabled = !input.enabled;
		this.reasonEl.setText(input.enabled ? (input.reason && this.outbox.size > 0 ? "Waiting for the server…" : "") : "");
		this.bannerEl.empty();
		if (state.status === "connected") {
			if (this.outbox.size > 0 && !this.running) void this.flushOutbox();
			return;
		}
		const banner = this.bannerEl.createDiv({ cls: "aib-disconnected" });
		banner.createDiv({ text: state.status === "connecting" ? "Connecting to the assistant server…" : state.reason });
		if (input.queues) banner.createDiv({ cls: "aib-note", text: input.reason ?? "" });
		if (!input.enabled) banner.createDiv({ cls: "aib-note", text: "The input is off until the server is back." });
		const command = this.plugin.manualCommand();
		if (state.status === "disconnected" && command && !this.plugin.settings.serverCommand) {
			banner.createEl("code", { text: command, cls: "aib-command" });
			banner.createEl("button", { text: "Copy command", attr: { "data-action": "copy" } });
		}
		banner.createEl("button", { text: "Connect now", attr: { "data-action": "connect" } });
	}

	private onBannerClick(event: MouseEvent): void {
		const action = actionOf(event);
		if (action === "connect") this.plugin.client.reconnectNow();
		const command = this.plugin.manualCommand();
		if (action === "copy" && command) {
			navigator.clipboard.writeText(command).then(
				() => new Notice("Command copied."),
				() => new Notice("Could not copy: select the command and copy it."),
			);
		}
	}

	private async flushOutbox(): Promise<void> {
		try {
			await this.outbox.flush((ask) => this.send(ask));
		} catch {
			// Disconnected again: what is left waits for the next connection.
		}
	}

	/** Add context to the next message (commands "Ask about current note/selection"). */
	setContext(items: ContextItem[]): void {
		for (const item of items) this.pendingContext = withItem(this.pendingContext, item);
		this.renderChips();
		this.inputEl.focus();
	}

	private addMention(item: Suggestion): void {
		if (item.kind === "prompt") return;
		const context: ContextItem =
			item.kind === "note" ? { note: item.value } : item.kind === "folder" ? { folder: item.value } : { tag: item.value };
		this.setContext([context]);
	}

	/** The active note (or its selection) as context, when there is one. */
	private activeItem(): ContextItem | null {
		const view = this.app.workspace.getActiveViewOfType(MarkdownView) ?? this.recentMarkdown();
		if (!view?.file) return null;
		const selection = view.editor.getSelection();
		return selection ? { note: view.file.path, selection } : { note: view.file.path };
	}

	private recentMarkdown(): MarkdownView | null {
		const view = this.app.workspace.getMostRecentLeaf()?.view;
		return view instanceof MarkdownView ? view : null;
	}

	private renderChips(): void {
		if (!this.chipsEl) return;
		this.chipsEl.empty();
		const chips = chipsFor(this.pendingContext, this.activeItem(), this.contextToggle.checked && !this.skipActive);
		for (const chip of chips) {
			const el = this.chipsEl.createDiv({
				cls: ["aib-chip", chip.active ? "is-active-note" : "is-added"],
				attr: { "data-key": chip.key },
			});
			const icon = el.createSpan({ cls: "aib-chip-icon" });
			setIcon(icon, "note" in chip.item ? "file-text" : "folder" in chip.item ? "folder" : "tag");
			el.createSpan({ cls: "aib-chip-label", text: chip.label });
			const remove = el.createEl("button", {
				cls: "clickable-icon aib-chip-remove",
				attr: { "aria-label": `Remove ${chip.label}`, "data-action": "remove" },
			});
			setIcon(remove, "x");
		}
	}

	focusInput(): void {
		this.inputEl.focus();
	}

	private async submit(): Promise<void> {
		const raw = this.inputEl.value.trim();
		if (!raw || this.running || this.inputEl.disabled) return;
		const prompt = this.plugin.promptFor(raw);
		const text = prompt ? raw.slice(prompt.command.length).trim() : raw;
		this.inputEl.value = "";
		await this.ask({ text, promptId: prompt?.id, context: this.collectContext(prompt?.insert) });
	}

	/** The chips as the next message's context (a prompt may ask for the note or selection). */
	private collectContext(insert?: string): ContextItem[] {
		const includeActive = insert ? insert !== "none" : this.contextToggle.checked && !this.skipActive;
		let active = this.activeItem();
		if (active && "note" in active && (insert === "note" || (insert === "selection" && !active.selection))) {
			active = insert === "note" ? { note: active.note } : null;
		}
		const items = chipsFor(this.pendingContext, active, includeActive).map((chip) => chip.item);
		this.pendingContext = [];
		this.skipActive = false;
		this.renderChips();
		return items;
	}

	/** Send a message and stream the answer into the panel; while reconnecting it waits. */
	async ask(ask: Ask): Promise<void> {
		if (this.running) return;
		if (this.plugin.client.connection.status !== "connected" && inputState(this.plugin.client.connection).queues) {
			this.outbox.push(ask);
			this.showAsked(ask).addClass("is-waiting");
			this.showConnection();
			return;
		}
		this.showAsked(ask);
		await this.send(ask);
	}

	private showAsked(ask: Ask): HTMLElement {
		this.clearEmptyState();
		const shown = ask.text || (ask.promptId ? `/${ask.promptId.split("/").pop()?.replace(/\.md$/, "")}` : "");
		const user = this.message("user");
		user.showText(shown);
		return user.el;
	}

	private async send(ask: Ask): Promise<void> {
		this.lastAsk = ask;
		this.messagesEl.querySelectorAll(".aib-user.is-waiting").forEach((el) => el.removeClass("is-waiting"));
		const view = this.message("assistant");
		this.live = { view, turn: newTurn() };
		view.update(this.live.turn);
		const controller = new AbortController();
		this.setRunning(controller);
		const params: ChatSendParams = { text: ask.text };
		if (this.conversationId) params.conversationId = this.conversationId;
		if (ask.promptId) params.promptId = ask.promptId;
		if (ask.context && ask.context.length > 0) params.context = ask.context;
		const live = this.live;
		try {
			const result = await this.plugin.client.call("chat/send", params, {
				signal: controller.signal,
				onNotification: (n: Notification) => {
					live.turn = applyNotification(live.turn, n);
					view.update(live.turn);
					this.scrollToEnd();
				},
			});
			this.conversationId = result.conversationId;
			live.turn = finishTurn(live.turn, result);
		} catch (error) {
			const cancelled = error instanceof RpcError && error.code === ErrorCode.cancelled;
			live.turn = failTurn(live.turn, error instanceof Error ? error : new Error(String(error)), cancelled);
			if (error instanceof DisconnectedError) this.showConnection();
		} finally {
			this.setRunning(null);
		}
		view.update(live.turn);
		this.scrollToEnd();
	}

	/** A write of the running turn is being reviewed, or was not approved. */
	markReview(callId: string, review: ToolChip["review"]): void {
		if (!this.live || !this.live.turn.tools.some((tool) => tool.id === callId)) return;
		this.live.turn = markReview(this.live.turn, callId, review);
		this.live.view.update(this.live.turn);
	}

	/** Stream a search summary into the panel ("Search and summarize"). */
	async summarize(query: string): Promise<void> {
		if (this.running) return;
		this.clearEmptyState();
		const user = this.message("user");
		user.showText(`Search and summarize: ${query}`);
		const view = this.message("assistant");
		let turn = newTurn();
		const controller = new AbortController();
		this.setRunning(controller);
		try {
			const result = await this.plugin.client.call(
				"command/searchSummarize",
				{ query },
				{
					signal: controller.signal,
					onNotification: (n) => {
						turn = applyNotification(turn, n);
						view.update(turn);
					},
				},
			);
			turn = finishSummary(turn, result.summary, result.sources);
		} catch (error) {
			const cancelled = error instanceof RpcError && error.code === ErrorCode.cancelled;
			turn = failTurn(turn, error instanceof Error ? error : new Error(String(error)), cancelled);
		} finally {
			this.setRunning(null);
		}
		view.update(turn);
	}

	/** Cancel the running request at once. */
	stop(): void {
		this.running?.abort();
	}

	private setRunning(controller: AbortController | null): void {
		this.running = controller;
		this.sendButton.toggleClass("is-hidden", controller !== null);
		this.stopButton.toggleClass("is-hidden", controller === null);
	}

	private actions() {
		return {
			openNote: (path: string) => void this.app.workspace.openLinkText(path, "", false),
			retry: () => {
				if (this.lastAsk) void this.ask(this.lastAsk);
			},
		};
	}

	private onMessagesClick(event: MouseEvent): void {
		const target = event.target;
		if (!(target instanceof HTMLElement)) return;
		const example = target.closest<HTMLElement>(".aib-example");
		if (example) {
			this.useExample(Number(example.dataset.index));
			return;
		}
		const link = target.closest("a.internal-link");
		if (!(link instanceof HTMLElement)) return;
		event.preventDefault();
		const href = link.dataset.href ?? link.getAttribute("href") ?? "";
		if (href) void this.app.workspace.openLinkText(href, "", event.ctrlKey || event.metaKey);
	}

	private scrollToEnd(): void {
		this.messagesEl.scrollTop = this.messagesEl.scrollHeight;
	}

	/** What the assistant can do, with three example prompts from this vault. */
	private showEmptyState(): void {
		if (this.messages.length > 0) return;
		this.messagesEl.empty();
		const empty = this.messagesEl.createDiv({ cls: "aib-empty" });
		empty.createDiv({ cls: "aib-empty-title", text: "Ask about your notes" });
		empty.createDiv({
			cls: "aib-empty-text",
			text: "The assistant searches and reads your vault, cites the notes it used, and asks before it changes anything.",
		});
		this.examples = examplePrompts(this.vaultSamples());
		this.examples.forEach((example, index) => {
			const button = empty.createEl("button", { cls: "aib-example", text: example.text });
			button.dataset.index = String(index);
		});
	}

	private useExample(index: number): void {
		const example = this.examples[index];
		if (!example) return;
		for (const item of example.context) this.pendingContext = withItem(this.pendingContext, item);
		this.inputEl.value = example.text;
		this.renderChips();
		this.inputEl.focus();
	}

	private clearEmptyState(): void {
		this.messagesEl.querySelector(".aib-empty")?.remove();
	}

	/** A recent note, a folder with notes and a tag, for the example prompts. */
	private vaultSamples(): { recent: string | null; folder: string | null; tag: string | null } {
		const files = this.app.vault.getMarkdownFiles();
		const recent = files.reduce<TFile | null>((best, file) => (!best || file.stat.mtime > best.stat.mtime ? file : best), null);
		const counts = new Map<string, number>();
		const tags = new Map<string, number>();
		for (const file of files) {
			const folder = file.parent?.path;
			if (folder && folder !== "/") counts.set(folder, (counts.get(folder) ?? 0) + 1);
			const cache = this.app.metadataCache.getFileCache(file);
			for (const tag of cache ? (getAllTags(cache) ?? []) : []) tags.set(tag, (tags.get(tag) ?? 0) + 1);
		}
		const top = (map: Map<string, number>): string | null => [...map.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
		return { recent: recent?.path ?? null, folder: top(counts), tag: top(tags) };
	}

	/** Save the conversation shown as a note (conversations/export, into the server's
	 * conversations folder when one is set) and open it. */
	async exportConversation(): Promise<void> {
		if (!this.conversationId) {
			new Notice("There is no conversation to save yet.");
			return;
		}
		try {
			const folder = (await this.plugin.client.call("settings/get", {})).conversationsFolder;
			const params = folder ? { id: this.conversationId, folder } : { id: this.conversationId };
			const saved = await this.plugin.client.call("conversations/export", params);
			new Notice(`Saved as ${saved.path}.`);
			await this.app.workspace.openLinkText(saved.path, "", true);
		} catch (error) {
			new Notice((error as Error).message);
		}
	}

	newConversation(): void {
		this.stop();
		this.conversationId = null;
		this.live = null;
		for (const message of this.messages.splice(0)) this.removeChild(message);
		this.messagesEl.empty();
		this.showEmptyState();
	}

	/** A new message at the end of the conversation, unloaded with it. */
	private message(role: "user" | "assistant"): TurnView {
		const message = this.addChild(new TurnView(this.app, this.messagesEl, role, this.actions()));
		this.messages.push(message);
		return message;
	}

	private toggleList(): void {
		const hidden = this.listEl.hasClass("is-hidden");
		this.listEl.toggleClass("is-hidden", !hidden);
		if (hidden) void this.loadList("");
	}

	private clearSearchTimer(): void {
		if (this.searchTimer !== null) window.clearTimeout(this.searchTimer);
		this.searchTimer = null;
	}

	private async loadList(query: string): Promise<void> {
		this.listQuery = query;
		try {
			const params = query ? { limit: 30, query } : { limit: 30 };
			this.conversations = (await this.plugin.client.call("conversations/list", params)).conversations;
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
		if (action && event.target instanceof HTMLElement) this.onListAction(action, event.target);
	}

	/** A button (or Enter) in a conversation's row. */
	private onListAction(action: string, target: HTMLElement): void {
		const row = target.closest<HTMLElement>(".aib-list-item");
		const conversation = this.conversations.find((c) => c.id === row?.dataset.id);
		if (!row || !conversation) return;
		const client = this.plugin.client;
		const reload = (): Promise<void> => this.loadList(this.listQuery);
		const fail = (error: Error): void => void new Notice(error.message);
		switch (action) {
			case "open":
				void this.open(conversation.id);
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
					if (this.conversationId === conversation.id) this.newConversation();
					return reload();
				}, fail);
				return;
			case "cancel":
				void reload();
		}
	}

	/** Show a stored conversation; the next message continues it. */
	async open(id: string): Promise<void> {
		try {
			const conversation = await this.plugin.client.call("conversations/get", { id });
			this.newConversation();
			this.clearEmptyState();
			this.conversationId = id;
			this.listEl.addClass("is-hidden");
			for (const message of conversation.messages) this.showStored(message);
			this.scrollToEnd();
		} catch (error) {
			new Notice((error as Error).message);
		}
	}

	private showStored(message: StoredMessage): void {
		const shown = message.content
			.filter((block) => block.type === "text")
			.map((block) => text(block.text))
			.join("\n");
		if (!shown) return;
		const role = message.role === "user" ? "user" : "assistant";
		this.message(role).showText(shown);
	}
}

/** The data-action of the button (or other element) an event came from. */
function actionOf(event: Event): string | null {
	const el = event.target instanceof HTMLElement ? event.target.closest<HTMLElement>("[data-action]") : null;
	return el?.dataset.action ?? null;
}
