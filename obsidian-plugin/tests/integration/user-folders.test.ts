// No test reads the machine's user (tests/helpers/user-folders.ts, applied by vitest.config.ts):
// this process and the Python servers tests start see a HOME and XDG folders of their own, and a
// poisoned HOME (settings file, state, variables) changes nothing a server reads.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { PYTHON, REPO_ROOT } from "../helpers/node";
import { isolateUserFolders } from "../helpers/user-folders";

const poisoned = mkdtempSync(join(tmpdir(), "aib-poisoned-home-"));
afterAll(() => rmSync(poisoned, { recursive: true, force: true }));

/** What a Python server started with `env` reads: its settings and folders. */
function serverSees(env: NodeJS.ProcessEnv): { home: string; config: string; state: string; cache: string; provider: string | null; model: string | null } {
	const script = [
		"import json, pathlib",
		"from platformdirs import user_cache_dir, user_state_dir",
		"from plugin_bridge.app.settings.config import config_file, load_settings",
		"s = load_settings()",
		"print(json.dumps({'home': str(pathlib.Path.home()), 'config': str(config_file()), 'state': user_state_dir('obsidian-ai-bridge'),",
		"  'cache': user_cache_dir('llm-service'), 'provider': s.provider, 'model': s.model}))",
	].join("\n");
	return JSON.parse(execFileSync(PYTHON, ["-c", script], { cwd: REPO_ROOT, env, encoding: "utf8" })) as ReturnType<typeof serverSees>;
}

test("the tests' HOME is a temporary folder, not the user's", () => {
	expect(homedir()).toBe(process.env.HOME);
	expect(homedir()).not.toBe(userInfo().homedir);
	expect(homedir().startsWith(tmpdir())).toBe(true);
	const seen = serverSees(process.env);
	for (const folder of [seen.home, seen.config, seen.state, seen.cache]) expect(folder.startsWith(homedir())).toBe(true);
});

test("a poisoned HOME changes nothing a server started by a test reads", () => {
	mkdirSync(join(poisoned, ".config", "obsidian-ai-bridge"), { recursive: true });
	writeFileSync(join(poisoned, ".config", "obsidian-ai-bridge", "config.toml"), 'provider = "openai"\nmodel = "poisoned-model"\n');
	mkdirSync(join(poisoned, ".local", "state", "obsidian-ai-bridge", "vaults"), { recursive: true });
	const shell = { ...process.env, HOME: poisoned, XDG_CONFIG_HOME: join(poisoned, ".config"), XDG_STATE_HOME: join(poisoned, ".local", "state"), AI_BRIDGE_MODEL: "poisoned-too" };
	const unprotected = serverSees(shell);
	expect([unprotected.provider, unprotected.model]).toEqual(["openai", "poisoned-too"]); // the poison works
	isolateUserFolders(shell);
	const seen = serverSees(shell);
	expect([seen.provider, seen.model]).toEqual([null, null]);
	for (const folder of [seen.home, seen.config, seen.state, seen.cache]) expect(folder.startsWith(poisoned)).toBe(false);
});
