// A one-field modal: "Create note from prompt" and "Search and summarize" ask with it.
import { Component, Modal, Setting, type App } from "obsidian";

export class PromptModal extends Modal {
	private value = "";
	private readonly events = new Component();

	constructor(
		app: App,
		private readonly title: string,
		private readonly placeholder: string,
		private readonly action: string,
		private readonly onSubmit: (value: string) => void,
	) {
		super(app);
	}

	override onOpen(): void {
		this.events.load();
		this.setTitle(this.title);
		const input = this.contentEl.createEl("textarea", {
			cls: "aib-modal-input",
			attr: { placeholder: this.placeholder, rows: "4" },
		});
		this.events.registerDomEvent(input, "input", () => (this.value = input.value));
		this.events.registerDomEvent(input, "keydown", (event) => {
			if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) this.submit();
		});
		new Setting(this.contentEl).addButton((button) =>
			button
				.setButtonText(this.action)
				.setCta()
				.onClick(() => this.submit()),
		);
		input.focus();
	}

	private submit(): void {
		const value = this.value.trim();
		if (!value) return;
		this.close();
		this.onSubmit(value);
	}

	override onClose(): void {
		this.events.unload();
		this.contentEl.empty();
	}
}
