// The panel's cards when there is no server to talk to (issues 20 and 21): the install card
// (the one install command, Copy, Check again) and the question about a Server command that
// came with the vault rather than from this computer's settings. Each card is a Component, so
// its listeners go with it when the panel shows another one.
import { Component, Notice } from "obsidian";
import type { Assistant } from "./assistant";

/** A card in the panel: its element is removed when it is unloaded. */
export abstract class Card extends Component {
	readonly el: HTMLElement;

	constructor(parent: HTMLElement, cls: string) {
		super();
		this.el = parent.createDiv({ cls: `aib-card ${cls}` });
	}

	override onunload(): void {
		this.el.remove();
	}

	protected button(parent: HTMLElement, text: string, onClick: () => void, cta = false): HTMLButtonElement {
		const button = parent.createEl("button", { text, cls: cta ? "mod-cta" : "" });
		this.registerDomEvent(button, "click", onClick);
		return button;
	}

	/** Called on every connection change while the card is shown. */
	update(): void {}
}

export class InstallCard extends Card {
	private readonly checkButton: HTMLButtonElement;

	constructor(
		parent: HTMLElement,
		private readonly plugin: Assistant,
		install: string,
	) {
		super(parent, "aib-install-card");
		this.el.createDiv({ cls: "aib-card-title", text: "Install the assistant's server" });
		this.el.createDiv({
			text: "The assistant answers through a small program on this computer. Install it once with uv, in a terminal:",
		});
		this.el.createEl("code", { text: install, cls: "aib-command" });
		const hint = this.el.createDiv({ cls: "aib-card-hint" });
		hint.appendText("No uv yet? ");
		hint.createEl("a", { text: "Install uv first", href: "https://docs.astral.sh/uv/getting-started/installation/" });
		hint.appendText(", then run the command above.");
		const buttons = this.el.createDiv({ cls: "aib-card-buttons" });
		this.button(buttons, "Copy", () => {
			void navigator.clipboard.writeText(install).then(() => new Notice("Install command copied."));
		});
		this.checkButton = this.button(
			buttons,
			"Check again",
			() => {
				this.checkButton.disabled = true;
				this.checkButton.setText("Checking…");
				this.plugin.client.reconnectNow();
			},
			true,
		);
	}

	override update(): void {
		if (this.plugin.client.connection.status === "connecting") return;
		this.checkButton.disabled = false;
		this.checkButton.setText("Check again");
	}
}

export class ConfirmCommandCard extends Card {
	constructor(parent: HTMLElement, plugin: Assistant, command: string) {
		super(parent, "aib-confirm-command-card");
		this.el.createDiv({ cls: "aib-card-title", text: "Run this server command?" });
		this.el.createDiv({
			text: "This vault's settings start the assistant's server with a command that was not set on this computer (a synced or shared vault can bring one). Run it only if you know it:",
		});
		this.el.createEl("code", { text: command, cls: "aib-command" });
		const buttons = this.el.createDiv({ cls: "aib-card-buttons" });
		const answer = (allowed: boolean): void => {
			void plugin.setServerCommand(command, allowed).then(() => plugin.client.reconnectNow());
		};
		this.button(buttons, "Don't run it", () => answer(false));
		this.button(buttons, "Run it", () => answer(true), true);
	}
}
