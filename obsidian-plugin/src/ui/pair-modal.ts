// A pairing link (obsidian://ai-bridge-pair?…, from a scanned QR code) is used only once the
// user agrees: any web page may open an obsidian:// link, and a hostile one would send this
// device's chats to its own server.
import { Modal, Setting, type App } from "obsidian";
import type { Pairing } from "../core/remote";

export class PairModal extends Modal {
	constructor(
		app: App,
		private readonly pairing: Pairing,
		private readonly accept: () => void,
	) {
		super(app);
	}

	override onOpen(): void {
		this.setTitle("Connect to the server on another computer?");
		this.contentEl.createEl("p", {
			text: "The assistant on this device will use the server at this address, with the client key the link carries. Connect only to a server you paired yourself.",
		});
		this.contentEl.createEl("pre", { text: this.pairing.address });
		if (this.pairing.fingerprint) {
			this.contentEl.createDiv({ cls: "aib-note", text: `Certificate fingerprint (SHA-256): ${this.pairing.fingerprint}` });
		}
		new Setting(this.contentEl)
			.addButton((button) => button.setButtonText("Cancel").onClick(() => this.close()))
			.addButton((button) =>
				button
					.setButtonText("Connect")
					.setCta()
					.onClick(() => {
						this.close();
						this.accept();
					}),
			);
	}

	override onClose(): void {
		this.contentEl.empty();
	}
}
