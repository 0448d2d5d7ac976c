// The install card's command (issue 31): the wheel of the plugin's own release, built from the
// plugin's version and package.json's repository; the registry name only once PyPI has it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	installCommands,
	installSource,
	PLUGIN_VERSION,
	registryUrl,
	REPOSITORY,
	repositoryPath,
	wheelName,
	wheelUrl,
} from "../../src/core/install";
import { REPO_ROOT } from "../helpers/node";

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "obsidian-plugin", "manifest.json"), "utf8")) as { version: string };
const pyproject = readFileSync(join(REPO_ROOT, "pyproject.toml"), "utf8");

describe("the install command", () => {
	it("names the wheel uv build makes, on the release of the plugin's version", () => {
		expect(PLUGIN_VERSION).toBe(manifest.version);
		expect(pyproject).toContain(`version = "${PLUGIN_VERSION}"`);
		expect(wheelName("0.2.0")).toBe("obsidian_ai_bridge-0.2.0-py3-none-any.whl");
		expect(wheelUrl("0.2.0", "me/repo")).toBe("https://github.com/me/repo/releases/download/0.2.0/obsidian_ai_bridge-0.2.0-py3-none-any.whl");
		expect(wheelUrl("0.2.0", "me/repo", "http://127.0.0.1:9/")).toBe(
			"http://127.0.0.1:9/me/repo/releases/download/0.2.0/obsidian_ai_bridge-0.2.0-py3-none-any.whl",
		);
		expect(wheelUrl(PLUGIN_VERSION)).toBe(
			`https://github.com/${REPOSITORY}/releases/download/${PLUGIN_VERSION}/obsidian_ai_bridge-${PLUGIN_VERSION}-py3-none-any.whl`,
		);
	});

	it("reads package.json's repository however it is spelled, and refuses one that is not GitHub's", () => {
		expect(repositoryPath({ type: "git", url: "git+https://github.com/a-b/c.d.git" })).toBe("a-b/c.d");
		expect(repositoryPath("https://github.com/a/b")).toBe("a/b");
		expect(repositoryPath("github:a/b")).toBe("a/b");
		expect(repositoryPath("git@github.com:a/b.git")).toBe("a/b");
		expect(repositoryPath("a/b")).toBe("a/b");
		expect(() => repositoryPath("https://gitlab.com/a/b")).toThrow(/does not name a GitHub repository/);
		expect(() => repositoryPath(undefined)).toThrow(/does not name/);
	});

	it("uv first, pipx second, with the same source", () => {
		expect(installCommands("https://x/y.whl")).toEqual({ source: "https://x/y.whl", command: "uv tool install https://x/y.whl", alternative: "pipx install https://x/y.whl" });
	});

	it("the registry name only when PyPI has this version; the wheel when it has not or cannot be asked", async () => {
		const asked: string[] = [];
		const registry = (answer: boolean | Error) => async (url: string) => {
			asked.push(url);
			if (answer instanceof Error) throw answer;
			return answer;
		};
		expect(await installSource({}, registry(true), "0.3.0")).toBe("obsidian-ai-bridge");
		expect(asked).toEqual([registryUrl("0.3.0")]);
		expect(registryUrl("0.3.0")).toBe("https://pypi.org/pypi/obsidian-ai-bridge/0.3.0/json");
		expect(await installSource({}, registry(false), "0.3.0")).toBe(wheelUrl("0.3.0"));
		expect(await installSource({}, registry(new Error("offline")), "0.3.0")).toBe(wheelUrl("0.3.0"));
	});

	it("a test's release host replaces GitHub, and then the registry is never asked", async () => {
		const registry = async (): Promise<boolean> => {
			throw new Error("asked the registry");
		};
		expect(await installSource({ AI_BRIDGE_RELEASE_HOST: "http://127.0.0.1:5000" }, registry, "0.3.0")).toBe(
			`http://127.0.0.1:5000/${REPOSITORY}/releases/download/0.3.0/obsidian_ai_bridge-0.3.0-py3-none-any.whl`,
		);
	});
});
