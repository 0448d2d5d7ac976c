import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NoServerError } from "../../src/core/client";
import { infoFilePath, isLoopbackWsUrl, isOurServer, looksLikeServer, readInfoFile, stateDir, vaultKey } from "../../src/core/discovery";
import { PYTHON, REPO_ROOT, testHost } from "../helpers/node";

const root = mkdtempSync(join(tmpdir(), "aib-discovery-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function pythonKey(folder: string): string {
	const code = "import sys; from pathlib import Path; from plugin_bridge.vault.datadir import vault_key; print(vault_key(Path(sys.argv[1]).resolve()))";
	return execFileSync(PYTHON, ["-c", code, folder], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
}

describe("server discovery", () => {
	it.each(["My Vault", "日本語 ノート", "Ünïcödé—notes", "...", "a".repeat(60), "Заметки 2026"])(
		"the vault key of %j is the Python side's",
		async (name) => {
			const folder = join(root, name);
			mkdirSync(folder, { recursive: true });
			expect(await vaultKey(testHost(), folder)).toBe(pythonKey(folder));
		},
	);

	it("the state folder follows each platform's rule", () => {
		const host = (platform: string, env: Record<string, string | undefined>) =>
			testHost({ platform, env, homedir: () => "/home/u" });
		expect(stateDir(host("linux", {}))).toBe("/home/u/.local/state/obsidian-ai-bridge");
		expect(stateDir(host("linux", { XDG_STATE_HOME: "/x" }))).toBe("/x/obsidian-ai-bridge");
		expect(stateDir(host("darwin", {}))).toBe("/home/u/Library/Application Support/obsidian-ai-bridge");
		expect(stateDir(host("win32", { LOCALAPPDATA: "/L" }))).toBe("/L/obsidian-ai-bridge/obsidian-ai-bridge");
	});

	it("the info file path is the one the Python server writes", async () => {
		const folder = join(root, "Vault");
		mkdirSync(folder, { recursive: true });
		const code = "import sys; from pathlib import Path; from plugin_bridge.vault.datadir import default_info_file; print(default_info_file(Path(sys.argv[1]).resolve()))";
		const env = { ...process.env, XDG_STATE_HOME: join(root, "state") };
		const expected = execFileSync(PYTHON, ["-c", code, folder], { cwd: REPO_ROOT, encoding: "utf8", env }).trim();
		expect(await infoFilePath(testHost({ env }), folder)).toBe(expected);
	});

	it("reads a live info file and refuses a missing, broken or stale one with a sentence", async () => {
		const file = join(root, "server.json");
		const host = testHost();
		await expect(readInfoFile(host, file)).rejects.toThrow(NoServerError);
		writeFileSync(file, "{not json");
		await expect(readInfoFile(host, file)).rejects.toThrow(/unreadable/);
		// A live Python process stands for the server (the pid must run a server's program).
		const python = spawn(PYTHON, ["-c", "import time; time.sleep(30)"], { stdio: "ignore" });
		try {
			writeFileSync(file, JSON.stringify({ url: "ws://127.0.0.1:1", token: "t", pid: python.pid, protocolVersion: 1 }));
			expect(await readInfoFile(host, file)).toMatchObject({ url: "ws://127.0.0.1:1", token: "t" });
		} finally {
			python.kill();
		}
		writeFileSync(file, JSON.stringify({ url: "ws://127.0.0.1:1", token: "t", pid: 2 ** 22 + 12345, protocolVersion: 1 }));
		await expect(readInfoFile(host, file)).rejects.toThrow(/stopped/);
	});
});

describe("the plugin trusts only its own server (issue 21)", () => {
	it("takes only a loopback ws:// URL from the info file", async () => {
		for (const url of ["ws://127.0.0.1:53817", "ws://127.3.2.1:1/", "ws://[::1]:8765", "ws://localhost:9", "ws://LOCALHOST:9/x"]) {
			expect(isLoopbackWsUrl(url), url).toBe(true);
		}
		for (const url of [
			"ws://evil.example",
			"wss://127.0.0.1:1",
			"http://127.0.0.1:1",
			"ws://127.0.0.1.evil.example:1",
			"ws://128.0.0.1:1",
			"ws://127.0.0.300:1",
			"ws://10.0.0.1:1",
			"ws://user:pw@127.0.0.1:1",
			"ws://[::2]:1",
			"ws://0.0.0.0:1",
			"not a url",
		]) {
			expect(isLoopbackWsUrl(url), url).toBe(false);
		}
		const file = join(root, "evil.json");
		writeFileSync(file, JSON.stringify({ url: "ws://evil.example:80", token: "t", pid: process.pid, protocolVersion: 1 }));
		await expect(readInfoFile(testHost(), file)).rejects.toThrow(/not a ws:\/\/ address on this machine/);
	});

	it("counts a pid only when it is alive, this user's, and a server's where the platform tells", async () => {
		expect(isOurServer({ state: "alive", command: "/home/u/.local/bin/obsidian-ai-bridge serve --vault /v" })).toBe(true);
		expect(isOurServer({ state: "alive", command: "/usr/bin/python3.12 -m plugin_bridge serve" })).toBe(true);
		expect(isOurServer({ state: "alive", command: "python.exe" })).toBe(true);
		expect(isOurServer({ state: "alive", command: null })).toBe(true);
		expect(isOurServer({ state: "alive", command: "/usr/sbin/sshd -D" })).toBe(false);
		expect(isOurServer({ state: "alive", command: "/usr/bin/node evil.js" })).toBe(false);
		// EPERM from kill(pid, 0): another user's process has the pid now.
		expect(isOurServer({ state: "foreign", command: null })).toBe(false);
		expect(isOurServer({ state: "gone", command: null })).toBe(false);
		expect(looksLikeServer("C:\\Users\\u\\.local\\bin\\obsidian-ai-bridge.exe serve")).toBe(true);
		expect(looksLikeServer("/Library/Frameworks/Python.framework/Versions/3.12/Resources/Python.app/Contents/MacOS/Python x")).toBe(true);
	});

	it("the Node host reads a pid's command line and tells EPERM from gone", async () => {
		const host = testHost();
		const me = await host.process(process.pid);
		expect(me.state).toBe("alive");
		expect(me.command).toContain("node");
		expect(isOurServer(me)).toBe(false);
		expect((await host.process(2 ** 22 + 12345)).state).toBe("gone");
		const eperm = testHost({}, { kill: () => { throw Object.assign(new Error("EPERM"), { code: "EPERM" }); } });
		expect(await eperm.process(1)).toEqual({ state: "foreign", command: null });
	});

	it("an info file whose pid runs another program is stale", async () => {
		const file = join(root, "reused.json");
		writeFileSync(file, JSON.stringify({ url: "ws://127.0.0.1:1", token: "t", pid: process.pid, protocolVersion: 1 }));
		const host = testHost({ process: async () => ({ state: "alive", command: "/usr/bin/node something.js" }) });
		await expect(readInfoFile(host, file)).rejects.toThrow(/stale/);
		const foreign = testHost({ process: async () => ({ state: "foreign", command: null }) });
		await expect(readInfoFile(foreign, file)).rejects.toThrow(/stale/);
	});
});
