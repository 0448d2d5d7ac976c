// Every test, and every server a test starts, runs with a HOME and XDG (and Windows) folders
// of its own: nothing reads the user's settings file (~/.config/obsidian-ai-bridge), state,
// caches or vaults. vitest.config.ts applies it to its own process (whose children, the test
// workers and the servers they spawn, inherit it) and to the workers' environment.
import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/** The variables that point at the user's folders or settings; those not in the result are unset. */
const USER_VARIABLES = /^(AI_BRIDGE_|XDG_(CONFIG|STATE|CACHE|DATA)_HOME$|APPDATA$|LOCALAPPDATA$|(ANTHROPIC|OPENAI)_(API_KEY|BASE_URL)$|HF_HOME$)/;

export function isolateUserFolders(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
	// uv's package cache is not a setting: an offline install test reads it where it was
	const uvCache = env.UV_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "uv");
	const home = mkdtempSync(join(tmpdir(), "aib-test-home-"));
	process.once("exit", () => rmSync(home, { recursive: true, force: true }));
	for (const name of Object.keys(env)) if (USER_VARIABLES.test(name)) delete env[name];
	const folders: Record<string, string> = {
		HOME: home,
		USERPROFILE: home,
		XDG_CONFIG_HOME: join(home, ".config"),
		XDG_STATE_HOME: join(home, ".local", "state"),
		XDG_CACHE_HOME: join(home, ".cache"),
		XDG_DATA_HOME: join(home, ".local", "share"),
		APPDATA: join(home, "AppData", "Roaming"),
		LOCALAPPDATA: join(home, "AppData", "Local"),
		UV_CACHE_DIR: uvCache,
	};
	Object.assign(env, folders);
	return folders;
}
