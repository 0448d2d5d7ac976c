// Finding the server's command with no settings at all (issue 20), in this order:
//   1. the *Server command* setting;
//   2. `obsidian-ai-bridge` on PATH;
//   3. the folders user installs put it in, which apps started from a desktop often lack on
//      PATH: ~/.local/bin, uv's and pipx's tool bin folders, /opt/homebrew/bin, /usr/local/bin;
//      on Windows %USERPROFILE%\.local\bin and %APPDATA%\Python\Scripts (with `.exe`);
//   4. `uvx obsidian-ai-bridge` when uv's `uvx` (or `uv`) is found in those places.
// Nothing found: the panel shows the one install command (core/install.ts). uvx is used only
// once it runs the package (core/connector.ts).
import type { Host } from "./host";
import { SERVER_PROGRAM } from "./install";
import { quote, serverArgv } from "./launcher";

export interface ServerCommand {
	/** Where it was found (step 1 to 4 above). */
	source: "setting" | "path" | "folder" | "uvx";
	/** The program and its arguments, `serve --vault <vault>` included. */
	argv: string[];
}

/** A command as a person would type it. */
export function displayCommand(argv: string[]): string {
	return argv.map(quote).join(" ");
}

function exe(host: Host, name: string): string {
	return host.platform === "win32" ? `${name}.exe` : name;
}

/** The folders of PATH, in order. */
export function pathFolders(host: Host): string[] {
	const path = host.env.PATH ?? host.env.Path ?? "";
	return path.split(host.platform === "win32" ? ";" : ":").filter((folder) => folder.trim() !== "");
}

/** Step 3's folders, in order, without repeats. */
export function userBinFolders(host: Host): string[] {
	const { env } = host;
	const home = host.homedir();
	const folders: (string | undefined)[] = [];
	if (host.platform === "win32") {
		const profile = env.USERPROFILE ?? home;
		folders.push(host.join(profile, ".local", "bin"), env.UV_TOOL_BIN_DIR, env.PIPX_BIN_DIR);
		if (env.APPDATA) folders.push(host.join(env.APPDATA, "Python", "Scripts"));
	} else {
		// uv's tool bin: UV_TOOL_BIN_DIR, else XDG_BIN_HOME, else $XDG_DATA_HOME/../bin, else
		// ~/.local/bin; pipx's: PIPX_BIN_DIR, else ~/.local/bin.
		folders.push(host.join(home, ".local", "bin"), env.UV_TOOL_BIN_DIR, env.XDG_BIN_HOME);
		if (env.XDG_DATA_HOME) folders.push(host.join(env.XDG_DATA_HOME, "..", "bin"));
		folders.push(env.PIPX_BIN_DIR, "/opt/homebrew/bin", "/usr/local/bin");
	}
	return [...new Set(folders.filter((folder): folder is string => Boolean(folder)))];
}

async function firstIn(host: Host, folders: string[], name: string): Promise<string | null> {
	for (const folder of folders) {
		const candidate = host.join(folder, exe(host, name));
		if (await host.isExecutable(candidate)) return candidate;
	}
	return null;
}

/** uv's own program (on PATH or in step 3's folders), or null. */
export async function findUv(host: Host): Promise<string | null> {
	return firstIn(host, [...pathFolders(host), ...userBinFolders(host)], "uv");
}

/** The command that starts this vault's server, or null when none is installed. `setting` is
 * the *Server command* setting when this machine may run it (else ""). */
export async function findServerCommand(host: Host, vaultPath: string, setting: string): Promise<ServerCommand | null> {
	if (setting.trim()) return { source: "setting", argv: serverArgv(setting, vaultPath) };
	const serve = ["serve", "--vault", vaultPath];
	const onPath = await firstIn(host, pathFolders(host), SERVER_PROGRAM);
	if (onPath) return { source: "path", argv: [onPath, ...serve] };
	const folders = userBinFolders(host);
	const inFolder = await firstIn(host, folders, SERVER_PROGRAM);
	if (inFolder) return { source: "folder", argv: [inFolder, ...serve] };
	const places = [...pathFolders(host), ...folders];
	const uvx = await firstIn(host, places, "uvx");
	if (uvx) return { source: "uvx", argv: [uvx, SERVER_PROGRAM, ...serve] };
	const uv = await firstIn(host, places, "uv");
	if (uv) return { source: "uvx", argv: [uv, "tool", "run", SERVER_PROGRAM, ...serve] };
	return null;
}
