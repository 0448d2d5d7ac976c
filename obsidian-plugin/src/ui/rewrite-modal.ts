// Rewrite selection… and Continue writing: an instruction, then the answer (command/rewrite)
// streamed into a diff preview of the selection, with its tokens and cost. Accept replaces the
// selection (or inserts at the cursor) as one transaction, so one Ctrl-Z of the editor brings the
// old text back; Discard leaves the note as it is. Works on unsaved text: only the editor is read.
import { Component, Modal, type App, type Editor, type EditorPosition } from "obsidian";
import type { BridgeClient } from "../core/client";
import { diffRows } from "../core/diff";
import { diffLine } from "./confirm-modal";
import { ErrorCode, type RewriteResult } from "../core/protocol";
import { RpcError } from "../core/rpc";
import { text, usageLine } from "../core/stream";

/** How much of the note around the selection goes along as context, each side. */
const CONTEXT_CHARS = 3000;
const QUICK = ["Shorter", "Fix grammar", "Translate to German"];
export const CONTINUE_INSTRUCTION = "Continue writing";

export type RewriteMode = "rewrite" | "continue";

export class RewriteModal extends Modal {
	private readonly events = new Component();
	private readonly from: EditorPosition;
	private readonly to: EditorPosition;
	private readonly original: string;
	private running: AbortController | null = null;
	private answer = "";
	private result: RewriteResult | null = null;
	private previewEl!: HTMLElement;
	private statusEl!: HTMLElement;
	private acceptButton!: HTMLButtonElement;
	private instructionEl!: HTMLInputElement;

	constructor(
		app: App,
		private readonly client: BridgeClient,
		private readonly editor: Editor,
		private readonly mode: RewriteMode,
		/** Whether the model runs on this computer (the cost line says free). */
		private readonly local: () => boolean = () => false,
	) {
		super(app);
		this.from = editor.getCursor("from");
		this.to = mode === "rewrite" ? editor.getCursor("to") : this.from;
		this.original = mode === "rewrite" ? editor.getRange(this.from, this.to) : "";
	}

	override onOpen(): void {
		this.events.load();
		this.setTitle(this.mode === "rewrite" ? "Rewrite selection" : "Continue writing");
		const { contentEl } = this;
		contentEl.addClass("aib-rewrite");
		const ask = contentEl.createDiv({ cls: "aib-rewrite-ask" });
		this.instructionEl = ask.createEl("input", {
			type: "text",
			cls: "aib-rewrite-instruction",
			attr: { placeholder: "How should it change? For example: shorter", "aria-label": "Instruction" },
		});
		if (this.mode === "continue") this.instructionEl.value = CONTINUE_INSTRUCTION;
		const go = ask.createEl("button", { text: this.mode === "rewrite" ? "Rewrite" : "Write", cls: "mod-cta aib-rewrite-go" });
		this.events.registerDomEvent(go, "click", () => void this.run());
		this.events.registerDomEvent(this.instructionEl, "keydown", (event) => {
			if (event.key === "Enter" && !event.isComposing) void this.run();
		});
		if (this.mode === "rewrite") {
			const quick = contentEl.createDiv({ cls: "aib-rewrite-quick" });
			for (const instruction of QUICK) {
				const button = quick.createEl("button", { text: instruction });
				this.events.registerDomEvent(button, "click", () => {
					this.instructionEl.value = instruction.toLowerCase();
					void this.run();
				});
			}
		}
		this.previewEl = contentEl.createDiv({ cls: "aib-rewrite-preview" });
		this.statusEl = contentEl.createDiv({ cls: "aib-usage aib-rewrite-status" });
		const buttons = contentEl.createDiv({ cls: "modal-button-container" });
		this.acceptButton = buttons.createEl("button", { text: "Accept", cls: "mod-cta aib-rewrite-accept" });
		this.acceptButton.disabled = true;
		this.events.registerDomEvent(this.acceptButton, "click", () => this.accept());
		const discard = buttons.createEl("button", { text: "Discard", cls: "aib-rewrite-discard" });
		this.events.registerDomEvent(discard, "click", () => this.close());
		this.renderPreview();
		if (this.mode === "continue") void this.run();
		else this.instructionEl.focus();
	}

	private async run(): Promise<void> {
		const instruction = this.instructionEl.value.trim();
		if (!instruction) return;
		this.running?.abort();
		const controller = new AbortController();
		this.running = controller;
		this.answer = "";
		this.result = null;
		this.acceptButton.disabled = true;
		this.statusEl.setText("Writing…");
		this.renderPreview();
		const all = this.editor.getValue();
		const start = this.editor.posToOffset(this.from);
		const end = this.editor.posToOffset(this.to);
		try {
			const result = await this.client.call(
				"command/rewrite",
				{
					text: this.original,
					instruction,
					before: all.slice(Math.max(0, start - CONTEXT_CHARS), start),
					after: all.slice(end, end + CONTEXT_CHARS),
				},
				{
					signal: controller.signal,
					onNotification: (n) => {
						if (n.method !== "chat/delta") return;
						this.answer += text(n.params.text);
						this.renderPreview();
					},
				},
			);
			if (this.running !== controller) return;
			this.answer = result.text;
			this.result = result;
			this.statusEl.setText(usageLine(result, this.local()));
			this.acceptButton.disabled = false;
			this.renderPreview();
		} catch (error) {
			if (this.running !== controller) return;
			const cancelled = error instanceof RpcError && error.code === ErrorCode.cancelled;
			this.statusEl.setText(cancelled ? "Stopped." : (error as Error).message);
		} finally {
			if (this.running === controller) this.running = null;
		}
	}

	private renderPreview(): void {
		this.previewEl.empty();
		const pre = this.previewEl.createEl("pre", { cls: "aib-diff" });
		if (this.mode === "continue") {
			const [head, tail] = [this.editor.getRange({ line: Math.max(0, this.from.line - 2), ch: 0 }, this.from), this.answer];
			if (head) pre.createDiv({ cls: "aib-ctx", text: head });
			pre.createDiv({ cls: "aib-add", text: tail || "…" });
			return;
		}
		const rows = this.answer ? diffRows(this.original, this.answer) : diffRows(this.original, this.original);
		for (const row of rows) diffLine(pre, row.kind, row.text);
	}

	/** Replace the selection (insert at the cursor) in one editor transaction: one undo step. */
	private accept(): void {
		if (!this.result) return;
		this.editor.transaction({ changes: [{ from: this.from, to: this.to, text: this.answer }] });
		this.close();
	}

	override onClose(): void {
		this.running?.abort();
		this.running = null;
		this.events.unload();
		this.contentEl.empty();
	}
}
