// The panel's cards when there is no server to talk to (issues 20, 21 and 31): the install card
// (the one install command, Copy, Check again, and what failed when uvx could not run it), the
// card of a command that kept stopping before its server was ready, and the question about a Server command that
// came with the vault rather than from this computer's settings. Each card is a Component, so
// its listeners go with it when the panel shows another one.
import { Component, Notice } from "obsidian";
import type { Failure } from "../core/connector";
import type { InstallCommands } from "../core/install";
import { planLines } from "../core/installer";
import type { CallerInfo } from "../core/protocol";
import { connectedWords, PAIR_COMMAND, PAIRING_PLACEHOLDER, parsePairing, scopeWords } from "../core/remote";
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

	/** The card's *Check again* and the plugin it asks, when it has one. */
	private checking: { button: HTMLButtonElement; plugin: Assistant } | null = null;

	/** Called on every connection change while the card is shown: *Check again* is back once
	 * the attempt it started is over. */
	update(): void {
		if (!this.checking || this.checking.plugin.client.connection.status === "connecting") return;
		this.checking.button.disabled = false;
		this.checking.button.setText("Check again");
	}

	/** What failed, in one sentence, with the program's own output behind *Details*. */
	protected failure(failure: Failure): void {
		const el = this.el.createDiv({ cls: "aib-card-failure" });
		el.createDiv({ cls: "aib-card-failure-text", text: failure.message });
		if (!failure.details.trim()) return;
		const details = el.createEl("details", { cls: "aib-card-details" });
		details.createEl("summary", { text: "Details" });
		details.createEl("pre", { text: failure.details });
	}

	/** *Check again*: look for the command anew (and start one that gave up). */
	protected checkAgainButton(parent: HTMLElement, plugin: Assistant, cta = true): HTMLButtonElement {
		const button = this.button(
			parent,
			"Check again",
			() => {
				button.disabled = true;
				button.setText("Checking…");
				plugin.checkServer();
			},
			cta,
		);
		this.checking = { button, plugin };
		return button;
	}
}

/** The install card (issue 39): what *Install* downloads and from where, *Install* (which runs
 * the install here, its progress line and full log behind *Details*), and the command to paste
 * in a terminal as the second choice (*Copy*). Nothing runs before the click. */
export class InstallCard extends Card {
	private readonly progressEl: HTMLElement;
	private readonly installButton: HTMLButtonElement;
	private logOpen = false;

	constructor(
		parent: HTMLElement,
		private readonly plugin: Assistant,
		install: InstallCommands,
		failure: Failure | null,
	) {
		super(parent, "aib-install-card");
		this.el.createDiv({ cls: "aib-card-title", text: "Install the assistant's server" });
		if (failure) this.failure(failure);
		this.el.createDiv({
			text: "The assistant answers through a small program on this computer. Install sets it up for you; it downloads:",
		});
		const list = this.el.createEl("ul", { cls: "aib-install-plan" });
		void plugin.installPlan().then((plan) => {
			if (plan) for (const line of planLines(plan)) list.createEl("li", { text: line });
		});
		this.el.createDiv({ cls: "aib-card-hint", text: "Nothing is downloaded or run until you click Install." });
		const buttons = this.el.createDiv({ cls: "aib-card-buttons" });
		this.checkAgainButton(buttons, plugin, false);
		this.installButton = this.button(buttons, "Install", () => plugin.install(), true);
		this.installButton.addClass("aib-install-button");
		this.progressEl = this.el.createDiv({ cls: "aib-install-progress" });
		const manual = this.el.createDiv({ cls: "aib-install-manual" });
		manual.createDiv({ cls: "aib-card-hint", text: "Or paste this command in a terminal:" });
		const row = manual.createDiv({ cls: "aib-command-row" });
		row.createEl("code", { text: install.command, cls: "aib-command aib-install-command" });
		this.button(row, "Copy", () => {
			navigator.clipboard.writeText(install.command).then(
				() => new Notice("Install command copied."),
				() => new Notice("Could not copy: select the command and copy it."),
			);
		});
		const hint = manual.createDiv({ cls: "aib-card-hint" });
		hint.appendText("It needs uv (see ");
		hint.createEl("a", { text: "Installing uv", href: "https://docs.astral.sh/uv/getting-started/installation/" });
		hint.appendText("). With pipx instead:");
		manual.createDiv({ cls: "aib-command-row" }).createEl("code", { text: install.alternative, cls: "aib-command" });
		const installation = plugin.installation();
		if (installation) this.register(installation.subscribe(() => this.showProgress()));
		this.showProgress();
	}

	/** The install's progress line, what failed, and its whole log behind *Details*. */
	private showProgress(): void {
		const state = this.plugin.installation()?.state;
		const details = this.progressEl.querySelector("details");
		if (details) this.logOpen = details.open;
		this.progressEl.empty();
		this.installButton.disabled = state?.phase === "running" || state?.phase === "done";
		this.installButton.setText(state?.phase === "running" ? "Installing…" : state?.phase === "failed" ? "Install again" : "Install");
		if (!state || state.phase === "idle") return;
		if (state.phase === "failed" && state.failure) {
			this.progressEl.createDiv({ cls: "aib-card-failure aib-card-failure-text", text: state.failure.message });
		} else {
			const line = this.progressEl.createDiv({ cls: "aib-starting-line" });
			if (state.phase === "running") line.createEl("progress", { cls: "aib-starting-progress" });
			line.createSpan({ cls: "aib-install-step", text: state.step });
		}
		const log = state.failure?.details || state.log.join("\n");
		if (!log.trim()) return;
		const open = this.progressEl.createEl("details", { cls: "aib-card-details" });
		open.open = this.logOpen;
		open.createEl("summary", { text: "Details" });
		const pre = open.createEl("pre", { text: log });
		pre.scrollTop = pre.scrollHeight;
	}
}

/** The command found kept stopping before its server was ready: what failed, its output behind
 * *Details*, and *Check again* (nothing is started again until then). */
export class StartFailedCard extends Card {
	constructor(
		parent: HTMLElement,
		plugin: Assistant,
		command: string,
		failure: Failure,
	) {
		super(parent, "aib-start-failed-card");
		this.el.createDiv({ cls: "aib-card-title", text: "The assistant's server did not start" });
		this.failure(failure);
		this.el.createEl("code", { text: command, cls: "aib-command" });
		const buttons = this.el.createDiv({ cls: "aib-card-buttons" });
		this.checkAgainButton(buttons, plugin);
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

/** Nothing set on a device that talks to another computer's server (a phone): pair it, by the
 * QR code the computer shows or its pairing text pasted here, with the one command to run there. */
export class PairCard extends Card {
	constructor(parent: HTMLElement, plugin: Assistant) {
		super(parent, "aib-pair-card");
		this.el.createDiv({ cls: "aib-card-title", text: "Pair with your computer" });
		this.el.createDiv({ text: "The assistant runs on your computer; this device talks to it. On the computer, run:" });
		const row = this.el.createDiv({ cls: "aib-command-row" });
		row.createEl("code", { text: PAIR_COMMAND.replace("NAME", "phone"), cls: "aib-command" });
		this.button(row, "Copy", () => {
			navigator.clipboard.writeText(PAIR_COMMAND.replace("NAME", "phone")).then(
				() => new Notice("Command copied."),
				() => new Notice("Could not copy: select the command and copy it."),
			);
		});
		this.el.createDiv({ text: "Then scan the QR code it shows with this device's camera, or paste its pairing text here:" });
		const input = this.el.createEl("input", { cls: "aib-pair-input", attr: { type: "text", placeholder: PAIRING_PLACEHOLDER, "aria-label": "Pairing text" } });
		const message = this.el.createDiv({ cls: "aib-card-hint aib-pair-message" });
		const buttons = this.el.createDiv({ cls: "aib-card-buttons" });
		this.button(
			buttons,
			"Connect",
			() => {
				const pairing = parsePairing(input.value);
				if (pairing === null) {
					message.setText(`This is not a pairing text: it starts with ${PAIRING_PLACEHOLDER.slice(0, -1)} and names an address and a key.`);
					return;
				}
				message.setText(`Connecting to ${pairing.address}…`);
				plugin.pairWith(pairing);
			},
			true,
		);
	}
}

/** A pairing that answered: who this device is there, and what its key may do. */
export class PairedCard extends Card {
	constructor(parent: HTMLElement, plugin: Assistant, address: string, caller: CallerInfo) {
		super(parent, "aib-paired-card");
		this.el.createDiv({ cls: "aib-card-title", text: connectedWords(address, caller.name) });
		this.el.createDiv({ text: `This device may ${scopeWords(caller.scope)}.` });
		const buttons = this.el.createDiv({ cls: "aib-card-buttons" });
		this.button(buttons, "Start", () => plugin.pairingSeen(), true);
	}
}
