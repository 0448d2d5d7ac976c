// The assistant panel (right sidebar): the conversation list (conversation-list.ts), the streaming chat
// with Stop, an empty state with example prompts, context chips, `@` and `/` suggestions, and the
// connection: while reconnecting a message waits and goes out on reconnect; with no reconnect
// under way the input is disabled and says why.
import { getAllTags, ItemView, MarkdownView, Notice, setIcon, TFile, type WorkspaceLeaf } from "obsidian";
import { chipsFor, examplePrompts, withItem, withoutKey, type ContextItem, type Example } from "../core/chips";
import { DisconnectedError, type Notification } from "../core/client";
import type { Suggestion } from "../core/mentions";
import { inputState, Outbox } from "../core/outbox";
import { indexingLine } from "../core/status";
import { groupedFingerprint, untrustedCertificate } from "../core/remote";
import type { ChatSendParams, StoredMessage } from "../core/protocol";
import { ErrorCode, PROVIDER_NAMES, PROVIDER_PROFILES, type ProviderName } from "../core/protocol";
import { modelHeader, pickerModels, type PickerModel } from "../core/model-picker";
import { ModelPicker, type PickScope } from "./model-picker";
import { RpcError } from "../core/rpc";
import { applyNotification, failTurn, finishSummary, finishTurn, markReview, newTurn, text, type ToolChip, type Turn } from "../core/stream";
import type { Assistant } from "./assistant";
import { ConversationList } from "./conversation-list";
import { actionOf, appendLinked } from "./dom";
import { ConfirmCommandCard, InstallCard, PairCard, PairedCard, StartFailedCard, type Card } from "./server-cards";
import { SetupCard } from "./setup-card";
import { acceptDrops, renderChipIcon } from "./drop";
import { Suggestions } from "./suggest";
import { TurnView } from "./turn-view";

export const VIEW_TYPE = "ai-bridge-assistant";

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
	private list!: ConversationList;
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
	private cardsEl!: HTMLElement;
	/** The card shown instead of the banner (install, command to confirm, setup), and its key. */
	private card: { key: string; card: Card } | null = null;
	/** The setup card stays open until Done once shown (no provider, or -32011). */
	private setupOpen = false;
	/** This conversation is the introduce-yourself one: every turn is sent with setup: true. */
	private setupConversation = false;
	private live: { view: TurnView; turn: Turn } | null = null;
	private readonly outbox = new Outbox<Ask>();
	/** The panel was connected once: a later wait is a reconnect, not the first start. */
	private everConnected = false;
	/** A message answered "no model yet" (-32011): answered once a model is picked. */
	private waitingForModel: { ask: Ask; view: TurnView } | null = null;
	private examples: Example[] = [];
	private modelButton!: HTMLButtonElement;
	private indexingEl!: HTMLElement;
	private picker!: ModelPicker;
	private thinkButton!: HTMLButtonElement;
	/** This conversation's model (the switcher's choice), else the server's default. */
	private modelChoice: PickerModel | null = null;
	/** The next message goes to the deep model (*Think harder*). */
	private thinkHarder = false;
	/** The server's chat model and provider (health), for the header. */
	private serverModel: { model: string | null; provider: string | null } = { model: null, provider: null };

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
		this.modelButton = header.createEl("button", { cls: "aib-model-button", attr: { "aria-label": "Choose the model" } });
		this.registerDomEvent(this.modelButton, "click", () => void this.toggleModelPicker());
		this.iconButton(header, "plus", "New conversation", () => this.newConversation());
		this.iconButton(header, "history", "Conversations", () => this.list.toggle());
		this.iconButton(header, "save", "Save conversation as note", () => void this.exportConversation());
		this.picker = this.addChild(new ModelPicker(root, (model, scope) => void this.pickModel(model, scope)));
		this.bannerEl = root.createDiv({ cls: "aib-banner" });
		this.indexingEl = root.createDiv({ cls: "aib-indexing aib-note" });
		this.registerDomEvent(this.bannerEl, "click", (event) => this.onBannerClick(event));
		this.list = this.addChild(
			new ConversationList(root, this.plugin.client, {
				open: (id) => void this.open(id),
				deleted: (id) => {
					if (this.conversationId === id) this.newConversation();
				},
			}),
		);
		this.messagesEl = root.createDiv({ cls: "aib-messages" });
		this.registerDomEvent(this.messagesEl, "click", (event) => this.onMessagesClick(event));
		// Cards sit above the input, below the conversation they are about.
		this.cardsEl = root.createDiv({ cls: "aib-cards" });
		this.buildComposer(root);
		this.registerEvent(this.app.workspace.on("active-leaf-change", () => this.renderChips()));
		this.showConnection();
		this.showEmptyState();
	}

	override async onClose(): Promise<void> {
		this.stop();
	}

	private buildComposer(root: HTMLElement): void {
		const composer = root.createDiv({ cls: "aib-composer" });
		this.chipsEl = composer.createDiv({ cls: "aib-chips" });
		this.registerDomEvent(this.chipsEl, "click", (event) => {
			const chip = event.target instanceof Element ? event.target.closest<HTMLElement>(".aib-chip") : null;
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
			new Suggestions(
				composer,
				this.inputEl,
				() => this.plugin.suggestionSource(),
				(item) => this.addMention(item),
				() => this.plugin.promptsHint(),
			),
		);
		// The selection may have changed in the editor: the active note's chip says what goes along.
		this.registerDomEvent(this.inputEl, "focus", () => this.renderChips());
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
		this.thinkButton = bar.createEl("button", { text: "Think harder", cls: "aib-think-harder", attr: { "aria-pressed": "false" } });
		this.registerDomEvent(this.thinkButton, "click", () => this.setThinkHarder(!this.thinkHarder));
		this.reasonEl = bar.createDiv({ cls: "aib-input-reason" });
		this.sendButton = bar.createEl("button", { text: "Send", cls: "mod-cta aib-send" });
		this.stopButton = bar.createEl("button", { text: "Stop", cls: "aib-stop is-hidden" });
		this.registerDomEvent(this.sendButton, "click", () => void this.submit());
		this.registerDomEvent(this.stopButton, "click", () => this.stop());
		acceptDrops(this, root, this.app, () => this.recentMarkdown()?.file?.path ?? "", (path) => this.setContext([{ note: path }]));
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
		this.reasonEl.setText("");
		this.bannerEl.empty();
		this.showIndexing();
		const carded = this.showCard();
		if (state.status === "connected") {
			if (!this.everConnected || this.serverModel.model === null) void this.loadServerModel();
			this.everConnected = true;
			if (state.chat && this.waitingForModel && !this.running) this.answerWaiting();
			if (this.outbox.size > 0 && !this.running) void this.flushOutbox();
			return;
		}
		if (carded) return;
		if (input.queues) {
			// Starting or reconnecting: neutral, with progress; red is only for a failure.
			const banner = this.bannerEl.createDiv({ cls: "aib-starting" });
			const line = banner.createDiv({ cls: "aib-starting-line" });
			line.createEl("progress", { cls: "aib-starting-progress" });
			const remote = this.plugin.remote();
			line.createSpan({
				text: this.everConnected ? "Reconnecting to the assistant…" : remote ? "Connecting to the server…" : "Starting the assistant…",
			});
			// Another computer's server may never answer (an untrusted certificate, a revoked
			// key): the last failure says why, while the plugin keeps trying.
			if (remote && state.status === "disconnected") {
				appendLinked(banner.createDiv({ cls: "aib-note aib-reason" }), state.reason);
				// An untrusted certificate: its fingerprint (wrapped, to compare with the one the
				// computer printed) and what to do.
				const fingerprint = this.plugin.serverChoice().fingerprint;
				if (untrustedCertificate(state.reason) && fingerprint) {
					const help = banner.createDiv({ cls: "aib-certificate" });
					help.createDiv({ text: "Check that this fingerprint is the one the computer printed when it paired this device, then install its certificate on this device (the guide above says how):" });
					help.createEl("code", { cls: "aib-fingerprint", text: groupedFingerprint(fingerprint) });
				}
			}
			if (this.outbox.size > 0) banner.createDiv({ cls: "aib-note", text: "Your message goes out as soon as it is ready." });
			return;
		}
		const banner = this.bannerEl.createDiv({ cls: "aib-disconnected" });
		appendLinked(banner.createDiv(), state.status === "disconnected" ? state.reason : "");
		banner.createDiv({ cls: "aib-note", text: "The input is off until the server is back." });
		const command = this.plugin.manualCommand();
		if (command && !this.plugin.settings.serverCommand) {
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

	/** The card the connection calls for, instead of the banner; false when there is none. */
	private showCard(): boolean {
		const state = this.plugin.client.connection;
		const problem = this.plugin.serverProblem();
		// A server on another computer is set up there: no setup card here.
		const remote = this.plugin.remote();
		if (state.status === "connected" && !state.chat && !remote) this.setupOpen = true;
		const choice = this.plugin.serverChoice();
		let key: string | null = null;
		if (remote && (!choice.address || !choice.key)) key = "pair";
		else if (state.status === "connected" && remote && this.plugin.justPaired() && this.plugin.client.caller) key = "paired";
		else if (state.status === "connected") key = this.setupOpen && !remote ? "setup" : null;
		else if (problem?.kind === "not-installed") key = "install";
		else if (problem?.kind === "confirm-command") key = `confirm:${problem.command}`;
		else if (problem?.kind === "start-failed") key = `failed:${problem.command}`;
		if (this.card?.key !== key) {
			if (this.card) this.removeChild(this.card.card);
			this.card = null;
			if (key === "install" && problem?.kind === "not-installed") {
				this.card = { key, card: this.addChild(new InstallCard(this.cardsEl, this.plugin, problem.install, problem.failure)) };
			} else if (key?.startsWith("failed:") && problem?.kind === "start-failed") {
				this.card = { key, card: this.addChild(new StartFailedCard(this.cardsEl, this.plugin, problem.command, problem.failure)) };
			} else if (key?.startsWith("confirm:") && problem?.kind === "confirm-command") {
				this.card = { key, card: this.addChild(new ConfirmCommandCard(this.cardsEl, this.plugin, problem.command)) };
			} else if (key === "pair") {
				this.card = { key, card: this.addChild(new PairCard(this.cardsEl, this.plugin)) };
			} else if (key === "paired" && this.plugin.client.caller) {
				this.card = { key, card: this.addChild(new PairedCard(this.cardsEl, this.plugin, choice.address, this.plugin.client.caller)) };
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
		this.contentEl.toggleClass("has-card", this.card !== null);
		return this.card !== null;
	}

	/** *Choose another model*: the model switcher. */
	chooseModel(): void {
		if (!this.picker.isOpen) void this.toggleModelPicker();
	}

	/** The server's chat model and provider (health: a client key may ask it too). */
	private async loadServerModel(): Promise<void> {
		try {
			const health = await this.plugin.client.call("health", {});
			this.serverModel = { model: health.model, provider: health.provider };
		} catch {
			return;
		}
		this.showModel();
	}

	private providerLabel(name: string | null): string | null {
		if (name === null) return null;
		return (PROVIDER_NAMES as readonly string[]).includes(name) ? PROVIDER_PROFILES[name as ProviderName].label : name;
	}

	/** The header's model: this conversation's choice, else `answered` (the last answer's), else
	 * the server's default. */
	private showModel(answered: string | null = null): void {
		if (!this.modelButton) return;
		const local = this.modelChoice?.local ?? this.plugin.localModel();
		const model = this.modelChoice?.label ?? answered ?? this.serverModel.model;
		this.modelButton.empty();
		setIcon(this.modelButton.createSpan({ cls: "aib-model-icon" }), "cpu");
		this.modelButton.createSpan({ cls: "aib-model-label", text: modelHeader(model, this.providerLabel(this.serverModel.provider), local) });
		setIcon(this.modelButton.createSpan({ cls: "aib-model-chevron" }), "chevron-down");
		this.modelButton.setAttribute("aria-label", `Answering: ${model ?? "no model yet"}. Choose another model`);
	}

	private setThinkHarder(on: boolean): void {
		this.thinkHarder = on;
		this.thinkButton.toggleClass("is-active", on);
		this.thinkButton.setAttribute("aria-pressed", String(on));
		this.thinkButton.setAttribute("aria-label", on ? "The next message goes to the deep model" : "Send the next message to the deep model");
	}

	/** Open the switcher with the chat provider's models (or close it). */
	private async toggleModelPicker(): Promise<void> {
		if (this.picker.isOpen) {
			this.picker.close();
			return;
		}
		const current = this.modelChoice?.spec ?? this.serverModel.model;
		this.picker.open([], current, "Loading the models…");
		try {
			const { models } = await this.plugin.client.call("models/list", {});
			const provider = this.serverModel.provider ?? "";
			const list = pickerModels(provider, this.providerLabel(provider) ?? "Models", models, this.plugin.localModel(), true);
			this.picker.open(list, current);
		} catch (error) {
			this.picker.open([], current, (error as Error).message);
		}
	}

	/** A model chosen: for this conversation, or saved as the server's chat model. */
	private async pickModel(model: PickerModel, scope: PickScope): Promise<void> {
		if (scope === "conversation") {
			this.modelChoice = model;
			this.showModel();
			return;
		}
		try {
			await this.plugin.client.call("settings/update", { models: { chat: model.spec } });
			this.modelChoice = null;
			await this.loadServerModel();
			new Notice(`${model.label} answers new conversations now.`);
		} catch (error) {
			new Notice((error as Error).message);
		}
	}

	/** Show the setup card (the related view's button: search by meaning is set up there). */
	openSetup(): void {
		this.setupOpen = true;
		this.showConnection();
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
			renderChipIcon(el.createSpan({ cls: "aib-chip-icon" }), chip.item, this.app);
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
		const setup = this.setupConversation || undefined;
		await this.ask({ text, promptId: prompt?.id, context: this.collectContext(prompt?.insert), setup });
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
		const sent = (ask.context ?? []).flatMap((item) => ("note" in item ? [item.note] : []));
		this.live = { view, turn: { ...newTurn(), sent } };
		view.update(this.live.turn);
		const controller = new AbortController();
		this.setRunning(controller);
		const params: ChatSendParams = { text: ask.text };
		if (this.conversationId) params.conversationId = this.conversationId;
		if (ask.promptId) params.promptId = ask.promptId;
		if (ask.context && ask.context.length > 0) params.context = ask.context;
		if (ask.setup) params.setup = true;
		// *Think harder* sends this one message to the deep model; else the switcher's choice.
		if (this.thinkHarder) {
			params.purpose = "deep";
			this.setThinkHarder(false);
		} else if (this.modelChoice && !ask.setup) {
			params.model = this.modelChoice.spec;
		}
		const live = this.live;
		try {
			const result = await this.plugin.client.call("chat/send", params, {
				signal: controller.signal,
				onNotification: (n: Notification) => {
					if (n.method === "chat/toolResult") this.plugin.toolFinished(text(n.params.id), n.params.isError === true, this);
					live.turn = applyNotification(live.turn, n);
					view.update(live.turn);
					this.scrollToEnd();
				},
			});
			this.conversationId = result.conversationId;
			live.turn = finishTurn(live.turn, result);
			this.showModel(result.model || null);
		} catch (error) {
			const cancelled = error instanceof RpcError && error.code === ErrorCode.cancelled;
			live.turn = failTurn(live.turn, error instanceof Error ? error : new Error(String(error)), cancelled);
			if (error instanceof DisconnectedError) this.showConnection();
			if (error instanceof RpcError && error.code === ErrorCode.noProvider && !this.plugin.remote()) {
				// No model yet: the setup card, rather than an error to read; the message is
				// answered once a model is picked.
				this.waitingForModel = { ask, view };
				this.setupOpen = true;
				this.showConnection();
			}
		} finally {
			this.setRunning(null);
		}
		view.update(live.turn);
		this.scrollToEnd();
	}

	/** A model was picked: the message that met "no model yet" is sent again, in place of the
	 * answer that said so. */
	private answerWaiting(): void {
		const waiting = this.waitingForModel;
		if (!waiting) return;
		this.waitingForModel = null;
		this.messages = this.messages.filter((message) => message !== waiting.view);
		this.removeChild(waiting.view);
		void this.send(waiting.ask);
	}

	/** While search is partial, how far indexing is (the status bar says it too). */
	showIndexing(): void {
		if (!this.indexingEl) return;
		this.indexingEl.setText(indexingLine(this.plugin.client.connection, this.plugin.indexProgress()) ?? "");
	}

	/** The conversation shown (null before its first answer). */
	currentConversation(): string | null {
		return this.conversationId;
	}

	/** A write of this conversation was undone: the message that made it says so. */
	markUndone(callId: string): void {
		for (const message of this.messages) if (message.markUndone(callId)) return;
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
			localModel: () => this.plugin.localModel(),
			openSetup: () => this.plugin.openSetup(),
			openSettings: () => this.plugin.openSettings(),
			chooseModel: () => this.chooseModel(),
		};
	}

	private onMessagesClick(event: MouseEvent): void {
		const target = event.target;
		if (!(target instanceof Element)) return;
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
		this.modelChoice = null;
		this.showModel();
		this.waitingForModel = null;
		this.conversationId = null;
		this.setupConversation = false;
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

	/** Show a stored conversation; the next message continues it. */
	async open(id: string): Promise<void> {
		try {
			const conversation = await this.plugin.client.call("conversations/get", { id });
			this.newConversation();
			this.clearEmptyState();
			this.conversationId = id;
			this.list.hide();
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
