// The plugin's own settings (data.json). No API key is ever stored here: keys go to the server.
// Nor is how this device reaches the server (core/remote.ts keeps it per device): data.json
// syncs with the vault, and a phone reaches the server another way than the desktop does.
import type { Pairing } from "./remote";

export type ConfirmPolicy = "review" | "allow-create";

export interface PluginSettings {
	/** Start the server when none runs (the command below, or the one found on this machine). */
	autoStart: boolean;
	/** How to start the server when none runs, e.g. `/path/.venv/bin/obsidian-ai-bridge serve --vault {vault}`;
	 * empty: found by core/command-search.ts. Runs only once confirmed on this machine (core/trust.ts). */
	serverCommand: string;
	/** Show every write as a diff to review ("review"), or create new notes without asking. */
	confirmPolicy: ConfirmPolicy;
	/** Send the active note (or the selection) with each message. */
	sendContext: boolean;
	/** The model chosen in the switcher for a conversation, by its id (the newest last, at most
	 * REMEMBERED_MODELS): reopened, it answers with that model again. */
	conversationModels: Record<string, ChosenModel>;
}

/** A switcher choice as kept: what chat/send's `model` takes and what the header shows. */
export interface ChosenModel {
	spec: string;
	label: string;
	local: boolean;
}

export const REMEMBERED_MODELS = 200;

function isChosenModel(value: unknown): value is ChosenModel {
	if (typeof value !== "object" || value === null) return false;
	const v = value as Record<string, unknown>;
	return typeof v.spec === "string" && v.spec !== "" && typeof v.label === "string" && typeof v.local === "boolean";
}

/** `models` with conversation `id`'s choice kept (the newest last; the oldest dropped past
 * REMEMBERED_MODELS), or forgotten when `choice` is null. */
export function rememberModel(models: Record<string, ChosenModel>, id: string, choice: ChosenModel | null): Record<string, ChosenModel> {
	const { [id]: _previous, ...rest } = models;
	const entries = Object.entries(rest);
	if (choice) entries.push([id, { spec: choice.spec, label: choice.label, local: choice.local }]);
	return Object.fromEntries(entries.slice(-REMEMBERED_MODELS));
}

export const DEFAULT_SETTINGS: PluginSettings = {
	autoStart: true,
	serverCommand: "",
	confirmPolicy: "review",
	sendContext: true,
	conversationModels: {},
};

/** Settings loaded from data.json: unknown keys dropped, wrong types replaced by defaults. */
export function loadSettings(saved: unknown): PluginSettings {
	const raw = (typeof saved === "object" && saved !== null ? saved : {}) as Record<string, unknown>;
	const pick = <K extends keyof PluginSettings>(key: K): PluginSettings[K] =>
		typeof raw[key] === typeof DEFAULT_SETTINGS[key] ? (raw[key] as PluginSettings[K]) : DEFAULT_SETTINGS[key];
	const settings: PluginSettings = {
		autoStart: pick("autoStart"),
		serverCommand: pick("serverCommand"),
		confirmPolicy: pick("confirmPolicy") === "allow-create" ? "allow-create" : "review",
		sendContext: pick("sendContext"),
		conversationModels: Object.fromEntries(
			Object.entries(typeof raw.conversationModels === "object" && raw.conversationModels !== null ? raw.conversationModels : {})
				.filter((entry): entry is [string, ChosenModel] => isChosenModel(entry[1]))
				.slice(-REMEMBERED_MODELS),
		),
	};
	return settings;
}

/** The former *Manual address and token* setting of data.json (`discovery: "manual"`, `url`,
 * `token`), which becomes this device's *Another computer*; null when it was not set. */
export function legacyManualServer(saved: unknown): Pairing | null {
	const raw = (typeof saved === "object" && saved !== null ? saved : {}) as Record<string, unknown>;
	if (raw.discovery !== "manual" || typeof raw.url !== "string" || typeof raw.token !== "string") return null;
	if (!raw.url.trim() || !raw.token.trim()) return null;
	return { address: raw.url.trim(), key: raw.token.trim(), fingerprint: "" };
}
