// One message of the conversation on screen: Markdown rendered by Obsidian (re-rendered at most
// every RENDER_MS while it streams, swapped in whole so nothing flickers), tool chips, usage,
// sources and an error banner with Retry.
import { Component, MarkdownRenderer, type App } from "obsidian";
import type { ToolChip, Turn } from "../core/stream";
import { ErrorCode } from "../core/protocol";
import { chipState, markReview, splitSources, usageLine, usageTitle } from "../core/stream";
import { RpcError } from "../core/rpc";
import { toolResultView, toolSentence, type ToolResultView } from "../core/words";
import { ACTION_LABELS, errorHelp, type ErrorAction } from "../core/error-help";

const RENDER_MS = 80;

export interface TurnActions {
	openNote(path: string): void;
	retry(): void;
	/** An error's ways out: the setup card, the plugin's settings, the model switcher. */
	openSetup(): void;
	openSettings(): void;
	chooseModel(): void;
	/** Whether the model answering runs on this computer (no price: it is free). */
	localModel(): boolean;
}

export class TurnView extends Component {
	readonly el: HTMLElement;
	private readonly bodyEl: HTMLElement;
	private readonly toolsEl: HTMLElement;
	private readonly footerEl: HTMLElement;
	private rendered = "";
	private renderTimer: number | null = null;
	private markdown: Component | null = null;
	private turn: Turn | null = null;

	constructor(
		private readonly app: App,
		parent: HTMLElement,
		role: "user" | "assistant",
		private readonly actions: TurnActions,
	) {
		super();
		this.el = parent.createDiv({ cls: ["aib-message", `aib-${role}`] });
		this.toolsEl = this.el.createDiv({ cls: "aib-tools" });
		this.bodyEl = this.el.createDiv({ cls: "aib-body markdown-rendered" });
		this.footerEl = this.el.createDiv({ cls: "aib-footer" });
	}

	/** A finished message (the user's, or one loaded from a stored conversation). */
	showText(text: string): void {
		this.rendered = text;
		void this.renderNow(text);
	}

	/** Follow a streaming turn: text re-rendered on a short timer, everything else at once. */
	update(turn: Turn): void {
		this.turn = turn;
		this.renderTools(turn.tools);
		if (turn.done) {
			this.flush();
			this.renderFooter(turn);
		} else if (this.renderTimer === null && turn.text !== this.rendered) {
			this.renderTimer = window.setTimeout(() => this.flush(), RENDER_MS);
		}
		this.el.toggleClass("aib-streaming", !turn.done);
	}

	private flush(): void {
		if (this.renderTimer !== null) window.clearTimeout(this.renderTimer);
		this.renderTimer = null;
		const text = this.turn?.text ?? "";
		if (text !== this.rendered) {
			this.rendered = text;
			void this.renderNow(text);
		}
	}

	private async renderNow(text: string): Promise<void> {
		const next = new Component();
		this.addChild(next);
		const target = createDiv();
		await MarkdownRenderer.render(this.app, text, target, "", next);
		if (this.rendered !== text) {
			this.removeChild(next);
			return;
		}
		this.bodyEl.replaceChildren(...Array.from(target.childNodes));
		if (this.markdown) this.removeChild(this.markdown);
		this.markdown = next;
	}

	private renderTools(tools: ToolChip[]): void {
		this.toolsEl.empty();
		for (const tool of tools) {
			const chip = this.toolsEl.createEl("details", { cls: "aib-tool" });
			const state = chipState(tool);
			chip.addClass(`aib-tool-${state.kind}`);
			// A sentence ("Searched your notes for 'kafka'"); the raw call behind *Details*.
			const summary = chip.createEl("summary");
			summary.createSpan({ cls: "aib-tool-sentence", text: toolSentence(tool.name, tool.arguments, state.kind !== "done" && tool.review !== "undone") });
			if (state.kind !== "done") summary.createSpan({ cls: "aib-tool-state", text: ` · ${state.label}` });
			summary.createSpan({ cls: "aib-tool-details", text: "Details" });
			this.renderResult(chip, toolResultView(tool.name, tool.result));
			chip.createDiv({ cls: "aib-tool-name", text: tool.name });
			chip.createEl("pre", { cls: "aib-tool-args", text: JSON.stringify(tool.arguments, null, 2) });
			if (tool.result !== null) chip.createEl("pre", { cls: "aib-tool-result", text: tool.result });
		}
	}

	/** The write of tool call `callId` was undone: its chip and the answer say so. False when
	 * this message has no such call. */
	markUndone(callId: string): boolean {
		if (!this.turn || !this.turn.tools.some((tool) => tool.id === callId)) return false;
		this.update(markReview(this.turn, callId, "undone"));
		return true;
	}

	/** A tool's result in plain words, above its raw call and result. */
	private renderResult(chip: HTMLElement, view: ToolResultView): void {
		if (view === null) return;
		const el = chip.createDiv({ cls: "aib-tool-friendly" });
		if (view.kind === "read") {
			el.setText(`Read ${view.path.replace(/\.md$/, "")} (${view.size})`);
			return;
		}
		if (view.notes.length === 0) el.setText("No note matched.");
		for (const note of view.notes) {
			const row = el.createDiv({ cls: "aib-tool-hit" });
			const link = row.createEl("a", { text: note.path.replace(/\.md$/, ""), cls: "internal-link", href: "#" });
			link.dataset.href = note.path;
			if (note.snippet) row.createDiv({ cls: "aib-tool-snippet", text: note.snippet });
		}
	}

	private renderFooter(turn: Turn): void {
		this.footerEl.empty();
		// What the answer says was done is no longer so: the writes undone since.
		for (const tool of turn.tools.filter((t) => t.review === "undone")) {
			const path = typeof tool.arguments.path === "string" ? tool.arguments.path : "the note";
			this.footerEl.createDiv({ cls: "aib-note aib-undone", text: `You undid this change: ${path} is back as it was.` });
		}
		if (turn.cancelled) {
			this.footerEl.createDiv({ cls: "aib-note", text: "Stopped." });
		}
		if (turn.error instanceof RpcError && turn.error.code === ErrorCode.noProvider) {
			// No model yet: not a failure; the setup card picks one and this message is answered.
			const note = this.footerEl.createDiv({ cls: "aib-waiting-model" });
			note.createSpan({ text: "This message waits for a model: pick one in the setup card below and it is answered." });
			this.retryButton(note);
		} else if (turn.error) {
			this.renderError(turn.error);
		}
		// What of the message did not go (an image to a model that cannot see it), in the server's words.
		for (const warning of turn.result?.warnings ?? []) this.footerEl.createDiv({ cls: "aib-note aib-warning", text: warning });
		// The context (what went with the message and reached the model) apart from the sources
		// (what the model searched or read this turn).
		const { context, read } = splitSources(turn.sources, turn.sent);
		this.noteLinks("aib-context-notes", "Context: ", context);
		this.noteLinks("aib-sources", "Sources: ", read);
		if (turn.result) {
			// A phone (a client key) cannot read the server's settings: the answer's provider says.
			const local = this.actions.localModel() || turn.result.provider === "ollama";
			this.footerEl.createDiv({ cls: "aib-usage", text: usageLine(turn.result, local), attr: { title: usageTitle(turn.result, local) } });
		}
	}

	private noteLinks(cls: string, label: string, paths: string[]): void {
		if (paths.length === 0) return;
		const list = this.footerEl.createDiv({ cls });
		list.createSpan({ text: label });
		for (const path of paths) {
			const link = list.createEl("a", { text: path.replace(/\.md$/, ""), cls: "internal-link", href: "#" });
			link.dataset.href = path;
			this.registerDomEvent(link, "click", (event) => {
				event.preventDefault();
				this.actions.openNote(path);
			});
		}
	}

	/** The error in one sentence, a button for each way out, and the server's words (with the
	 * terminal command last) behind *Details*. */
	private renderError(error: Error): void {
		const help = errorHelp(error, this.actions.localModel());
		const banner = this.footerEl.createDiv({ cls: "aib-error" });
		banner.createDiv({ cls: "aib-error-text", text: help.message });
		if (help.actions.length > 0) {
			const buttons = banner.createDiv({ cls: "aib-error-buttons" });
			const run: Record<ErrorAction, () => void> = {
				"open-setup": () => this.actions.openSetup(),
				settings: () => this.actions.openSettings(),
				retry: () => this.actions.retry(),
				"choose-model": () => this.actions.chooseModel(),
			};
			help.actions.forEach((action, index) => {
				const button = buttons.createEl("button", { text: ACTION_LABELS[action], cls: [index === 0 ? "mod-cta" : "", action === "retry" ? "aib-retry" : ""].filter(Boolean), attr: { "data-error-action": action } });
				this.registerDomEvent(button, "click", run[action]);
			});
		}
		if (!help.details) return;
		const more = banner.createEl("details", { cls: "aib-error-details" });
		more.createEl("summary", { text: "Details" });
		more.createEl("pre", { text: help.details });
	}

	private retryButton(parent: HTMLElement): void {
		const retry = parent.createEl("button", { text: "Retry", cls: "aib-retry" });
		this.registerDomEvent(retry, "click", () => this.actions.retry());
	}

	override onunload(): void {
		if (this.renderTimer !== null) window.clearTimeout(this.renderTimer);
		this.el.remove();
	}
}
