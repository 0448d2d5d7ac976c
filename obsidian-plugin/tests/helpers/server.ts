// The real Python bridge (tests/fakes/demo_server.py: the real router, vault and confirm round
// trip with a scripted model), started in a temporary copy of examples/vault.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { BridgeClient, type ClientOptions, type SocketLike, type Timers } from "../../src/core/client";
import { Backoff } from "../../src/core/backoff";
import { PYTHON, REPO_ROOT } from "./node";

export interface DemoServer {
	dir: string;
	vault: string;
	infoFile: string;
	info(): { url: string; token: string; pid: number };
	/** `serve --remote`'s listener, when asked for: its address and certificate file. */
	remote(): { url: string; cert: string };
	/** The vault's data folder (client keys, the certificate). */
	dataDir: string;
	stop(): Promise<void>;
	start(): Promise<void>;
	cleanup(): Promise<void>;
}

async function waitFor<T>(probe: () => T | null, what: string, ms = 20_000): Promise<T> {
	const end = Date.now() + ms;
	while (Date.now() < end) {
		const value = probe();
		if (value !== null) return value;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	throw new Error(`timed out waiting for ${what}`);
}

export async function demoServer(
	options: { origins?: string[]; delay?: number; embedder?: boolean; remote?: string; spent?: number; manyModels?: number; deepModel?: string } = {},
): Promise<DemoServer> {
	const dir = mkdtempSync(join(tmpdir(), "aib-plugin-"));
	const vault = join(dir, "vault");
	cpSync(join(REPO_ROOT, "examples", "vault"), vault, { recursive: true });
	const infoFile = join(dir, "info", "server.json");
	let child: ChildProcess | null = null;
	let output = "";
	const server: DemoServer = {
		dir,
		vault,
		infoFile,
		info: () => JSON.parse(readFileSync(infoFile, "utf8")) as { url: string; token: string; pid: number },
		remote: () => JSON.parse(readFileSync(join(dir, "info", "remote.json"), "utf8")) as { url: string; cert: string },
		dataDir: join(dir, "info", "data"),
		async start() {
			const args = ["-m", "tests.fakes.demo_server", "--vault", vault, "--info-file", infoFile];
			for (const origin of options.origins ?? []) args.push("--origin", origin);
			args.push("--delay", String(options.delay ?? 0.02));
			if (options.embedder) args.push("--embedder");
			if (options.remote) args.push("--remote", options.remote);
			if (options.spent !== undefined) args.push("--spent", String(options.spent));
			if (options.manyModels) args.push("--many-models", String(options.manyModels));
			if (options.deepModel) args.push("--deep-model", options.deepModel);
			const started = spawn(PYTHON, args, { cwd: REPO_ROOT, stdio: ["ignore", "ignore", "pipe"] });
			started.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
			child = started;
			await waitFor(() => (existsSync(infoFile) ? true : null), `the demo server (${output})`);
		},
		async stop() {
			const running = child;
			if (!running || running.exitCode !== null) return;
			const exited = new Promise((resolve) => running.once("exit", resolve));
			running.kill("SIGTERM");
			await exited;
			child = null;
		},
		async cleanup() {
			await server.stop();
			rmSync(dir, { recursive: true, force: true });
		},
	};
	await server.start();
	return server;
}

export const realTimers: Timers = {
	setTimeout: (callback, ms) => setTimeout(callback, ms) as unknown as number,
	clearTimeout: (handle) => clearTimeout(handle),
	now: () => Date.now(),
};

/** A client on real sockets to the demo server, re-reading its info file before each attempt. */
export function clientFor(server: DemoServer, options: Partial<ClientOptions> = {}): BridgeClient {
	return new BridgeClient({
		socket: (url) => new WebSocket(url) as unknown as SocketLike,
		endpoint: async () => server.info(),
		client: { name: "vitest", version: "0" },
		timers: realTimers,
		backoff: new Backoff({ baseMs: 50, maxMs: 500 }),
		...options,
	});
}

export async function untilConnected(client: BridgeClient, ms = 15_000): Promise<void> {
	await waitFor(() => (client.connection.status === "connected" ? true : null), "a connection", ms);
}
