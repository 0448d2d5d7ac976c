import { describe, expect, it } from "vitest";
import { NoServerError, type Timers } from "../../src/core/client";
import { Connector } from "../../src/core/connector";
import type { ChildProcessLike, Host } from "../../src/core/host";
import { DEFAULT_SETTINGS, type PluginSettings } from "../../src/core/settings";
import { testHost } from "../helpers/node";

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

const INFO = JSON.stringify({ url: "ws://127.0.0.1:4000", token: "t", pid: process.pid, protocolVersion: 1 });

function setup(settings: Partial<PluginSettings>, files: { info: string | null }, spawned: string[][] = []) {
	let exit: ((code: number | null) => void) | null = null;
	const host: Host = testHost({
		readText: () => files.info,
		realpath: (p) => p,
		spawn: (command, args): ChildProcessLike => {
			spawned.push([command, ...args]);
			return {
				pid: 42,
				kill: () => exit?.(null),
				onExit: (listener) => (exit = listener),
				onOutput: (listener) => listener("Error: no provider key"),
			};
		},
	});
	const connector = new Connector(host, "/home/u/My Notes", () => ({ ...DEFAULT_SETTINGS, ...settings }), instantTimers(), {}, 2000);
	return { connector, spawned, exitServer: (code: number) => exit?.(code) };
}

describe("Connector", () => {
	it("uses the info file when a live server wrote it", async () => {
		const { connector } = setup({}, { info: INFO });
		expect(await connector.endpoint()).toMatchObject({ url: "ws://127.0.0.1:4000", token: "t" });
	});

	it("without a server or a command, says what to run", async () => {
		const { connector } = setup({}, { info: null });
		await expect(connector.endpoint()).rejects.toThrow(
			"No server is running for this vault. Start it with: obsidian-ai-bridge serve --vault '/home/u/My Notes'",
		);
	});

	it("starts the configured command with the vault filled in and waits for its info file", async () => {
		const files = { info: null as string | null };
		const { connector, spawned } = setup({ serverCommand: "/venv/bin/obsidian-ai-bridge serve --vault {vault}" }, files);
		const pending = connector.endpoint();
		files.info = INFO;
		expect(await pending).toMatchObject({ url: "ws://127.0.0.1:4000" });
		expect(spawned).toEqual([["/venv/bin/obsidian-ai-bridge", "serve", "--vault", "/home/u/My Notes"]]);
		expect(connector.ownsServer).toBe(true);
		connector.stopServer();
		expect(connector.ownsServer).toBe(false);
	});

	it("a command that exits before the server is ready is reported with what it printed", async () => {
		const { connector, exitServer } = setup({ serverCommand: "bridge serve --vault {vault}" }, { info: null });
		const pending = connector.endpoint();
		exitServer(2);
		await expect(pending).rejects.toThrow("The server command stopped before the server was ready: Error: no provider key");
	});

	it("an info file whose server refuses connections counts as stale and the command starts a new one", async () => {
		const { connector, spawned } = setup({ serverCommand: "bridge serve --vault {vault}" }, { info: INFO });
		connector.refused("ws://127.0.0.1:4000");
		await expect(connector.endpoint()).rejects.toThrow(/did not start within/);
		expect(spawned).toHaveLength(1);
	});

	it("manual discovery needs an address and a token", async () => {
		const { connector } = setup({ discovery: "manual" }, { info: INFO });
		await expect(connector.endpoint()).rejects.toBeInstanceOf(NoServerError);
		const manual = setup({ discovery: "manual", url: "ws://127.0.0.1:9", token: "x" }, { info: null }).connector;
		expect(await manual.endpoint()).toEqual({ url: "ws://127.0.0.1:9", token: "x" });
	});
});
