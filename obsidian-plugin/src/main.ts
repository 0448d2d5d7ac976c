// The plugin: connects to the vault's bridge server (on this computer, finding or starting it;
// or on another computer, by the address and client key this device was given), and gives the
// assistant panel, the related-notes view, the commands, reviewable writes that go through
// Obsidian's editor, and the settings tab.
import { FileSystemAdapter, getAllTags, MarkdownView, Notice, Platform, Plugin, requestUrl, TFile, TFolder, type WorkspaceLeaf } from "obsidian";
import { ATTACHMENT_EXTENSIONS } from "./core/chips";
import { BridgeClient, NoServerError, type ConnectionState, type Endpoint, type Notification, type ServerRequestHandlers, type Timers } from "./core/client";
import { Connector, type ServerProblem } from "./core/connector";
import type { Review } from "./core/diff";
import { diagnoseHandshake, type Host } from "./core/host";
import { installPlan, Installation, type InstallPlan } from "./core/installer";
import { suggestedCommand } from "./core/launcher";
import type { SuggestionSource } from "./core/mentions";
import type { IndexProgress, ToolConfirmParams, ToolConfirmResult } from "./core/protocol";
import {
	defaultChoice,
	diagnoseRemote,
	PAIR_ACTION,
	PAIR_COMMAND,
	pairingFromParams,
	remoteEndpoint,
	SETUP_COMMAND,
	type ChoiceStore,
	type Fetch,
	type Pairing,
	type ServerChoice,
} from "./core/remote";
import { legacyManualServer, loadSettings, type PluginSettings } from "./core/settings";
import { count, statusText, statusTitle } from "./core/status";
import type { Assistant, Prompt } from "./ui/assistant";
import { ConfirmModal } from "./ui/confirm-modal";
import { SettingsConfirmModal } from "./ui/settings-confirm-modal";
import { localMachineStore, localServerChoice } from "./ui/machine-store";
import { createNodeHost } from "./ui/node-host";
import { PairModal } from "./ui/pair-modal";
import { addCommands, COMMAND_IDS } from "./ui/commands";
import { RelatedView, RELATED_VIEW_TYPE } from "./ui/related-view";
import { AssistantSettingTab } from "./ui/settings-tab";
import { AssistantView, VIEW_TYPE, type Ask } from "./ui/view";
import { applyInObsidian } from "./ui/write-through";

export default class AssistantPlugin extends Plugin implements Assistant {
	override settings!: PluginSettings;
	client!: BridgeClient;
	/** The server on this computer (desktop only): made when first needed, never on a phone. */
	private connector: Connector | null = null;
	private host: Host | null = null;
	private local: Promise<Connector | null> | null = null;
	/** This device's *Server* choice (kept outside data.json, which syncs). */
	private choices!: ChoiceStore;
	private timers!: Timers;
	private statusEl!: HTMLElement;
	private prompts: Prompt[] = [];
	private embedding: IndexProgress | null = null;
	private connected = false;
	private indexPoll: number | null = null;
	private promptCommands = new Set<string>();
	/** The plugin started the server and waits for it (the status bar says *starting*). */
	private starting = false;
	/** What the server's settings say: the prompts folder, and whether its model runs here. */
	private serverFacts = { promptsFolder: "Assistant/Prompts", local: false, chat: false };
	/** Another computer being tried while the server here keeps running (not saved yet). */
	private trying: ServerChoice | null = null;
	/** A pairing was made: the panel says "Connected to HOST as NAME" once it answers. */
	private paired = false;
	/** The install card's *Install*, once this desktop has a host. */
	private installer: Installation | null = null;
	/** Notes of approved writes by tool call id, until the call's result says it was made. */
	private readonly approvedWrites = new Map<string, string[]>();

	override async onload(): Promise<void> {
		const saved: unknown = await this.loadData();
		this.settings = loadSettings(saved);
		this.choices = localServerChoice(this.vaultPath() ?? this.app.vault.getName());
		// The former *Manual address and token* (in data.json, which syncs) becomes this device's
		// *Another computer*, and leaves data.json.
		const manual = legacyManualServer(saved);
		if (manual) {
			if (this.choices.load() === null) this.choices.save({ mode: "another-computer", ...manual });
			await this.saveSettings();
		}
		this.timers = {
			setTimeout: (callback, ms) => window.setTimeout(callback, ms),
			clearTimeout: (handle) => window.clearTimeout(handle),
			now: () => Date.now(),
		};
		this.client = new BridgeClient({
			socket: (url, protocols) => new WebSocket(url, protocols),
			endpoint: () => this.endpoint(),
			client: { name: this.manifest.id, version: this.manifest.version },
			timers: this.timers,
			diagnose: (endpoint) => this.diagnose(endpoint),
			onState: (state) => this.onState(state),
			onNotification: (notification) => this.onNotification(notification),
			onServerRequest: this.serverRequestHandlers(),
			onImpostor: (endpoint) => this.connector?.refused(endpoint.url),
		});

		this.registerView(VIEW_TYPE, (leaf: WorkspaceLeaf) => new AssistantView(leaf, this));
		this.registerView(RELATED_VIEW_TYPE, (leaf: WorkspaceLeaf) => new RelatedView(leaf, this));
		this.statusEl = this.addStatusBarItem();
		this.statusEl.addClass("aib-status");
		this.registerDomEvent(this.statusEl, "click", () => void this.activateView());
		this.addRibbonIcon("bot", "Open assistant", () => void this.activateView());
		addCommands(this);
		this.addSettingTab(new AssistantSettingTab(this.app, this));
		// A scanned pairing QR code (`clients add NAME --pair`) opens obsidian://ai-bridge-pair?…
		this.registerObsidianProtocolHandler(PAIR_ACTION, (params) => this.pair(pairingFromParams(params)));
		this.register(() => {
			if (this.indexPoll !== null) window.clearTimeout(this.indexPoll);
			this.client.stop();
			this.connector?.stopServer();
		});
		// Obsidian quitting may not unload plugins first: the server started here stops with it,
		// and the client stops too, so it does not start another one meanwhile.
		this.registerDomEvent(window, "beforeunload", () => {
			this.client.stop();
			this.connector?.stopServer();
		});
		this.app.workspace.onLayoutReady(() => this.client.start());
	}

	/** The machine's Node APIs (null off the desktop). */
	protected createHost(): Promise<Host | null> {
		return createNodeHost();
	}

	/** The server on this computer: its connector, made once; null on a phone, where no Node
	 * module is ever loaded. */
	private localConnector(): Promise<Connector | null> {
		this.local ??= this.createConnector();
		return this.local;
	}

	private async createConnector(): Promise<Connector | null> {
		if (Platform.isMobile) return null;
		const host = await this.createHost();
		const vaultPath = this.vaultPath();
		if (!host || !vaultPath) return null;
		this.host = host;
		this.connector = new Connector(host, vaultPath, () => this.settings, localMachineStore(vaultPath), this.timers, {
			onServerStarting: () => {
				this.starting = true;
				this.onState(this.client.connection);
			},
			onServerExited: (code, output) => {
				this.starting = false;
				// Before it was ready, the panel's card says what failed (with Details).
				if (code !== 0 && code !== null && this.connected) new Notice(`The assistant server stopped: ${output.slice(-2).join(" ")}`);
			},
			onRegistry: (url) => requestUrl({ url, throw: false }).then((response) => response.status === 200),
		});
		return this.connector;
	}

	private vaultPath(): string | null {
		const adapter = this.app.vault.adapter;
		return adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null;
	}

	/** How this device reaches the server: on a phone always another computer. */
	serverChoice(): ServerChoice {
		const choice = this.trying ?? this.choices.load() ?? defaultChoice(Platform.isMobile);
		return Platform.isMobile ? { ...choice, mode: "another-computer" } : choice;
	}

	/** Whether the server is on another computer (no setup card, no server settings here). */
	remote(): boolean {
		return this.serverChoice().mode === "another-computer";
	}

	/** Keep this device's choice and connect anew by it. Another computer chosen while this
	 * desktop runs its server is tried first: the server here keeps running, and the choice is
	 * saved, once the new address answers (onState). */
	setServerChoice(choice: ServerChoice): void {
		if (choice.mode === "another-computer" && this.connector?.ownsServer) {
			this.trying = choice;
		} else {
			this.trying = null;
			this.choices.save(choice);
		}
		this.client.stop();
		this.client.start();
		for (const view of this.views()) view.showConnection();
	}

	pairWith(pairing: Pairing): void {
		this.paired = true;
		this.setServerChoice({ mode: "another-computer", ...pairing });
	}

	justPaired(): boolean {
		return this.paired;
	}

	pairingSeen(): void {
		this.paired = false;
		for (const view of this.views()) view.showConnection();
	}

	/** A pairing link (a scanned QR code): used once the user agrees. */
	private pair(pairing: Pairing | null): void {
		if (pairing === null) {
			new Notice(`This pairing link has no usable address and key: print a new one with ${PAIR_COMMAND}.`);
			return;
		}
		new PairModal(this.app, pairing, () => {
			this.pairWith(pairing);
			new Notice(`Connecting to the server at ${pairing.address}.`);
		}).open();
	}

	private async endpoint(): Promise<Endpoint> {
		const choice = this.serverChoice();
		if (choice.mode === "another-computer") return remoteEndpoint(choice);
		const connector = await this.localConnector();
		if (connector === null) throw new NoServerError("This device cannot run the server: choose Another computer in the plugin settings.");
		return connector.endpoint();
	}

	private async diagnose(endpoint: Endpoint): Promise<string | null> {
		if (endpoint.remote) return diagnoseRemote(fetchUrl, this.serverChoice().address, endpoint.token);
		if (this.host === null) return null;
		const { status, message } = await diagnoseHandshake(this.host, endpoint.url, window.location.origin);
		if (status === 0) this.connector?.refused(endpoint.url);
		return message;
	}

	/** The command to start the server by hand, for the disconnected panel. */
	manualCommand(): string | null {
		return this.remote() ? null : (this.connector?.manualCommand ?? null);
	}

	exampleCommand(): string {
		return `${suggestedCommand("{vault}").replace("'{vault}'", "{vault}")}`;
	}

	async saveSettings(): Promise<void> {
		await this.saveData(this.settings);
	}

	/** What the panel offers when there is no server: the install card, or a question about a
	 * Server command this computer did not set. */
	serverProblem(): ServerProblem | null {
		return this.remote() ? null : (this.connector?.problem ?? null);
	}

	installation(): Installation | null {
		const vaultPath = this.vaultPath();
		if (this.installer === null && this.host !== null && vaultPath !== null) {
			this.installer = new Installation(this.host, this.host.join(vaultPath, this.pluginFolder()), vaultPath, this.timers);
		}
		return this.installer;
	}

	/** The plugin's folder, relative to the vault (where uv's archive is kept). */
	private pluginFolder(): string {
		return this.manifest.dir ?? `${this.app.vault.configDir}/plugins/${this.manifest.id}`;
	}

	async installPlan(): Promise<InstallPlan | null> {
		const connector = await this.localConnector();
		if (connector === null || this.host === null) return null;
		return installPlan(this.host, (await connector.installCommands()).source);
	}

	install(): void {
		void (async () => {
			const plan = await this.installPlan();
			const installation = this.installation();
			if (plan === null || installation === null) return;
			if (await installation.run(plan)) this.checkServer();
		})();
	}

	checkServer(): void {
		this.connector?.checkAgain();
		this.client.reconnectNow();
	}

	/** Keep the Server command, and whether this computer may run it: the user's answer in the
	 * panel, or a command typed in the settings here (which counts as allowed). */
	async setServerCommand(command: string, allowed: boolean): Promise<void> {
		this.connector?.confirmCommand(command, allowed);
		if (this.settings.serverCommand !== command) {
			this.settings.serverCommand = command;
			await this.saveSettings();
		}
	}

	private onState(state: ConnectionState): void {
		if (state.status !== "connecting") this.starting = false;
		if (state.status === "connected" && this.trying !== null) {
			// The other computer answers: the choice is kept, and the server here is not needed.
			this.choices.save(this.trying);
			this.trying = null;
			this.connector?.stopServer();
		}
		const notInstalled = this.serverProblem()?.kind === "not-installed";
		this.statusEl.setText(statusText(state, this.embedding, this.starting, notInstalled));
		this.statusEl.setAttribute("aria-label", notInstalled ? "Install the assistant's server: the panel shows how." : statusTitle(state, this.starting));
		this.statusEl.toggleClass("aib-status-off", state.status === "disconnected" && !notInstalled);
		for (const view of this.views()) view.showConnection();
		const connectedNow = state.status === "connected" && !this.connected;
		this.connected = state.status === "connected";
		if (connectedNow) void this.loadPrompts();
		if (state.status === "connected" && (connectedNow || state.chat !== this.serverFacts.chat)) {
			this.serverFacts.chat = state.chat;
			void this.loadServerFacts();
		}
		if (state.status === "connected" && state.pending > 0 && this.indexPoll === null) {
			// While the first index builds, the status bar follows it every second (one poll at a time).
			this.indexPoll = window.setTimeout(() => {
				this.indexPoll = null;
				void this.client.refreshStatus().catch(() => undefined);
			}, 1000);
		}
	}

	private onNotification(notification: Notification): void {
		if (notification.method === "index/progress") {
			this.onProgress(notification.params);
			return;
		}
		if (notification.method === "budget/warning") {
			const p = notification.params;
			new Notice(`The assistant has used $${p.spentUsd.toFixed(2)} of its ${p.period} budget of $${p.budgetUsd.toFixed(2)}.`);
		}
	}

	private onProgress(progress: IndexProgress): void {
		const phaseChanged = progress.phase !== this.embedding?.phase;
		this.embedding = progress;
		this.statusEl.setText(statusText(this.client.connection, progress));
		for (const view of this.views()) view.showIndexing();
		if (!phaseChanged) return;
		if (progress.phase === "error" && progress.error) new Notice(progress.error);
		if (progress.phase === "confirm") this.askToEmbed(progress);
	}

	/** A paid embedder waits for approval before embedding the vault (index/confirmEmbedding). */
	private askToEmbed(progress: IndexProgress): void {
		const cost = progress.estimatedUsd === null || progress.estimatedUsd === undefined
			? "an unknown cost"
			: `about $${progress.estimatedUsd.toFixed(2)}`;
		const tokens = (progress.estimatedTokens ?? 0).toLocaleString("en");
		const fragment = createFragment((f) => {
			f.createSpan({ text: `Search by meaning needs ${count(progress.total, "passage")} of your notes sent to ${progress.model}: ${cost} (${tokens} tokens). ` });
			const go = f.createEl("button", { text: "Embed" });
			this.registerDomEvent(go, "click", () => {
				this.client
					.call("index/confirmEmbedding", {})
					.then(() => new Notice("Embedding started."))
					.catch((error: Error) => new Notice(error.message));
			});
		});
		new Notice(fragment, 0);
	}

	/** The server's requests this plugin answers, each with its method's result. */
	private serverRequestHandlers(): ServerRequestHandlers {
		return {
			"tool/confirm": (params) => this.review(params),
			"note/apply": async (params) => {
				this.answersLocally("note/apply");
				return applyInObsidian(this.app, params);
			},
			"settings/confirm": async (params) => {
				this.answersLocally("settings/confirm");
				return new Promise((resolve) => new SettingsConfirmModal(this.app, params, resolve).open());
			},
		};
	}

	/** A server on another computer makes its writes itself and asks its own computer's plugin
	 * about its settings: only reviews come here from it. */
	private answersLocally(method: string): void {
		if (this.remote()) {
			throw new Error(`This device is a client of a server on another computer: it does not answer ${method}.`);
		}
	}

	/** A write the model wants to make, reviewed change by change (or a new note, allowed by the
	 * settings without asking); the chat shows the call as waiting for the review meanwhile. */
	private async review(request: ToolConfirmParams): Promise<ToolConfirmResult> {
		const changes = request.changes ?? [];
		const creates = changes.length > 0 && changes.every((change) => change.before === null);
		if (this.settings.confirmPolicy === "allow-create" && creates) return { approved: true };
		const callId = request.callId ?? null;
		this.markReview(callId, "waiting");
		const review = await new Promise<Review>((resolve) => new ConfirmModal(this.app, request, resolve).open());
		this.markReview(callId, review.approved ? null : "denied");
		if (review.approved && callId !== null) this.approvedWrites.set(callId, changes.map((change) => change.path));
		return review;
	}

	/** A tool call of a turn finished: Undo is offered for an approved write that was made. */
	toolFinished(callId: string, isError: boolean, view: AssistantView): void {
		const paths = this.approvedWrites.get(callId);
		this.approvedWrites.delete(callId);
		if (paths && !isError) for (const path of paths) this.offerUndo(path, callId, view);
	}

	private markReview(callId: string | null, review: "waiting" | "denied" | null): void {
		if (callId === null) return;
		for (const view of this.views()) view.markReview(callId, review);
	}

	/** A notice with Undo for a write the assistant made: once used, its button says Undone
	 * and is off, the conversation shows the change as undone, and the model hears of it in the
	 * conversation's next turn. */
	private offerUndo(path: string, callId: string, view: AssistantView): void {
		if (!path) return;
		const fragment = createFragment((f) => {
			f.createSpan({ text: `The assistant changed ${path}. ` });
			const undo = f.createEl("button", { text: "Undo", cls: "aib-undo" });
			this.registerDomEvent(undo, "click", () => {
				undo.disabled = true;
				undo.setText("Undoing…");
				const conversationId = view.currentConversation();
				this.client
					.call("note/undo", conversationId ? { path, conversationId } : { path })
					.then(() => {
						undo.setText("Undone");
						view.markUndone(callId);
						new Notice(`Undid the change to ${path}.`);
					})
					.catch((error: Error) => {
						undo.disabled = false;
						undo.setText("Undo");
						new Notice(error.message);
					});
			});
		});
		new Notice(fragment, 10_000);
	}

	private views(): AssistantView[] {
		return this.app.workspace
			.getLeavesOfType(VIEW_TYPE)
			.map((leaf) => leaf.view)
			.filter((view): view is AssistantView => view instanceof AssistantView);
	}

	/** Open (or reveal) the panel in the right sidebar and return it. */
	async activateView(): Promise<AssistantView | null> {
		const leaf = await this.app.workspace.ensureSideLeaf(VIEW_TYPE, "right", { active: true, reveal: true });
		await this.app.workspace.revealLeaf(leaf);
		return leaf.view instanceof AssistantView ? leaf.view : null;
	}

	/** Open (or reveal) the related-notes view in the right sidebar. */
	async activateRelated(): Promise<void> {
		const leaf = await this.app.workspace.ensureSideLeaf(RELATED_VIEW_TYPE, "right", { active: true, reveal: true });
		await this.app.workspace.revealLeaf(leaf);
		if (leaf.view instanceof RelatedView) await leaf.view.refresh();
	}

	/** Where semantic search is set up: the panel's setup card. */
	openSetup(): void {
		if (this.remote()) {
			new Notice(`The model and semantic search are set up on the computer the server runs on (its plugin, or ${SETUP_COMMAND}).`);
			return;
		}
		void this.activateView().then((view) => view?.openSetup());
	}

	openSettings(): void {
		// Obsidian's settings window is not in its published API; every plugin reaches it so.
		const setting = (this.app as unknown as { setting?: { open(): void; openTabById(id: string): void } }).setting;
		setting?.open();
		setting?.openTabById(this.manifest.id);
	}

	private async askInPanel(ask: Ask): Promise<void> {
		const view = await this.activateView();
		await view?.ask(ask);
	}

	private async loadPrompts(): Promise<void> {
		try {
			const { prompts } = await this.client.call("prompts/list", {});
			this.prompts = prompts.map((p) => ({ ...p, command: `/${slug(p.name)}` }));
		} catch {
			return;
		}
		for (const prompt of this.prompts) {
			const id = `${COMMAND_IDS.promptPrefix}${slug(prompt.id)}`;
			if (this.promptCommands.has(id)) continue;
			this.promptCommands.add(id);
			this.addCommand({
				id,
				name: `Prompt: ${prompt.name}`,
				callback: () => void this.runPrompt(prompt.id),
			});
		}
	}

	private async loadServerFacts(): Promise<void> {
		// settings/get is the info file token's: a client key is refused it.
		if (this.remote()) return;
		try {
			const settings = await this.client.call("settings/get", {});
			this.serverFacts.promptsFolder = settings.promptsFolder;
			this.serverFacts.local = isLocal(settings.provider, settings.baseUrl);
		} catch {
			// Not connected any more: the next connection asks again.
		}
	}

	localModel(): boolean {
		return this.serverFacts.local;
	}

	indexProgress(): IndexProgress | null {
		return this.embedding;
	}

	/** Also asks the server for its prompts again, so a note added meanwhile is offered next. */
	promptsHint(): string {
		void this.loadPrompts();
		const folder = this.serverFacts.promptsFolder;
		return `No prompts yet. Each note in the folder ${folder}/ is a prompt: add a note there (its name becomes the /command, its text the prompt), then type / again.`;
	}

	private async runPrompt(id: string): Promise<void> {
		const prompt = this.prompts.find((p) => p.id === id);
		if (!prompt) return;
		const view = this.app.workspace.getActiveViewOfType(MarkdownView);
		const file = view?.file;
		const selection = view?.editor.getSelection() ?? "";
		const context =
			!file || prompt.insert === "none"
				? []
				: prompt.insert === "selection" && selection
					? [{ note: file.path, selection }]
					: [{ note: file.path }];
		await this.askInPanel({ text: "", promptId: prompt.id, context });
	}

	/** The prompt a `/command` at the start of the input names, if any. */
	promptFor(text: string): Prompt | undefined {
		return this.prompts.find((p) => text === p.command || text.startsWith(`${p.command} `));
	}

	suggestionSource(): SuggestionSource {
		const notes: string[] = [];
		const folders: string[] = [];
		for (const file of this.app.vault.getAllLoadedFiles()) {
			if (file instanceof TFile && (file.extension === "md" || ATTACHMENT_EXTENSIONS.has(file.extension.toLowerCase()))) notes.push(file.path);
			else if (file instanceof TFolder && file.path !== "/") folders.push(file.path);
		}
		const tags = new Set<string>();
		for (const file of this.app.vault.getMarkdownFiles()) {
			const cache = this.app.metadataCache.getFileCache(file);
			for (const tag of cache ? (getAllTags(cache) ?? []) : []) tags.add(tag);
		}
		return { notes, folders, tags: [...tags].sort(), prompts: this.prompts };
	}
}

/** requestUrl as core/remote.ts asks the server (not bound by CORS, and on phones too). */
const fetchUrl: Fetch = (url, headers) =>
	requestUrl({ url, headers, throw: false }).then((response) => ({ status: response.status, text: response.text }));

/** A model on this computer: Ollama, or an OpenAI-compatible server on a loopback address. */
function isLocal(provider: string | null, baseUrl: string | null): boolean {
	if (provider === "ollama") return true;
	if (!baseUrl) return false;
	try {
		return /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(new URL(baseUrl).hostname);
	} catch {
		return false;
	}
}

function slug(text: string): string {
	return text
		.toLowerCase()
		.replace(/\.md$/, "")
		.replace(/[^\p{L}\p{N}]+/gu, "-")
		.replace(/^-+|-+$/g, "");
}
