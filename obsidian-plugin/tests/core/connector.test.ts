import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { NoServerError, type Timers } from "../../src/core/client";
import { Connector, MAX_FAILED_STARTS } from "../../src/core/connector";
import { PLUGIN_VERSION, REPOSITORY } from "../../src/core/install";
import type { ChildProcessLike, Host } from "../../src/core/host";
import { DEFAULT_SETTINGS, type PluginSettings } from "../../src/core/settings";
import { commandTrust, parseChoice, type CommandChoice, type MachineStore } from "../../src/core/trust";
import { PYTHON, testHost } from "../helpers/node";

/** A clock whose waits pass at once (the connector polls the info file every 200 ms). */
function instantTimers(): Timers {
	let time = 0;
	return {
		setTimeout: (callback, ms) => {
			time += ms;
			queueMicrotask(callback);
			return 0;
		},
		clearTimeout: () => undefined,
		now: () => time,
	};
}

// A live Python process stands for a running server (the info file's pid must be a server's).
const python = spawn(PYTHON, ["-c", "import time; time.sleep(60)"], { stdio: "ignore" });
afterAll(() => void python.kill());
const INFO = JSON.stringify({ url: "ws://127.0.0.1:4000", token: "t", pid: python.pid, protocolVersion: 1 });

function memoryStore(initial: CommandChoice | null = null): MachineStore & { value: CommandChoice | null } {
	const store = {
		value: initial,
		load: () => store.value,
		save: (choice: CommandChoice) => (store.value = choice),
	};
	return store;
}

function setup(
	settings: Partial<PluginSettings>,
	files: { info: string | null },
	options: { spawned?: string[][]; store?: MachineStore; executables?: string[]; exitsWith?: number; versionExit?: number } = {},
) {
	let exit: ((code: number | null) => void) | null = null;
	const spawned = options.spawned ?? [];
	const host: Host = testHost({
		readText: async () => files.info,
		realpath: async (p) => p,
		homedir: () => "/home/u",
		env: { PATH: "/usr/bin" },
		isExecutable: async (p) => (options.executables ?? []).includes(p),
		spawn: (command, args): ChildProcessLike => {
			spawned.push([command, ...args]);
			if (args.includes("--version")) return versionRun(options.versionExit ?? 0);
			// The started server writes its info file, or exits at once.
			if (options.exitsWith === undefined) files.info = INFO;
			else queueMicrotask(() => exit?.(options.exitsWith ?? null));
			return {
				pid: 42,
				kill: () => exit?.(null),
				onExit: (listener) => (exit = listener),
				onOutput: (listener) => listener("Error: no provider key"),
			};
		},
	});
	const store = options.store ?? memoryStore();
	const current = { ...DEFAULT_SETTINGS, ...settings };
	const connector = new Connector(host, "/home/u/My Notes", () => current, store, instantTimers(), {}, 2000);
	return { connector, spawned };
}

const TRUSTED = (command: string) => memoryStore({ command, allowed: true });
const WHEEL = `https://github.com/${REPOSITORY}/releases/download/${PLUGIN_VERSION}/obsidian_ai_bridge-${PLUGIN_VERSION}-py3-none-any.whl`;
const INSTALL = { source: WHEEL, command: `uv tool install ${WHEEL}`, alternative: `pipx install ${WHEEL}` };
const UV_SAYS = "error: obsidian-ai-bridge was not found in the package registry";

/** `uvx obsidian-ai-bridge --version`: uv's words, then its exit code. */
function versionRun(code: number): ChildProcessLike {
	const exits: ((code: number | null) => void)[] = [];
	queueMicrotask(() => exits.forEach((exit) => exit(code)));
	return {
		pid: 43,
		kill: () => undefined,
		onExit: (listener) => exits.push(listener),
		onOutput: (listener) => (code === 0 ? listener("obsidian-ai-bridge 0.1.0") : listener(UV_SAYS)),
	};
}

describe("Connector", () => {
	it("uses the info file when a live server wrote it", async () => {
		const { connector } = setup({}, { info: INFO });
		expect(await connector.endpoint()).toMatchObject({ url: "ws://127.0.0.1:4000", token: "t" });
	});

	it("with auto-start off and no server, says what to run", async () => {
		const { connector } = setup({ autoStart: false }, { info: null });
		await expect(connector.endpoint()).rejects.toThrow(
			"No server is running for this vault. Start it with: obsidian-ai-bridge serve --vault '/home/u/My Notes'",
		);
	});

	it("with no settings at all, starts the command it finds in ~/.local/bin", async () => {
		const files = { info: null as string | null };
		const { connector, spawned } = setup({}, files, { executables: ["/home/u/.local/bin/obsidian-ai-bridge"] });
		expect(await connector.endpoint()).toMatchObject({ url: "ws://127.0.0.1:4000" });
		expect(spawned).toEqual([["/home/u/.local/bin/obsidian-ai-bridge", "serve", "--vault", "/home/u/My Notes"]]);
	});

	it("found nowhere: the install card's problem and a sentence naming the install command", async () => {
		const { connector, spawned } = setup({}, { info: null });
		await expect(connector.endpoint()).rejects.toThrow(`The assistant's server is not installed: install it with uv tool install ${WHEEL}`);
		expect(connector.problem).toEqual({ kind: "not-installed", install: INSTALL, failure: null });
		expect(spawned).toEqual([]);
	});

	it("installed meanwhile: the card stays until Check again, which finds and starts it", async () => {
		const executables: string[] = [];
		const { connector, spawned } = setup({}, { info: null }, { executables });
		await expect(connector.endpoint()).rejects.toThrow(/not installed/);
		executables.push("/home/u/.local/bin/obsidian-ai-bridge");
		await expect(connector.endpoint()).rejects.toThrow(/not installed/);
		expect(spawned).toEqual([]);
		connector.checkAgain();
		expect(await connector.endpoint()).toMatchObject({ url: "ws://127.0.0.1:4000" });
		expect(spawned).toEqual([["/home/u/.local/bin/obsidian-ai-bridge", "serve", "--vault", "/home/u/My Notes"]]);
	});

	it("uvx runs the server only once `uvx obsidian-ai-bridge --version` succeeded", async () => {
		const files = { info: null as string | null };
		const { connector, spawned } = setup({}, files, { executables: ["/home/u/.local/bin/uvx"] });
		expect(await connector.endpoint()).toMatchObject({ url: "ws://127.0.0.1:4000" });
		expect(spawned).toEqual([
			["/home/u/.local/bin/uvx", "obsidian-ai-bridge", "--version"],
			["/home/u/.local/bin/uvx", "obsidian-ai-bridge", "serve", "--vault", "/home/u/My Notes"],
		]);
	});

	it("uvx that cannot run the package: the install card with uv's output behind Details, asked once until Check again", async () => {
		const spawned: string[][] = [];
		const { connector } = setup({}, { info: null }, { executables: ["/home/u/.local/bin/uvx"], versionExit: 2, spawned });
		await expect(connector.endpoint()).rejects.toThrow("uv could not run obsidian-ai-bridge (see Details): install it with the command below, then Check again.");
		expect(connector.problem).toMatchObject({ kind: "not-installed", install: INSTALL, failure: { details: UV_SAYS } });
		// Every retry of the client: no other run of uv, no server started.
		await expect(connector.endpoint()).rejects.toThrow(/uv could not run/);
		await expect(connector.endpoint()).rejects.toThrow(/uv could not run/);
		expect(spawned).toEqual([["/home/u/.local/bin/uvx", "obsidian-ai-bridge", "--version"]]);
		connector.checkAgain();
		await expect(connector.endpoint()).rejects.toThrow(/uv could not run/);
		expect(spawned).toHaveLength(2);
	});

	it("a command that stops before it is ready is started twice at most, then the card says what failed until Check again", async () => {
		const command = "bridge serve --vault {vault}";
		const spawned: string[][] = [];
		const { connector } = setup({ serverCommand: command }, { info: null }, { store: TRUSTED(command), exitsWith: 1, spawned });
		for (let attempt = 0; attempt < 5; attempt++) await expect(connector.endpoint()).rejects.toBeInstanceOf(NoServerError);
		expect(spawned).toHaveLength(MAX_FAILED_STARTS);
		expect(MAX_FAILED_STARTS).toBeLessThanOrEqual(3);
		expect(connector.problem).toEqual({
			kind: "start-failed",
			command: "bridge serve --vault '/home/u/My Notes'",
			failure: {
				message: "The assistant's server stopped 2 times before it was ready, so it is not started again: see Details, fix it, then Check again.",
				details: "Error: no provider key",
			},
		});
		connector.checkAgain();
		await expect(connector.endpoint()).rejects.toBeInstanceOf(NoServerError);
		expect(spawned).toHaveLength(MAX_FAILED_STARTS + 1);
	});

	it("starts the configured command with the vault filled in and waits for its info file", async () => {
		const files = { info: null as string | null };
		const command = "/venv/bin/obsidian-ai-bridge serve --vault {vault}";
		const { connector, spawned } = setup({ serverCommand: command }, files, { store: TRUSTED(command) });
		expect(await connector.endpoint()).toMatchObject({ url: "ws://127.0.0.1:4000" });
		expect(spawned).toEqual([["/venv/bin/obsidian-ai-bridge", "serve", "--vault", "/home/u/My Notes"]]);
		expect(connector.ownsServer).toBe(true);
		connector.stopServer();
		expect(connector.ownsServer).toBe(false);
	});

	it("a Server command that came with the vault runs only once confirmed on this computer", async () => {
		const command = "/tmp/evil serve --vault {vault}";
		const store = memoryStore();
		const files = { info: null as string | null };
		const { connector, spawned } = setup({ serverCommand: command }, files, {
			store,
			executables: ["/home/u/.local/bin/obsidian-ai-bridge"],
		});
		await expect(connector.endpoint()).rejects.toThrow(/not set on this computer/);
		expect(connector.problem).toEqual({ kind: "confirm-command", command });
		expect(spawned).toEqual([]);
		// Refused: the vault's command is skipped and the installed one is found instead.
		connector.confirmCommand(command, false);
		await connector.endpoint();
		expect(spawned).toEqual([["/home/u/.local/bin/obsidian-ai-bridge", "serve", "--vault", "/home/u/My Notes"]]);
		expect(store.value).toEqual({ command, allowed: false });
	});

	it("asks again when the vault's command and this computer's differ", () => {
		expect(commandTrust("", null)).toBe("none");
		expect(commandTrust("a", null)).toBe("ask");
		expect(commandTrust("a", { command: "a", allowed: true })).toBe("run");
		expect(commandTrust("b", { command: "a", allowed: true })).toBe("ask");
		expect(commandTrust(" a ", { command: "a", allowed: false })).toBe("refused");
		expect(parseChoice({ command: "a", allowed: true })).toEqual({ command: "a", allowed: true });
		expect(parseChoice({ command: "a" })).toBeNull();
		expect(parseChoice("a")).toBeNull();
	});

	it("a command that exits before the server is ready is reported with what it printed", async () => {
		const command = "bridge serve --vault {vault}";
		const { connector } = setup({ serverCommand: command }, { info: null }, { store: TRUSTED(command), exitsWith: 2 });
		await expect(connector.endpoint()).rejects.toThrow("The server command stopped before the server was ready: Error: no provider key");
	});

	it("an info file whose server refuses connections counts as stale and the command starts a new one", async () => {
		const command = "bridge serve --vault {vault}";
		const { connector, spawned } = setup({ serverCommand: command }, { info: INFO }, { store: TRUSTED(command) });
		connector.refused("ws://127.0.0.1:4000");
		await expect(connector.endpoint()).rejects.toThrow(/did not start within/);
		expect(spawned).toHaveLength(1);
	});

	it("never connects to an address off this machine from an info file, a remote listener's included", async () => {
		for (const url of ["wss://192.168.1.20:8443/ws", "ws://192.168.1.20:4000", "wss://127.0.0.1:4000/ws"]) {
			const info = JSON.stringify({ url, token: "t", pid: python.pid, protocolVersion: 1 });
			const { connector, spawned } = setup({ autoStart: false }, { info });
			await expect(connector.endpoint()).rejects.toThrow(/not a ws:\/\/ address on this machine: it was ignored/);
			expect(spawned).toEqual([]);
		}
	});
});
