import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NoServerError } from "../../src/core/client";
import { infoFilePath, readInfoFile, stateDir, vaultKey } from "../../src/core/discovery";
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
		(name) => {
			const folder = join(root, name);
			mkdirSync(folder, { recursive: true });
			expect(vaultKey(testHost(), folder)).toBe(pythonKey(folder));
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

	it("the info file path is the one the Python server writes", () => {
		const folder = join(root, "Vault");
		mkdirSync(folder, { recursive: true });
		const code = "import sys; from pathlib import Path; from plugin_bridge.wire.infofile import default_info_file; print(default_info_file(Path(sys.argv[1]).resolve()))";
		const env = { ...process.env, XDG_STATE_HOME: join(root, "state") };
		const expected = execFileSync(PYTHON, ["-c", code, folder], { cwd: REPO_ROOT, encoding: "utf8", env }).trim();
		expect(infoFilePath(testHost({ env }), folder)).toBe(expected);
	});

	it("reads a live info file and refuses a missing, broken or stale one with a sentence", () => {
		const file = join(root, "server.json");
		const host = testHost();
		expect(() => readInfoFile(host, file)).toThrow(NoServerError);
		writeFileSync(file, "{not json");
		expect(() => readInfoFile(host, file)).toThrow(/unreadable/);
		writeFileSync(file, JSON.stringify({ url: "ws://127.0.0.1:1", token: "t", pid: process.pid, protocolVersion: 1 }));
		expect(readInfoFile(host, file)).toMatchObject({ url: "ws://127.0.0.1:1", token: "t" });
		writeFileSync(file, JSON.stringify({ url: "ws://127.0.0.1:1", token: "t", pid: 2 ** 22 + 12345, protocolVersion: 1 }));
		expect(() => readInfoFile(host, file)).toThrow(/stopped/);
	});
});
