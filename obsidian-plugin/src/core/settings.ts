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
}

export const DEFAULT_SETTINGS: PluginSettings = {
	autoStart: true,
	serverCommand: "",
	confirmPolicy: "review",
	sendContext: true,
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
