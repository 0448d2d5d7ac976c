// What the panel and the settings tab need from the plugin (main.ts implements it), so the UI
// depends on this shape rather than on the plugin class that creates the UI.
import type { Plugin } from "obsidian";
import type { BridgeClient } from "../core/client";
import type { ServerProblem } from "../core/connector";
import type { Installation, InstallPlan } from "../core/installer";
import type { SuggestionSource } from "../core/mentions";
import type { IndexProgress, PromptModel } from "../core/protocol";
import type { Pairing, ServerChoice } from "../core/remote";
import type { PluginSettings } from "../core/settings";
import type { AssistantView } from "./view";

/** A custom prompt with the `/command` that runs it from the input. */
export interface Prompt extends PromptModel {
	command: string;
}

export interface Assistant extends Plugin {
	settings: PluginSettings;
	client: BridgeClient;
	saveSettings(): Promise<void>;
	/** How this device reaches the server (kept per device, not in data.json). */
	serverChoice(): ServerChoice;
	/** Pair with the server a pairing text names (typed here by the user). */
	pairWith(pairing: Pairing): void;
	/** Whether a pairing just answered (the panel says so until seen). */
	justPaired(): boolean;
	pairingSeen(): void;
	/** Keep this device's choice and connect anew by it. */
	setServerChoice(choice: ServerChoice): void;
	/** Whether the server is on another computer: no setup card, no server settings here. */
	remote(): boolean;
	/** The command to start the server by hand, for the disconnected panel (null: not known). */
	manualCommand(): string | null;
	/** An example server command for the settings tab. */
	exampleCommand(): string;
	/** What the panel offers when there is no server (install card, command to confirm). */
	serverProblem(): ServerProblem | null;
	/** What the install card's *Install* would download (null: this device cannot install). */
	installPlan(): Promise<InstallPlan | null>;
	/** The install under way or last run (null off the desktop). */
	installation(): Installation | null;
	/** *Install*: install the server here, then start it. */
	install(): void;
	/** *Check again*: look for the server's command anew and connect. */
	checkServer(): void;
	/** Keep the Server command and whether this computer may run it. */
	setServerCommand(command: string, allowed: boolean): Promise<void>;
	/** The prompt a `/command` at the start of the input names, if any. */
	promptFor(text: string): Prompt | undefined;
	suggestionSource(): SuggestionSource;
	/** Where the user sets up semantic search (an embedder); the setup card when there is one. */
	openSetup(): void;
	/** Obsidian's settings, on this plugin's tab. */
	openSettings(): void;
	/** Whether the server's chat model runs on this computer (Ollama, or a loopback base URL). */
	localModel(): boolean;
	/** The embedding job's last progress (search by meaning being prepared), or null. */
	indexProgress(): IndexProgress | null;
	/** Where custom prompts live and how to add one (shown for "/" when there are none); the
	 * prompts are asked for again, so a note added meanwhile is offered next. */
	promptsHint(): string;
	/** A tool call of a chat turn finished (chat/toolResult): Undo is offered for a write made. */
	toolFinished(callId: string, isError: boolean, view: AssistantView): void;
}
