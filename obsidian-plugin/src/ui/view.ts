// The assistant panel (right sidebar): conversations, the streaming chat with Stop, context
// from the editor, `@` and `/` suggestions, and the connection banner.
import { ItemView, MarkdownView, Notice, setIcon, type WorkspaceLeaf } from "obsidian";
import type { Notification } from "../core/client";
import { DisconnectedError } from "../core/client";
import type { ChatSendParams, ConversationSummary, StoredMessage } from "../core/protocol";
import { ErrorCode } from "../core/protocol";
import { RpcError } from "../core/rpc";
import { applyNotification, failTurn, finishSummary, finishTurn, newTurn, text } from "../core/stream";
import type { Assistant } from "./assistant";
import type { Suggestion } from "../core/mentions";
import { ConfirmCommandCard, InstallCard, type Card } from "./server-cards";
import { SetupCard } from "./setup-card";
import { Suggestions } from "./suggest";
import { TurnView } from "./turn-view";

export const VIEW_TYPE = "ai-bridge-assistant";

type ContextItem = NonNullable<ChatSendParams["context"]>[number];

export interface Ask {
	text: string;
	promptId?: string;
	context?: ContextItem[];
	/** The introduce-yourself conversation (chat/send setup: true). */
	setup?: boolean;
}

export class AssistantView extends ItemView {
	private conversationId: string | null = null;
	private running: AbortController | null = null;
	private lastAsk: Ask | null = null;
	private messagesEl!: HTMLElement;
	private bannerEl!: HTMLElement;
	private listEl!: HTMLElement;
	private inputEl!: HTMLTextAreaElement;
	private sendButton!: HTMLButtonElement;
	private stopButton!: HTMLButtonElement;
	private contextToggle!: HTMLInputElement;
	private pendingContext: ContextItem[] = [];
	private messages: TurnView[] = [];
	private contextLabel!: HTMLElement;
	private cardsEl!: HTMLElement;
	/** The card shown instead of the banner (install, command to confirm, setup), and its key. */
	private card: { key: string; card: Card } | null = null;
	/** The setup card stays open until Done once shown (no provider, or -32011). */
	private setupOpen = false;
	/** This conversation is the introduce-yourself one: every turn is sent with setup: true. */
	private setupConversation = false;

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
		this.iconButton(header, "history", "Conversations", () => void this.toggleList());
		this.iconButton(header, "save", "Save conversation as note", () => {
			void this.exportConversation();
		});
		this.bannerEl = root.createDiv({ cls: "aib-banner" });
		this.cardsEl = root.createDiv({ cls: "aib-cards" });
		this.listEl = root.createDiv({ cls: "aib-list is-hidden" });
		this.messagesEl = root.createDiv({ cls: "aib-messages" });
		this.registerDomEvent(this.messagesEl, "click", (event) => this.onLinkClick(event));

		const composer = root.createDiv({ cls: "aib-composer" });
		const options = composer.createDiv({ cls: "aib-options" });
		const label = options.createEl("label", { cls: "aib-context-toggle" });
		this.contextToggle = label.createEl("input", { type: "checkbox" });
		this.contextToggle.checked = this.plugin.settings.sendContext;
		label.appendText(" Send the active note or selection");
		this.contextLabel = options.createDiv({ cls: "aib-context" });
		this.registerDomEvent(this.contextToggle, "change", () => {
			this.plugin.settings.sendContext = this.contextToggle.checked;
			void this.plugin.saveSettings();
		});
		this.inputEl = composer.createEl("textarea", {
			cls: "aib-input",
			attr: { placeholder: "Ask about your notes. @ mentions a note, / runs a prompt.", rows: "3" },
		});
		const suggestions = new Suggestions(
			composer,
			this.inputEl,
			() => this.plugin.suggestionSource(),
			(item) => this.addMention(item),
		);
		this.register(() => suggestions.close());
		this.registerDomEvent(this.inputEl, "keydown", (event) => {
			if (suggestions.handleKey(event)) return;
			if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
				event.preventDefault();
				void this.submit();
			}
		});
		const buttons = composer.createDiv({ cls: "aib-buttons" });
		this.sendButton = buttons.createEl("button", { text: "Send", cls: "mod-cta aib-send" });
		this.stopButton = buttons.createEl("button", { text: "Stop", cls: "aib-stop is-hidden" });
		this.registerDomEvent(this.sendButton, "click", () => void this.submit());
		this.registerDomEvent(this.stopButton, "click", () => this.stop());
		this.showConnection();
	}

	override async onClose(): Promise<void> {
		this.stop();
	}

	private iconButton(parent: HTMLElement, icon: string, label: string, onClick: () => void): void {
		const button = parent.createEl("button", { cls: "clickable-icon", attr: { "aria-label": label } });
		setIcon(button, icon);
		this.registerDomEvent(button, "click", onClick);
	}

	/** Show the connection state: nothing when connected, else the reason and what to do. */
	showConnection(): void {
		if (!this.bannerEl) return;
		const state = this.plugin.client.connection;
		this.bannerEl.empty();
		if (this.showCard()) return;
		if (state.status === "connected") return;
		const banner = this.bannerEl.createDiv({ cls: "aib-disconnected" });
		banner.createDiv({
			text: state.status === "connecting" ? "Connecting to the assistant server…" : state.reason,
		});
		const command = this.plugin.manualCommand();
		if (state.status === "disconnected" && command && !this.plugin.settings.serverCommand) {
			banner.createEl("code", { text: command, cls: "aib-command" });
			const copy = banner.createEl("button", { text: "Copy command" });
			copy.addEventListener("click", () => {
				void navigator.clipboard.writeText(command).then(() => new Notice("Command copied."));
			});
		}
		const retry = banner.createEl("button", { text: "Connect now" });
		retry.addEventListener("click", () => this.plugin.client.reconnectNow());
	}

	/** The card the connection calls for, instead of the banner; false when there is none. */
	private showCard(): boolean {
		const state = this.plugin.client.connection;
		const problem = this.plugin.serverProblem();
		if (state.status === "connected" && !state.chat) this.setupOpen = true;
		let key: string | null = null;
		if (state.status === "connected") key = this.setupOpen ? "setup" : null;
		else if (problem?.kind === "not-installed") key = "install";
		else if (problem?.kind === "confirm-command") key = `confirm:${problem.command}`;
		if (this.card?.key !== key) {
			if (this.card) this.removeChild(this.card.card);
			this.card = null;
			if (key === "install" && problem?.kind === "not-installed") {
				this.card = { key, card: this.addChild(new InstallCard(this.cardsEl, this.plugin, problem.install)) };
			} else if (key?.startsWith("confirm:") && problem?.kind === "confirm-command") {
				this.card = { key, card: this.addChild(new ConfirmCommandCard(this.cardsEl, this.plugin, problem.command)) };
			} else if (key === "setup") {
				const card = new SetupCard(this.cardsEl, this.plugin, {
					introduce: () => void this.introduce(false),
					done: () => {
						this.setupOpen = false;
						this.showConnection();
					},
				});
				this.card = { key, card: this.addChild(card) };
			}
		}
		this.card?.card.update();
		return this.card !== null;
	}

	/** The introduce-yourself conversation (or its update, from the current context note). */
	async introduce(update: boolean): Promise<void> {
		this.newConversation();
		this.setupConversation = true;
		const text = update
			? "I'd like to update what you know about me."
			: "Hello! I'd like to introduce myself.";
		await this.ask({ text, setup: true });
	}

	/** Add context to the next message (commands "Ask about current note/selection"). */
	setContext(items: ContextItem[], describe: string): void {
		this.pendingContext = items;
		this.contextLabel.setText(describe);
		this.inputEl.focus();
	}

	private addMention(item: Suggestion): void {
		if (item.kind === "prompt") return;
		const context: ContextItem =
			item.kind === "note" ? { note: item.value } : item.kind === "folder" ? { folder: item.value } : { tag: item.value };
		this.pendingContext.push(context);
		this.contextLabel.setText(`With: ${this.pendingContext.map(describeContext).join(", ")}`);
	}

	focusInput(): void {
		this.inputEl.focus();
	}

	private async submit(): Promise<void> {
		const raw = this.inputEl.value.trim();
		if (!raw || this.running) return;
		const prompt = this.plugin.promptFor(raw);
		const text = prompt ? raw.slice(prompt.command.length).trim() : raw;
		this.inputEl.value = "";
		const setup = this.setupConversation || undefined;
		await this.ask({ text, promptId: prompt?.id, context: this.collectContext(prompt?.insert), setup });
	}

	private collectContext(insert?: string): ContextItem[] {
		const items = [...this.pendingContext];
		this.pendingContext = [];
		this.contextLabel.setText("");
		const wanted = insert ?? (this.contextToggle.checked ? "auto" : "none");
		if (wanted === "none" || items.length > 0) return items;
		const view = this.app.workspace.getMostRecentLeaf()?.view;
		if (!(view instanceof MarkdownView) || !view.file) return items;
		const selection = view.editor.getSelection();
		if (wanted === "selection" && !selection) return items;
		items.push(selection && wanted !== "note" ? { note: view.file.path, selection } : { note: view.file.path });
		return items;
	}

	/** Send a message and stream the answer into the panel. */
	async ask(ask: Ask): Promise<void> {
		if (this.running) return;
		this.lastAsk = ask;
		const shown = ask.text || (ask.promptId ? `/${ask.promptId.split("/").pop()?.replace(/\.md$/, "")}` : "");
		const user = this.message("user");
		user.showText(shown);
		const view = this.message("assistant");
		let turn = newTurn();
		view.update(turn);
		const controller = new AbortController();
		this.setRunning(controller);
		const params: ChatSendParams = { text: ask.text };
		if (this.conversationId) params.conversationId = this.conversationId;
		if (ask.promptId) params.promptId = ask.promptId;
		if (ask.context && ask.context.length > 0) params.context = ask.context;
		if (ask.setup) params.setup = true;
		try {
			const result = await this.plugin.client.call("chat/send", params, {
				signal: controller.signal,
				onNotification: (n: Notification) => {
					turn = applyNotification(turn, n);
					view.update(turn);
					this.scrollToEnd();
				},
			});
			this.conversationId = result.conversationId;
			turn = finishTurn(turn, result);
		} catch (error) {
			const cancelled = error instanceof RpcError && error.code === ErrorCode.cancelled;
			turn = failTurn(turn, error instanceof Error ? error : new Error(String(error)), cancelled);
			if (error instanceof DisconnectedError) this.showConnection();
			if (error instanceof RpcError && error.code === ErrorCode.noProvider) {
				// No model yet: the setup card, rather than an error to read.
				this.setupOpen = true;
				this.showConnection();
			}
		} finally {
			this.setRunning(null);
		}
		view.update(turn);
		this.scrollToEnd();
	}

	/** Stream a search summary into the panel ("Search and summarize"). */
	async summarize(query: string): Promise<void> {
		if (this.running) return;
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

	private onLinkClick(event: MouseEvent): void {
		const target = event.target;
		if (!(target instanceof HTMLElement)) return;
		const link = target.closest("a.internal-link");
		if (!(link instanceof HTMLElement)) return;
		event.preventDefault();
		const href = link.dataset.href ?? link.getAttribute("href") ?? "";
		if (href) void this.app.workspace.openLinkText(href, "", event.ctrlKey || event.metaKey);
	}

	private scrollToEnd(): void {
		this.messagesEl.scrollTop = this.messagesEl.scrollHeight;
	}

	/** The notes closest in meaning to `path` (vault/related), as links in the panel. */
	async showRelated(path: string): Promise<void> {
		const box = this.messagesEl.createDiv({ cls: "aib-message aib-assistant aib-related" });
		box.createDiv({ cls: "aib-note", text: `Related to ${path.replace(/\.md$/, "")}` });
		try {
			const related = await this.plugin.client.call("vault/related", { path, limit: 10 });
			if (!related.ready) box.createDiv({ text: "Related notes need an embedder, and its vectors are not ready yet." });
			else if (related.results.length === 0) box.createDiv({ text: "No related notes found." });
			const list = box.createEl("ul");
			for (const note of related.results) {
				const item = list.createEl("li");
				const link = item.createEl("a", { cls: "internal-link", text: note.title, href: "#" });
				link.dataset.href = note.path;
				const linked = note.linksTo || note.linkedFrom ? " · linked" : "";
				item.createSpan({ cls: "aib-usage", text: ` ${note.score.toFixed(2)}${linked}` });
			}
		} catch (error) {
			box.createDiv({ cls: "aib-error", text: (error as Error).message });
		}
		this.scrollToEnd();
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
		this.setupConversation = false;
		for (const message of this.messages.splice(0)) this.removeChild(message);
		this.messagesEl.empty();
	}

	/** A new message at the end of the conversation, unloaded with it. */
	private message(role: "user" | "assistant"): TurnView {
		const message = this.addChild(new TurnView(this.app, this.messagesEl, role, this.actions()));
		this.messages.push(message);
		return message;
	}

	private async toggleList(): Promise<void> {
		const hidden = this.listEl.hasClass("is-hidden");
		this.listEl.toggleClass("is-hidden", !hidden);
		if (hidden) await this.loadList();
	}

	private async loadList(): Promise<void> {
		this.listEl.empty();
		let conversations: ConversationSummary[];
		try {
			conversations = (await this.plugin.client.call("conversations/list", { limit: 30 })).conversations;
		} catch (error) {
			this.listEl.createDiv({ cls: "aib-error", text: (error as Error).message });
			return;
		}
		if (conversations.length === 0) this.listEl.createDiv({ cls: "aib-note", text: "No conversations yet." });
		for (const conversation of conversations) {
			const row = this.listEl.createDiv({ cls: "aib-list-item" });
			row.createSpan({ text: conversation.title });
			row.createSpan({ cls: "aib-list-date", text: conversation.updatedAt.slice(0, 10) });
			row.addEventListener("click", () => void this.open(conversation.id));
		}
	}

	/** Show a stored conversation; the next message continues it. */
	async open(id: string): Promise<void> {
		const conversation = await this.plugin.client.call("conversations/get", { id });
		this.newConversation();
		this.conversationId = id;
		this.listEl.addClass("is-hidden");
		for (const message of conversation.messages) this.showStored(message);
		this.scrollToEnd();
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

function describeContext(item: ContextItem): string {
	if ("note" in item) return item.note.replace(/\.md$/, "");
	if ("folder" in item) return `${item.folder}/`;
	return item.tag;
}
