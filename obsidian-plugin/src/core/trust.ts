// A server command runs only if it was set on this machine, or the user confirmed it once here
// (issue 21): data.json lives in the vault, so a synced or shared vault can bring a command. The
// choice is kept in the plugin's data and in a per-machine store outside the vault; the plugin
// asks when the two differ.

/** What this machine decided about a command. */
export interface CommandChoice {
	command: string;
	allowed: boolean;
}

/** A per-machine store outside the vault (Obsidian's localStorage). */
export interface MachineStore {
	load(): CommandChoice | null;
	save(choice: CommandChoice): void;
}

/** Whether the setting may run ("run"), must be asked about ("ask"), or was refused here
 * ("refused"); "none" when the setting is empty. */
export function commandTrust(setting: string, machine: CommandChoice | null): "none" | "run" | "ask" | "refused" {
	const command = setting.trim();
	if (!command) return "none";
	if (machine?.command !== command) return "ask";
	return machine.allowed ? "run" : "refused";
}

/** A stored value read back: anything else than a choice counts as none. */
export function parseChoice(value: unknown): CommandChoice | null {
	if (typeof value !== "object" || value === null) return null;
	const { command, allowed } = value as Record<string, unknown>;
	return typeof command === "string" && typeof allowed === "boolean" ? { command, allowed } : null;
}
