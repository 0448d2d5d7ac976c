// Finding the server's command with no settings (issue 20): the search order on Linux, macOS and
// Windows path rules (with `.exe`), uvx as the last resort, and nothing found.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { displayCommand, findServerCommand, userBinFolders } from "../../src/core/command-search";
import type { Host } from "../../src/core/host";
import { testHost } from "../helpers/node";

/** A machine with these executable files and nothing else. */
function machine(platform: string, env: Record<string, string>, home: string, files: string[]): Host {
	const join = platform === "win32" ? path.win32.join : path.posix.join;
	return testHost({
		platform,
		env,
		homedir: () => home,
		join,
		isExecutable: async (file) => files.includes(file),
	});
}

const VAULT = "/Users/a/My Notes";
const serve = ["serve", "--vault", VAULT];

describe("finding the server command", () => {
	it("Linux: the setting, then PATH, then ~/.local/bin and the tool folders, then uvx", async () => {
		const env = { PATH: "/usr/bin:/bin", UV_TOOL_BIN_DIR: "/opt/uvbin", PIPX_BIN_DIR: "/opt/pipx" };
		const all = ["/usr/bin/obsidian-ai-bridge", "/home/u/.local/bin/obsidian-ai-bridge", "/opt/uvbin/uvx"];
		const host = (files: string[]) => machine("linux", env, "/home/u", files);
		expect(await findServerCommand(host(all), VAULT, "/venv/bin/obsidian-ai-bridge serve --vault {vault}")).toEqual({
			source: "setting",
			argv: ["/venv/bin/obsidian-ai-bridge", ...serve],
		});
		expect(await findServerCommand(host(all), VAULT, "")).toEqual({ source: "path", argv: ["/usr/bin/obsidian-ai-bridge", ...serve] });
		expect(await findServerCommand(host(all.slice(1)), VAULT, "")).toEqual({
			source: "folder",
			argv: ["/home/u/.local/bin/obsidian-ai-bridge", ...serve],
		});
		expect(await findServerCommand(host(["/opt/pipx/obsidian-ai-bridge"]), VAULT, "")).toMatchObject({ source: "folder" });
		expect(await findServerCommand(host(["/opt/uvbin/uvx"]), VAULT, "")).toEqual({
			source: "uvx",
			argv: ["/opt/uvbin/uvx", "obsidian-ai-bridge", ...serve],
		});
		expect(await findServerCommand(host(["/bin/uv"]), VAULT, "")).toEqual({
			source: "uvx",
			argv: ["/bin/uv", "tool", "run", "obsidian-ai-bridge", ...serve],
		});
		expect(await findServerCommand(host([]), VAULT, "")).toBeNull();
		// uv's bin folder from XDG_BIN_HOME, and from XDG_DATA_HOME/../bin (the same here: once).
		expect(userBinFolders(machine("linux", { XDG_BIN_HOME: "/x/bin", XDG_DATA_HOME: "/x/share" }, "/home/u", []))).toEqual([
			"/home/u/.local/bin",
			"/x/bin",
			"/opt/homebrew/bin",
			"/usr/local/bin",
		]);
	});

	it("macOS: Homebrew's and /usr/local's bin, which apps started from the Dock lack on PATH", async () => {
		const env = { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" };
		const host = (files: string[]) => machine("darwin", env, "/Users/a", files);
		expect(await findServerCommand(host(["/opt/homebrew/bin/obsidian-ai-bridge"]), VAULT, "")).toMatchObject({
			source: "folder",
			argv: ["/opt/homebrew/bin/obsidian-ai-bridge", ...serve],
		});
		expect(await findServerCommand(host(["/usr/local/bin/obsidian-ai-bridge"]), VAULT, "")).toMatchObject({ source: "folder" });
		expect(await findServerCommand(host(["/opt/homebrew/bin/uvx"]), VAULT, "")).toMatchObject({
			source: "uvx",
			argv: ["/opt/homebrew/bin/uvx", "obsidian-ai-bridge", ...serve],
		});
	});

	it("Windows: `.exe` names, PATH split on `;`, %USERPROFILE%\\.local\\bin and %APPDATA%\\Python\\Scripts", async () => {
		const env = {
			Path: "C:\\Windows\\system32;C:\\Tools",
			USERPROFILE: "C:\\Users\\a",
			APPDATA: "C:\\Users\\a\\AppData\\Roaming",
		};
		const vault = "C:\\Users\\a\\Notes";
		const host = (files: string[]) => machine("win32", env, "C:\\Users\\a", files);
		expect(await findServerCommand(host(["C:\\Tools\\obsidian-ai-bridge.exe"]), vault, "")).toEqual({
			source: "path",
			argv: ["C:\\Tools\\obsidian-ai-bridge.exe", "serve", "--vault", vault],
		});
		expect(await findServerCommand(host(["C:\\Tools\\obsidian-ai-bridge"]), vault, "")).toBeNull();
		expect(await findServerCommand(host(["C:\\Users\\a\\.local\\bin\\obsidian-ai-bridge.exe"]), vault, "")).toMatchObject({
			source: "folder",
		});
		expect(
			await findServerCommand(host(["C:\\Users\\a\\AppData\\Roaming\\Python\\Scripts\\obsidian-ai-bridge.exe"]), vault, ""),
		).toMatchObject({ source: "folder" });
		expect(await findServerCommand(host(["C:\\Users\\a\\.local\\bin\\uvx.exe"]), vault, "")).toEqual({
			source: "uvx",
			argv: ["C:\\Users\\a\\.local\\bin\\uvx.exe", "obsidian-ai-bridge", "serve", "--vault", vault],
		});
		expect(await findServerCommand(host([]), vault, "")).toBeNull();
	});

	it("a command as a person would type it", () => {
		expect(displayCommand(["/home/u/.local/bin/obsidian-ai-bridge", ...serve])).toBe(
			"/home/u/.local/bin/obsidian-ai-bridge serve --vault '/Users/a/My Notes'",
		);
	});

	describe("on this machine's file system", () => {
		const home = mkdtempSync(path.join(tmpdir(), "aib-search-"));
		afterAll(() => rmSync(home, { recursive: true, force: true }));

		it("a file counts only when it may be run", async () => {
			const bin = path.join(home, ".local", "bin");
			mkdirSync(bin, { recursive: true });
			const file = path.join(bin, "obsidian-ai-bridge");
			writeFileSync(file, "#!/bin/sh\n");
			chmodSync(file, 0o644);
			// Only files under the temporary home count (this machine's /usr/local/bin may hold uv).
			const real = testHost();
			const confined = testHost({ homedir: () => home, env: { PATH: "" }, isExecutable: async (p) => p.startsWith(home) && (await real.isExecutable(p)) });
			expect(await findServerCommand(confined, "/v", "")).toBeNull();
			chmodSync(file, 0o755);
			expect(await findServerCommand(confined, "/v", "")).toEqual({ source: "folder", argv: [file, "serve", "--vault", "/v"] });
		});
	});
});
