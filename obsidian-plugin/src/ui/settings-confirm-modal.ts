// settings/confirm: an MCP server given over the wire starts only once the user approves its
// exact command line (or URL) here; closing the modal denies it.
import { Modal, Setting, type App } from "obsidian";
import type { SettingsConfirmParams, SettingsConfirmResult } from "../core/protocol";

export class SettingsConfirmModal extends Modal {
	private approved = false;

	constructor(
		app: App,
		private readonly request: SettingsConfirmParams,
		private readonly resolve: (result: SettingsConfirmResult) => void,
	) {
		super(app);
	}

	override onOpen(): void {
		this.setTitle(`Run the MCP server "${this.request.server}"?`);
		this.contentEl.createEl("p", {
			text: "A client asked the server to start this program (or connect to this address). Approve it only if you added it yourself.",
		});
		this.contentEl.createEl("pre", { text: this.request.commandLine ?? this.request.url ?? "" });
		new Setting(this.contentEl)
			.addButton((button) => button.setButtonText("Deny").onClick(() => this.close()))
			.addButton((button) =>
				button
					.setButtonText("Allow")
					.setCta()
					.onClick(() => {
						this.approved = true;
						this.close();
					}),
			);
	}

	override onClose(): void {
		this.contentEl.empty();
		this.resolve({ approved: this.approved });
	}
}
