// The per-machine store of core/trust.ts: this computer's localStorage (outside the vault, so a
// synced vault does not bring it), one key per vault folder. Obsidian's own
// app.saveLocalStorage needs 1.8.7, newer than the manifest's minAppVersion.
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
