import { describe, expect, it } from "vitest";
import { serverArgv, splitCommand, suggestedCommand } from "../../src/core/launcher";
import { suggestionsFor } from "../../src/core/mentions";
import { DEFAULT_SETTINGS, loadSettings, REMEMBERED_MODELS, rememberModel } from "../../src/core/settings";

describe("server command", () => {
	it("splits words on spaces and keeps quoted groups and escapes", () => {
		expect(splitCommand(`/opt/my venv/bin/py -m x`)).toEqual(["/opt/my", "venv/bin/py", "-m", "x"]);
		expect(splitCommand(`"/opt/my venv/bin/py" -m 'a b' c\\ d ""`)).toEqual(["/opt/my venv/bin/py", "-m", "a b", "c d", ""]);
		expect(() => splitCommand(`"unclosed`)).toThrow(/unclosed quote/);
	});

	it("puts the vault folder in for {vault}, as one word even with spaces", () => {
		expect(serverArgv("bridge serve --vault {vault} --port 0", "/Users/a/My Notes")).toEqual([
			"bridge",
			"serve",
			"--vault",
			"/Users/a/My Notes",
			"--port",
			"0",
		]);
		expect(() => serverArgv("  ", "/v")).toThrow(/empty/);
	});

	it("the suggested command quotes the path for a shell", () => {
		expect(suggestedCommand("/Users/a/My Notes")).toBe("obsidian-ai-bridge serve --vault '/Users/a/My Notes'");
		expect(suggestedCommand("/v/notes")).toBe("obsidian-ai-bridge serve --vault /v/notes");
	});
});

describe("input suggestions", () => {
	const source = {
		notes: ["Projects/Kafka.md", "Welcome.md", "日本語.md"],
		folders: ["Projects"],
		tags: ["#kafka"],
		prompts: [{ command: "/summarize", name: "Summarize" }],
	};

	it("@ offers tags, folders and notes matching what follows it", () => {
		expect(suggestionsFor("ask @kaf", source)?.items.map((i) => i.value)).toEqual(["#kafka", "Projects/Kafka.md"]);
		expect(suggestionsFor("ask @日本", source)?.items.map((i) => i.value)).toEqual(["日本語.md"]);
		expect(suggestionsFor("mail me@example", source)).toBeNull();
	});

	it("/ at the start offers prompts", () => {
		expect(suggestionsFor("/sum", source)?.items).toEqual([{ kind: "prompt", value: "/summarize", label: "Summarize" }]);
		expect(suggestionsFor("a /sum", source)).toBeNull();
	});
});

describe("plugin settings", () => {
	it("a conversation's model choice is kept by its id, the newest last, the oldest dropped past the limit", () => {
		const small = { spec: "demo-small", label: "Demo small", local: false };
		let models = rememberModel({}, "a", small);
		models = rememberModel(models, "b", { spec: "ollama:llama3", label: "llama3", local: true });
		models = rememberModel(models, "a", { ...small, label: "Small" });
		expect(Object.keys(models)).toEqual(["b", "a"]);
		expect(models.a!.label).toBe("Small");
		expect(rememberModel(models, "b", null)).toEqual({ a: models.a });
		for (let i = 0; i < REMEMBERED_MODELS + 5; i++) models = rememberModel(models, `c${i}`, small);
		expect(Object.keys(models)).toHaveLength(REMEMBERED_MODELS);
		expect(models.b).toBeUndefined();
		// data.json's entries that are not a choice are dropped.
		const loaded = loadSettings({ conversationModels: { x: small, y: { spec: 5 }, z: "gpt" } });
		expect(loaded.conversationModels).toEqual({ x: small });
		expect(loadSettings({ conversationModels: "nope" }).conversationModels).toEqual({});
	});

	it("loads saved values and replaces wrong types with defaults", () => {
		expect(loadSettings(null)).toEqual(DEFAULT_SETTINGS);
		const loaded = loadSettings({ discovery: "manual", url: 5, serverCommand: "x", apiKey: "sk-never", sendContext: false });
		expect(loaded).toMatchObject({ serverCommand: "x", sendContext: false });
		expect(loaded).not.toHaveProperty("apiKey");
		// How this device reaches the server is not in data.json (core/remote.ts).
		expect(loaded).not.toHaveProperty("url");
		expect(loaded).not.toHaveProperty("discovery");
	});
});
