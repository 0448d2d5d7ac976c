// Where to connect on this computer: the vault's info file; when no server
// runs, find its command (core/command-search.ts), start it and wait for its info file. A
// Server command from the vault's data runs only once confirmed on this machine (core/trust.ts).
// `uvx obsidian-ai-bridge` is used only once `uvx obsidian-ai-bridge --version` succeeded, and
// a command that stops before its server is ready is started at most MAX_FAILED_STARTS times,
// until the user asks to check again (issue 31).
import { NoServerError, type Endpoint, type Timers } from "./client";
import { displayCommand, findServerCommand, type ServerCommand } from "./command-search";
import { infoFilePath, readInfoFile } from "./discovery";
import type { Host } from "./host";
import { installCommands, installSource, type InstallCommands } from "./install";
import { runToEnd, startServer, suggestedCommand, type RunningServer } from "./launcher";
import type { PluginSettings } from "./settings";
import { commandTrust, type MachineStore } from "./trust";

/** How many times a command that stops before its server is ready is started. */
export const MAX_FAILED_STARTS = 2;
/** How long `uvx obsidian-ai-bridge --version` may take (its first run may download). */
export const UVX_CHECK_MS = 120_000;

export interface ConnectorEvents {
	/** The server process was started: the status bar says *starting*. */
	onServerStarting?: (command: string) => void;
	onServerExited?: (code: number | null, output: string[]) => void;
	/** Whether `url` (PyPI's page of this version) answers; none: the registry is not asked. */
	onRegistry?: (url: string) => Promise<boolean>;
}

/** What failed, in one sentence, and the program's own output (shown behind *Details*). */
export interface Failure {
	message: string;
	details: string;
}

/** Why there is no server, when the panel has something to offer: the install card (with what
 * failed, when uvx could not run the package), a question about a Server command this machine
 * has not confirmed, or a command that kept stopping before its server was ready. */
export type ServerProblem =
	| { kind: "not-installed"; install: InstallCommands; failure: Failure | null }
	| { kind: "confirm-command"; command: string }
	| { kind: "start-failed"; command: string; failure: Failure };

export class Connector {
	private server: RunningServer | null = null;
	private refusedUrl: string | null = null;
	private infoPath: string | null = null;
	/** What the panel offers now (null: nothing to do but wait or start by hand); kept while
	 * the next attempt runs, so a card does not flicker at every retry. */
	problem: ServerProblem | null = null;
	private found: ServerProblem | null = null;
	/** What `uvx obsidian-ai-bridge --version` did, once run (until *Check again*). */
	private uvx: Failure | "works" | null = null;
	/** Starts of the current command that stopped before the server was ready. */
	private failedStarts = 0;
	/** The last command that gave up (MAX_FAILED_STARTS failures), until *Check again*. */
	private gaveUp: { command: string; failure: Failure } | null = null;
	private install: Promise<InstallCommands> | null = null;
	/** No command was found (or uvx could not run the package), until *Check again*. */
	private notInstalled: Extract<ServerProblem, { kind: "not-installed" }> | null = null;
	/** The command last started, as shown. */
	private started = "";

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
		try {
			const info = await readInfoFile(this.host, await this.infoFile());
			if (info.url === this.refusedUrl) {
				throw new NoServerError("The server for this vault does not answer (the address it left is stale).");
			}
			return info;
		} catch (error) {
			if (!(error instanceof NoServerError)) throw error;
			// A server this plugin started may still be starting: wait for it.
			if (this.server !== null) return this.startAndWait(null);
			if (!settings.autoStart) throw new NoServerError(`${error.message} Start it with: ${this.manualCommand}`);
			if (this.gaveUp) {
				this.found = { kind: "start-failed", ...this.gaveUp };
				throw new NoServerError(this.gaveUp.failure.message);
			}
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
		// Not installed: the card waits for *Check again* (the retries of the connection do not
		// look again, so the card does not change under the user while they install).
		if (this.notInstalled === null) {
			const found = await findServerCommand(this.host, this.vaultPath, trust === "run" ? settings.serverCommand : "");
			const failure = found?.source === "uvx" ? await this.checkUvx(found) : null;
			if (found !== null && failure === null) return found;
			this.notInstalled = { kind: "not-installed", install: await this.installCommands(), failure };
		}
		this.found = this.notInstalled;
		const { install, failure } = this.notInstalled;
		throw new NoServerError(failure?.message ?? `The assistant's server is not installed: install it with ${install.command}`);
	}

	/** The install card's commands: the release's wheel, or the registry name once published. */
	installCommands(): Promise<InstallCommands> {
		this.install ??= installSource(this.host.env, this.events.onRegistry ?? (() => Promise.resolve(false))).then(installCommands);
		return this.install;
	}

	/** Whether uvx runs the package (its `--version`), asked once until *Check again*; null when
	 * it does, else what failed. */
	private async checkUvx(command: ServerCommand): Promise<Failure | null> {
		if (this.uvx === null) {
			const argv = [...command.argv.slice(0, command.argv.indexOf("serve")), "--version"];
			const { code, output } = await runToEnd(this.host, argv, this.vaultPath, this.timers, UVX_CHECK_MS);
			this.uvx =
				code === 0
					? "works"
					: {
							message: `uv could not run ${displayCommand(argv.slice(1, -1))} (see Details): install it with the command below, then Check again.`,
							details: output.join("\n"),
						};
		}
		return this.uvx === "works" ? null : this.uvx;
	}

	/** *Check again*: look for the command, ask uvx and start a command that gave up, anew. */
	checkAgain(): void {
		this.notInstalled = null;
		this.uvx = null;
		this.gaveUp = null;
		this.failedStarts = 0;
	}

	/** The user's answer about the vault's Server command on this machine. */
	confirmCommand(command: string, allowed: boolean): void {
		this.machine.save({ command: command.trim(), allowed });
		this.problem = null;
		this.checkAgain();
	}

	private async startAndWait(command: ServerCommand | null): Promise<Endpoint> {
		if (this.server === null && command !== null) {
			const shown = displayCommand(command.argv);
			this.started = shown;
			// The card of the last attempt goes: the panel says the assistant is starting.
			this.problem = null;
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
			if (this.server !== server || server === null) throw this.stoppedEarly(server);
			try {
				const info = await readInfoFile(this.host, infoFile);
				if (info.url !== this.refusedUrl) {
					this.failedStarts = 0;
					return info;
				}
			} catch {
				// not written yet
			}
			await new Promise<void>((resolve) => this.timers.setTimeout(resolve, 200));
		}
		throw new NoServerError("The server did not start within a minute: check the server command in the settings.");
	}

	/** The command stopped before its server was ready: after MAX_FAILED_STARTS such starts it
	 * is not started again until *Check again*, and the panel says what failed. */
	private stoppedEarly(server: RunningServer | null): NoServerError {
		const said = server?.output.slice(-3).join(" ").trim() ?? "";
		const error = new NoServerError(`The server command stopped before the server was ready${said ? `: ${said}` : "."}`);
		this.failedStarts += 1;
		if (this.failedStarts >= MAX_FAILED_STARTS) {
			const failure = {
				message: `The assistant's server stopped ${this.failedStarts} times before it was ready, so it is not started again: see Details, fix it, then Check again.`,
				details: server?.output.join("\n") ?? "",
			};
			this.gaveUp = { command: this.started, failure };
			this.found = { kind: "start-failed", ...this.gaveUp };
		}
		return error;
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
