// Reviewing a write the model wants to make (tool/confirm): the tool, its arguments and the
// diff split into hunks that can each be kept or dropped before anything is written.
import { Modal, type App } from "obsidian";
import { parseHunks, reviewAnswer, type Hunk, type Review } from "../core/diff";

export interface ConfirmRequest {
	tool: string;
	arguments: Record<string, unknown>;
	preview?: string | null;
}

export class ConfirmModal extends Modal {
	private readonly hunks: Hunk[];
	private readonly keep: boolean[];
	private answered = false;

	constructor(
		app: App,
		private readonly request: ConfirmRequest,
		/** The note's current text, for hunks of an existing note ("" for a new one). */
		private readonly oldText: string,
		private readonly resolve: (review: Review) => void,
	) {
		super(app);
		this.hunks = parseHunks(request.preview ?? "");
		this.keep = this.hunks.map(() => true);
	}

	override onOpen(): void {
		const { contentEl } = this;
		this.setTitle(`Allow the assistant to run ${this.request.tool}?`);
		contentEl.addClass("aib-confirm");
		const path = this.request.arguments.path;
		if (typeof path === "string") contentEl.createDiv({ cls: "aib-confirm-path", text: path });
		if (this.hunks.length === 0) {
			contentEl.createEl("pre", { cls: "aib-tool-args", text: JSON.stringify(this.request.arguments, null, 2) });
		}
		this.hunks.forEach((hunk, i) => this.renderHunk(contentEl, hunk, i));
		const buttons = contentEl.createDiv({ cls: "modal-button-container" });
		const approve = buttons.createEl("button", { text: "Approve", cls: "mod-cta aib-approve" });
		approve.addEventListener("click", () => this.finish(true));
		const deny = buttons.createEl("button", { text: "Deny", cls: "aib-deny" });
		deny.addEventListener("click", () => this.finish(false));
	}

	private renderHunk(parent: HTMLElement, hunk: Hunk, index: number): void {
		const box = parent.createDiv({ cls: "aib-hunk" });
		const head = box.createEl("label", { cls: "aib-hunk-head" });
		const checkbox = head.createEl("input", { type: "checkbox", cls: "aib-hunk-keep" });
		checkbox.checked = true;
		head.appendText(` Keep change ${index + 1} of ${this.hunks.length}`);
		checkbox.addEventListener("change", () => {
			this.keep[index] = checkbox.checked;
			box.toggleClass("is-dropped", !checkbox.checked);
		});
		const pre = box.createEl("pre", { cls: "aib-diff" });
		for (const line of hunk.lines) {
			const kind = line.kind === "+" ? "aib-add" : line.kind === "-" ? "aib-del" : "aib-ctx";
			pre.createDiv({ cls: kind, text: `${line.kind}${line.text}` });
		}
	}

	private finish(approved: boolean): void {
		if (this.answered) return;
		this.answered = true;
		const review = approved
			? reviewAnswer(this.request.tool, this.request.arguments, this.hunks, this.keep, this.oldText)
			: { approved: false as const };
		this.resolve(review);
		this.close();
	}

	override onClose(): void {
		this.contentEl.empty();
		if (!this.answered) {
			this.answered = true;
			this.resolve({ approved: false });
		}
	}
}
