// Reviewing a write the model wants to make (tool/confirm): the server's title in words, then
// each change split into hunks (no context lines: every edit is its own) that can each be kept or
// dropped before anything is written. Built from `title` and `changes` alone: no tool names here.
import { Component, Modal, type App } from "obsidian";
import { reviewAnswer, reviewOf, type Review, type ReviewedChange } from "../core/diff";
import type { ToolConfirmParams } from "../core/protocol";

export class ConfirmModal extends Modal {
	private readonly changes: ReviewedChange[];
	private readonly keep: boolean[][];
	private readonly events = new Component();
	private answered = false;

	constructor(
		app: App,
		private readonly request: ToolConfirmParams,
		private readonly resolve: (review: Review) => void,
	) {
		super(app);
		this.changes = reviewOf(request.changes ?? []);
		this.keep = this.changes.map((change) => change.hunks.map(() => true));
	}

	override onOpen(): void {
		const { contentEl } = this;
		this.events.load();
		this.setTitle(this.request.title);
		contentEl.addClass("aib-confirm");
		if (this.changes.length === 0) {
			contentEl.createEl("pre", { cls: "aib-tool-args", text: JSON.stringify(this.request.arguments, null, 2) });
		}
		const count = this.changes.reduce((sum, change) => sum + change.hunks.length, 0);
		for (const [c, change] of this.changes.entries()) {
			if (this.changes.length > 1 || count > 1) contentEl.createDiv({ cls: "aib-confirm-path", text: change.path });
			change.hunks.forEach((_, h) => this.renderHunk(contentEl, c, h, count));
		}
		const buttons = contentEl.createDiv({ cls: "modal-button-container" });
		const approve = buttons.createEl("button", { text: count > 1 ? "Apply the kept changes" : "Apply", cls: "mod-cta aib-approve" });
		this.events.registerDomEvent(approve, "click", () => this.finish(true));
		const deny = buttons.createEl("button", { text: "Deny", cls: "aib-deny" });
		this.events.registerDomEvent(deny, "click", () => this.finish(false));
	}

	private renderHunk(parent: HTMLElement, c: number, h: number, count: number): void {
		const change = this.changes[c];
		const hunk = change?.hunks[h];
		if (!change || !hunk) return;
		const box = parent.createDiv({ cls: "aib-hunk" });
		if (count > 1) {
			const head = box.createEl("label", { cls: "aib-hunk-head" });
			const checkbox = head.createEl("input", { type: "checkbox", cls: "aib-hunk-keep" });
			checkbox.checked = true;
			head.appendText(` Keep change ${this.number(c, h)} of ${count} · line ${hunk.oldStart + 1}`);
			this.events.registerDomEvent(checkbox, "change", () => {
				const keep = this.keep[c];
				if (keep) keep[h] = checkbox.checked;
				box.toggleClass("is-dropped", !checkbox.checked);
			});
		}
		const pre = box.createEl("pre", { cls: "aib-diff" });
		for (const line of hunk.removed) diffLine(pre, "-", line.replace(/\n$/, ""));
		for (const line of hunk.added) diffLine(pre, "+", line.replace(/\n$/, ""));
	}

	/** The 1-based number of hunk h of change c among all the hunks. */
	private number(c: number, h: number): number {
		return this.changes.slice(0, c).reduce((sum, change) => sum + change.hunks.length, 0) + h + 1;
	}

	private finish(approved: boolean): void {
		if (this.answered) return;
		this.answered = true;
		this.resolve(approved ? reviewAnswer(this.changes, this.keep) : { approved: false });
		this.close();
	}

	override onClose(): void {
		this.events.unload();
		this.contentEl.empty();
		if (!this.answered) {
			this.answered = true;
			this.resolve({ approved: false });
		}
	}
}

/** One line of a diff: its mark in a gutter of its own, so a changed list line reads "+ │ - item",
 * never "+- item". */
export function diffLine(parent: HTMLElement, kind: "+" | "-" | " ", text: string): void {
	const row = parent.createDiv({ cls: kind === "+" ? "aib-add" : kind === "-" ? "aib-del" : "aib-ctx" });
	row.createSpan({ cls: "aib-diff-mark", text: kind, attr: { "aria-hidden": "true" } });
	row.createSpan({ cls: "aib-diff-text", text });
}
