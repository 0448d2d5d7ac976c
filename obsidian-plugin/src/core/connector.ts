// Where to connect: the URL and token from settings, or the vault's info file; when no server
// runs, find its command (core/command-search.ts), start it and wait for its info file. A
// Server command from the vault's data runs only once confirmed on this machine (core/trust.ts).
import { NoServerError, type Endpoint, type Timers } from "./client";
import { displayCommand, findServerCommand, INSTALL_COMMAND, type ServerCommand } from "./command-search";
import { infoFilePath, readInfoFile } from "./discovery";
import type { Host } from "./host";
import { startServer, suggestedCommand, type RunningServer } from "./launcher";
import type { PluginSettings } from "./settings";
import { commandTrust, type MachineStore } from "./trust";

export interface ConnectorEvents {
	/** The server process was started: the status bar says *starting*. */
	onServerStarting?: (command: string) => void;
	onServerExited?: (code: number | null, output: string[]) => void;
}

/** Why there is no server, when the panel has something to offer: the install card, or a
 * question about a Server command this machine has not confirmed. */
export type ServerProblem = { kind: "not-installed"; install: string } | { kind: "confirm-command"; command: string };

export class Connector {
	private server: RunningServer | null = null;
	private refusedUrl: string | null = null;
	private infoPath: string | null = null;
	/** What the panel offers now (null: nothing to do but wait or start by hand); kept while
	 * the next attempt runs, so a card does not flicker at every retry. */
	problem: ServerProblem | null = null;
	private found: ServerProblem | null = null;

	constructor(
		private readonly host: Host,
		private readonly vaultPath: string,
		private readonly settings: () => PluginSettings,
		private readonly machine: MachineStore,
		private readonly timers: Timers,
		private readonly events: ConnectorEvents = {},
		private readonly startTimeoutMs = 60_000,
	) {}

	/** The command a user would run by hand for this vault. */
	get manualCommand(): string {
		return suggestedCommand(this.vaultPath);
	}

	private async infoFile(): Promise<string> {
		this.infoPath ??= await infoFilePath(this.host, this.vaultPath);
		return this.infoPath;
	}

	/** Whether the server this plugin started is still running. */
	get ownsServer(): boolean {
		return this.server !== null;
	}

	async endpoint(): Promise<Endpoint> {
		this.found = null;
		try {
			return await this.locate();
		} finally {
			this.problem = this.found;
		}
	}

	private async locate(): Promise<Endpoint> {
		const settings = this.settings();
		if (settings.discovery === "manual") {
			if (!settings.url || !settings.token) {
				throw new NoServerError("Set the server URL and token in the plugin settings, or switch to automatic discovery.");
			}
			return { url: settings.url, token: settings.token };
		}
		try {
			const info = await readInfoFile(this.host, await this.infoFile());
			if (info.url === this.refusedUrl) {
				throw new NoServerError("The server for this vault does not answer (its info file is stale).");
			}
			return info;
		} catch (error) {
			if (!(error instanceof NoServerError)) throw error;
			// A server this plugin started may still be starting: wait for it.
			if (this.server !== null) return this.startAndWait(null);
			if (!settings.autoStart) throw new NoServerError(`${error.message} Start it with: ${this.manualCommand}`);
			return this.startAndWait(await this.command(settings));
		}
	}

	/** The command to start, asking first about a Server command this machine did not set. */
	private async command(settings: PluginSettings): Promise<ServerCommand> {
		const trust = commandTrust(settings.serverCommand, this.machine.load());
		if (trust === "ask") {
			this.found = { kind: "confirm-command", command: settings.serverCommand.trim() };
			throw new NoServerError(
				"This vault's settings ask to start the server with a command that was not set on this computer: confirm it in the assistant panel.",
			);
		}
		const found = await findServerCommand(this.host, this.vaultPath, trust === "run" ? settings.serverCommand : "");
		if (found === null) {
			this.found = { kind: "not-installed", install: INSTALL_COMMAND };
			throw new NoServerError(`The assistant's server is not installed: install it with ${INSTALL_COMMAND}`);
		}
		return found;
	}

	/** The user's answer about the vault's Server command on this machine. */
	confirmCommand(command: string, allowed: boolean): void {
		this.machine.save({ command: command.trim(), allowed });
		this.problem = null;
	}

	private async startAndWait(command: ServerCommand | null): Promise<Endpoint> {
		if (this.server === null && command !== null) {
			const shown = displayCommand(command.argv);
			this.events.onServerStarting?.(shown);
			const server = startServer(this.host, command.argv, this.vaultPath);
			this.server = server;
			void server.exited.then((code) => {
				if (this.server === server) this.server = null;
				this.events.onServerExited?.(code, server.output);
			});
		}
		const server = this.server;
		const deadline = this.timers.now() + this.startTimeoutMs;
		const infoFile = await this.infoFile();
		while (this.timers.now() < deadline) {
			if (this.server !== server || server === null) {
				const said = server?.output.slice(-3).join(" ").trim() ?? "";
				throw new NoServerError(`The server command stopped before the server was ready${said ? `: ${said}` : "."}`);
			}
			try {
				const info = await readInfoFile(this.host, infoFile);
				if (info.url !== this.refusedUrl) return info;
			} catch {
				// not written yet
			}
			await new Promise<void>((resolve) => this.timers.setTimeout(resolve, 200));
		}
		throw new NoServerError("The server did not start within a minute: check the server command in the settings.");
	}

	/** Nothing accepts connections at `url`, or what answers there is not this vault's server:
	 * the info file naming it is stale (its pid may belong to another program now), so the next
	 * attempt starts the server when it can. */
	refused(url: string): void {
		this.refusedUrl = url;
	}

	/** Stop the server this plugin started (when Obsidian quits or the plugin unloads). */
	stopServer(): void {
		this.server?.process.kill();
		this.server = null;
	}
}
