// The per-machine store of core/trust.ts: this computer's localStorage (outside the vault, so a
// synced vault does not bring it), one key per vault folder. Obsidian's own
// app.saveLocalStorage needs 1.8.7, newer than the manifest's minAppVersion.
import { parseServerChoice, type ChoiceStore, type ServerChoice } from "../core/remote";
import { parseChoice, type CommandChoice, type MachineStore } from "../core/trust";

export function localMachineStore(vaultPath: string): MachineStore {
	const key = `ai-bridge-assistant:server-command:${vaultPath}`;
	return {
		load: () => {
			try {
				return parseChoice(JSON.parse(window.localStorage.getItem(key) ?? "null"));
			} catch {
				return null;
			}
		},
		save: (choice: CommandChoice) => window.localStorage.setItem(key, JSON.stringify(choice)),
	};
}

/** This device's *Server* choice (core/remote.ts): in localStorage too, one key per vault (its
 * folder on the desktop, its name on a phone), so a synced vault brings no address or key. */
export function localServerChoice(vaultId: string): ChoiceStore {
	const key = `ai-bridge-assistant:server:${vaultId}`;
	return {
		load: () => {
			try {
				return parseServerChoice(JSON.parse(window.localStorage.getItem(key) ?? "null"));
			} catch {
				return null;
			}
		},
		save: (choice: ServerChoice) => window.localStorage.setItem(key, JSON.stringify(choice)),
	};
}
