// The setup card (issue 20): shown in the panel when the server has no model provider, instead
// of an error. It offers the models of the local runtimes found on this computer
// (runtimes/detect), or a hosted provider with an API key (settings/update, checked and kept by
// the server) and then its model list (models/list); search by meaning with no typing (a
// detected Ollama embedding model in one click, or the small model2vec model downloaded after
// the user agrees, with progress); and, on a vault with no context note, *Introduce yourself*.
import {
	ErrorCode,
	KEYED_PROVIDERS,
	PROVIDER_PROFILES,
	providerLabel,
	speaksCompatible,
	type KeyedProvider,
	type ParamsOf,
	type ResultOf,
} from "../core/protocol";
import { errorHelp, refusedKey } from "../core/error-help";
import { RpcError } from "../core/rpc";
import { isEmbeddingModel, toolSupport } from "../core/words";
import type { Assistant } from "./assistant";
import { Card } from "./server-cards";
import { SERVICE_EXAMPLE } from "./settings-tab";

type Runtime = ResultOf<"runtimes/detect">["runtimes"][number];
type Health = ResultOf<"health">;
const RUNTIME_NAMES: Record<Runtime["kind"], string> = { ollama: "Ollama", lmstudio: "LM Studio" };

export interface SetupActions {
	introduce: () => void;
	done: () => void;
}

export class SetupCard extends Card {
	private readonly modelEl: HTMLElement;
	private readonly searchEl: HTMLElement;
	private readonly introEl: HTMLElement;
	private readonly footerEl: HTMLElement;
	private runtimes: Runtime[] | null = null;
	private health: Health | null = null;
	private contextNote: string | null = null;
	private hasContextNote = true;
	private hosted: KeyedProvider = KEYED_PROVIDERS[0] ?? "anthropic";
	private download: AbortController | null = null;
	/** Whether the server had a provider when the card last drew its model section. */
	private drawnChat: boolean | null = null;
	/** The panel removed the card: answers still arriving draw nothing. */
	private closed = false;

	constructor(
		parent: HTMLElement,
		private readonly plugin: Assistant,
		private readonly actions: SetupActions,
	) {
		super(parent, "aib-setup-card");
		this.el.createDiv({ cls: "aib-card-title", text: "Set up the assistant" });
		this.modelEl = this.el.createDiv({ cls: "aib-setup-section" });
		this.searchEl = this.el.createDiv({ cls: "aib-setup-section" });
		this.introEl = this.el.createDiv({ cls: "aib-setup-section" });
		this.footerEl = this.el.createDiv({ cls: "aib-card-buttons" });
		this.modelEl.createDiv({ cls: "aib-card-hint", text: "Looking for models on this computer…" });
	}

	override onload(): void {
		void this.refresh();
	}

	override onunload(): void {
		this.closed = true;
		this.download?.abort();
		super.onunload();
	}

	/** The connection changed: redraw when the server's provider came or went. */
	override update(): void {
		const state = this.plugin.client.connection;
		if (state.status === "connected" && this.drawnChat !== null && state.chat !== this.drawnChat) void this.refresh();
	}

	private get chat(): boolean {
		const state = this.plugin.client.connection;
		return state.status === "connected" && state.chat;
	}

	/** Ask the server what there is (runtimes, provider, embedder, context note) and draw. */
	private async refresh(): Promise<void> {
		const client = this.plugin.client;
		const [runtimes, health, settings] = await Promise.all([
			client.call("runtimes/detect", {}).then((r) => r.runtimes, () => []),
			client.call("health", {}).catch(() => null),
			client.call("settings/get", {}).catch(() => null),
		]);
		this.runtimes = runtimes;
		this.health = health;
		this.contextNote = settings?.contextNote ?? null;
		this.hasContextNote = this.contextNote === null || (await this.noteExists(this.contextNote));
		if (!this.closed) this.draw();
	}

	private async noteExists(path: string): Promise<boolean> {
		try {
			await this.plugin.client.call("note/read", { path });
			return true;
		} catch (error) {
			return !(error instanceof RpcError && error.code === ErrorCode.noteNotFound);
		}
	}

	private draw(): void {
		this.drawnChat = this.chat;
		this.drawModels();
		this.drawSearch();
		this.drawIntro();
		this.footerEl.empty();
		// After starting Ollama or LM Studio, or pulling a model.
		this.button(this.footerEl, "Look again", () => void this.refresh());
		if (this.chat) this.button(this.footerEl, "Done", () => this.actions.done(), true);
	}

	private drawModels(): void {
		const el = this.modelEl;
		el.empty();
		if (this.chat) {
			const model = this.health?.model ?? "the chosen model";
			el.createDiv({ cls: "aib-setup-done", text: `✓ ${model} answers (${this.health?.provider ?? "provider"}). Ask away.` });
			return;
		}
		el.createDiv({ cls: "aib-setup-heading", text: "Choose the model that answers" });
		const usable = (this.runtimes ?? []).filter((r) => r.reachable);
		el.createDiv({
			cls: "aib-card-hint",
			text: usable.length === 0 ? "No Ollama or LM Studio is running on this computer." : "Models on this computer:",
		});
		for (const runtime of usable) {
			el.createDiv({ cls: "aib-setup-runtime", text: `${RUNTIME_NAMES[runtime.kind]} · ${runtime.baseUrl}` });
			const chatModels = runtime.models.filter((m) => !m.embedding);
			if (chatModels.length === 0) el.createDiv({ cls: "aib-card-hint", text: "No chat models pulled yet." });
			for (const model of chatModels) {
				const row = el.createDiv({ cls: "aib-setup-model" });
				row.createSpan({ cls: "aib-setup-model-id", text: model.id });
				row.createSpan({ cls: "aib-setup-badge", text: toolSupport(model.supportsTools) });
				this.button(row, "Use", () => void this.useLocal(runtime, model.id, row));
			}
		}
		this.drawHosted(el.createDiv({ cls: "aib-setup-hosted" }));
	}

	private drawHosted(el: HTMLElement): void {
		el.createDiv({ cls: "aib-setup-heading", text: "Or a hosted provider with an API key" });
		const select = el.createEl("select", { cls: "dropdown aib-setup-provider" });
		for (const name of KEYED_PROVIDERS) {
			const option = select.createEl("option", { text: providerLabel(name) });
			option.value = name;
		}
		select.value = this.hosted;
		const input = el.createEl("input", { type: "password", cls: "aib-setup-key-input", attr: { placeholder: "Paste an API key" } });
		// OpenAI-compatible hosted services (OpenRouter, a company gateway): their address.
		const baseUrl = el.createEl("input", {
			type: "text",
			cls: "aib-setup-base-url",
			attr: { placeholder: `Service address, e.g. ${SERVICE_EXAMPLE} (empty: OpenAI)` },
		});
		const showBaseUrl = (): void => baseUrl.toggleClass("is-hidden", !speaksCompatible(this.hosted));
		showBaseUrl();
		this.registerDomEvent(select, "change", () => {
			this.hosted = KEYED_PROVIDERS.find((name) => name === select.value) ?? this.hosted;
			showBaseUrl();
		});
		const row = el.createDiv({ cls: "aib-card-buttons" });
		const message = row.createDiv({ cls: "aib-card-hint aib-setup-key-message" });
		const models = el.createDiv({ cls: "aib-setup-models" });
		this.button(row, "Check key", () => void this.useKey(input.value.trim(), baseUrl.value.trim(), message, models), true);
	}

	/** A local runtime's model: Ollama directly, LM Studio through its OpenAI-compatible API. */
	private async useLocal(runtime: Runtime, model: string, row: HTMLElement): Promise<void> {
		const provider = runtime.kind === "ollama" ? "ollama" : "openai";
		await this.save({ provider, baseUrl: runtime.baseUrl, models: { chat: model } }, row);
	}

	private async useKey(key: string, baseUrl: string, message: HTMLElement, modelsEl: HTMLElement): Promise<void> {
		if (!key) {
			message.setText("Paste a key first.");
			return;
		}
		message.setText("Checking the key…");
		const provider = this.hosted;
		try {
			const url = speaksCompatible(provider) && baseUrl ? baseUrl : null;
			await this.plugin.client.call("settings/update", { provider, baseUrl: url, [`${provider}ApiKey` as const]: key });
			const { models } = await this.plugin.client.call("models/list", {});
			message.setText(`The key works. Pick a model from ${url ? new URL(url).host : PROVIDER_PROFILES[provider].label}:`);
			modelsEl.empty();
			for (const model of models.filter((m) => !isEmbeddingModel(m))) {
				const row = modelsEl.createDiv({ cls: "aib-setup-model" });
				row.createSpan({ cls: "aib-setup-model-id", text: model.displayName ?? model.id });
				if (model.supportsTools !== null) row.createSpan({ cls: "aib-setup-badge", text: toolSupport(model.supportsTools) });
				this.button(row, "Use", () => void this.save({ models: { chat: model.id } }, row));
			}
		} catch (error) {
			// In the setup card itself, a refused key is fixed right here.
			message.setText(refusedKey(error as Error) ? "The provider refused this key: check it, then paste it again." : errorHelp(error as Error, false).message);
		}
	}

	/** Save server settings, then follow the server's new state (health says the provider). */
	private async save(changes: ParamsOf<"settings/update">, row: HTMLElement): Promise<void> {
		const status = row.createSpan({ cls: "aib-card-hint", text: " Saving…" });
		try {
			await this.plugin.client.call("settings/update", changes);
			await this.plugin.client.refreshStatus();
			await this.refresh();
		} catch (error) {
			status.setText(` ${(error as Error).message}`);
		}
	}

	private drawSearch(): void {
		const el = this.searchEl;
		el.empty();
		const embedder = this.health?.index.embedder;
		if (embedder) {
			el.createDiv({ cls: "aib-setup-done", text: `✓ Search by meaning with ${embedder.model}.` });
			return;
		}
		el.createDiv({ cls: "aib-setup-heading", text: "Search by meaning" });
		const ollama = (this.runtimes ?? []).find((r) => r.kind === "ollama" && r.reachable && r.models.some((m) => m.embedding));
		const model = ollama?.models.find((m) => m.embedding);
		if (ollama && model) {
			const row = el.createDiv({ cls: "aib-setup-model" });
			row.createSpan({ text: `Use ${model.id} from Ollama to find notes by meaning, not only by words.` });
			this.button(row, "Use", () => void this.save({ embedder: `ollama:${model.id}`, embedderBaseUrl: ollama.baseUrl }, row), true);
			return;
		}
		el.createDiv({
			text: "Finding notes by meaning needs a small local model (about 30 MB), downloaded once from Hugging Face into the assistant's data folder. Nothing is downloaded until you agree.",
		});
		const row = el.createDiv({ cls: "aib-card-buttons" });
		this.button(row, "Download", () => void this.downloadEmbedder(row), true);
	}

	private async downloadEmbedder(row: HTMLElement): Promise<void> {
		row.empty();
		const progress = row.createEl("progress", { cls: "aib-setup-progress" });
		const label = row.createSpan({ cls: "aib-card-hint", text: "Starting the download…" });
		const controller = new AbortController();
		this.download = controller;
		this.button(row, "Cancel", () => controller.abort());
		try {
			const result = await this.plugin.client.call(
				"embedder/download",
				{},
				{
					signal: controller.signal,
					onNotification: (n) => {
						if (n.method !== "embedder/downloadProgress") return;
						const { done, total } = n.params;
						if (total <= 0) return;
						progress.max = total;
						progress.value = done;
						label.setText(`${megabytes(done)} of ${megabytes(total)}`);
					},
				},
			);
			await this.plugin.client.refreshStatus();
			label.setText(`Done: search by meaning with ${result.embedder}.`);
			await this.refresh();
		} catch (error) {
			const cancelled = error instanceof RpcError && error.code === ErrorCode.cancelled;
			row.empty();
			row.createSpan({ cls: "aib-card-hint", text: cancelled ? "Download cancelled; search by words still works." : (error as Error).message });
			this.button(row, "Try again", () => void this.downloadEmbedder(row));
		} finally {
			if (this.download === controller) this.download = null;
		}
	}

	private drawIntro(): void {
		const el = this.introEl;
		el.empty();
		if (this.hasContextNote) return;
		el.createDiv({ cls: "aib-setup-heading", text: "Introduce yourself" });
		el.createDiv({
			text: `A short conversation: what this vault is for, how you like answers, what to leave alone. The assistant keeps it in ${this.contextNote ?? "its context note"} (you review the write) and reads it in every chat.`,
		});
		const row = el.createDiv({ cls: "aib-card-buttons" });
		const button = this.button(row, "Introduce yourself", () => this.actions.introduce(), this.chat);
		button.disabled = !this.chat;
		if (!this.chat) row.createSpan({ cls: "aib-card-hint", text: "After choosing a model." });
	}
}

function megabytes(bytes: number): string {
	return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
