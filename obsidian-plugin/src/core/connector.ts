// Where to connect: the URL and token from settings, or the vault's info file; when no server
// runs and a server command is configured, start it and wait for its info file.
import { NoServerError, type Endpoint, type Timers } from "./client";
import { infoFilePath, readInfoFile } from "./discovery";
import type { Host } from "./host";
import { startServer, suggestedCommand, type RunningServer } from "./launcher";
import type { PluginSettings } from "./settings";

export interface ConnectorEvents {
	/** The server process was started (or failed to start): say so in the panel. */
	onServerStarting?: (command: string) => void;
	onServerExited?: (code: number | null, output: string[]) => void;
}

export class Connector {
	private server: RunningServer | null = null;
	private refusedUrl: string | null = null;

	constructor(
		private readonly host: Host,
		private readonly vaultPath: string,
		private readonly settings: () => PluginSettings,
		private readonly timers: Timers,
		private readonly events: ConnectorEvents = {},
		private readonly startTimeoutMs = 60_000,
	) {}

	/** The command a user would run by hand for this vault. */
	get manualCommand(): string {
		return suggestedCommand(this.vaultPath);
	}

	get infoFile(): string {
		return infoFilePath(this.host, this.vaultPath);
	}

	/** Whether the server this plugin started is still running. */
	get ownsServer(): boolean {
		return this.server !== null;
	}

	async endpoint(): Promise<Endpoint> {
		const settings = this.settings();
		if (settings.discovery === "manual") {
			if (!settings.url || !settings.token) {
				throw new NoServerError("Set the server URL and token in the plugin settings, or switch to automatic discovery.");
			}
			return { url: settings.url, token: settings.token };
		}
		try {
			const info = readInfoFile(this.host, this.infoFile);
			if (info.url === this.refusedUrl) {
				throw new NoServerError("The server for this vault does not answer (its info file is stale).");
			}
			return info;
		} catch (error) {
			if (!(error instanceof NoServerError)) throw error;
			if (!settings.serverCommand.trim()) {
				throw new NoServerError(`${error.message} Start it with: ${this.manualCommand}`);
			}
			return this.startAndWait(settings.serverCommand);
		}
	}

	private async startAndWait(command: string): Promise<Endpoint> {
		if (this.server === null) {
			this.events.onServerStarting?.(command);
			const server = startServer(this.host, command, this.vaultPath);
			this.server = server;
			void server.exited.then((code) => {
				if (this.server === server) this.server = null;
				this.events.onServerExited?.(code, server.output);
			});
		}
		const server = this.server;
		const deadline = this.timers.now() + this.startTimeoutMs;
		while (this.timers.now() < deadline) {
			if (this.server !== server) {
				const said = server.output.slice(-3).join(" ").trim();
				throw new NoServerError(`The server command stopped before the server was ready${said ? `: ${said}` : "."}`);
			}
			try {
				const info = readInfoFile(this.host, this.infoFile);
				if (info.url !== this.refusedUrl) return info;
				await new Promise<void>((resolve) => this.timers.setTimeout(resolve, 200));
			} catch {
				await new Promise<void>((resolve) => this.timers.setTimeout(resolve, 200));
			}
		}
		throw new NoServerError("The server did not start within a minute: check the server command in the settings.");
	}

	/** Nothing accepts connections at `url`: the info file naming it is stale (its pid may
	 * belong to another program now), so the next attempt starts the server when it can. */
	refused(url: string): void {
		this.refusedUrl = url;
	}

	/** Stop the server this plugin started (when Obsidian quits or the plugin unloads). */
	stopServer(): void {
		this.server?.process.kill();
		this.server = null;
	}
}
