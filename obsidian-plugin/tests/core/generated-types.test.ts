import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closeReason } from "../../src/core/client";
import {
	CloseCode,
	KEYED_PROVIDERS,
	PROVIDER_NAMES,
	PROVIDER_PROFILES,
	providerLabel,
	speaksCompatible,
	type Methods,
	type ParamsOf,
	type ResultOf,
} from "../../src/core/protocol";

describe("generated wire types", () => {
	it("src/core/protocol.gen.ts is what docs/protocol.schema.json generates now", () => {
		const script = join(__dirname, "..", "..", "scripts", "gen-types.mjs");
		expect(() => execFileSync(process.execPath, [script, "--check"], { stdio: "pipe" })).not.toThrow();
	});

	it("the method map ties each method to its params and result types", () => {
		const params: ParamsOf<"vault/search"> = { query: "kafka", limit: 5 };
		const result: ResultOf<"note/read"> = { path: "a.md", content: "x", hash: "h", lossy: false };
		const methods: (keyof Methods)[] = ["chat/send", "conversations/list", "settings/update"];
		expect([params.query, result.path, methods.length]).toEqual(["kafka", "a.md", 3]);
	});

	it("carries the server's close codes, and the plugin reads them from there", () => {
		expect(CloseCode).toMatchObject({ unauthorized: 4401, initTimeout: 4408, notReading: 4429 });
		expect(closeReason(CloseCode.initTimeout, "")).toContain("initialize came too late");
		expect(closeReason(CloseCode.notReading, "")).toContain("not read in time");
	});

	it("carries one profile per provider, which names the plugin's lists", () => {
		expect(Object.keys(PROVIDER_PROFILES)).toEqual([...PROVIDER_NAMES]);
		expect(KEYED_PROVIDERS).toEqual(PROVIDER_NAMES.filter((name) => PROVIDER_PROFILES[name].keyVariable !== null));
		expect(KEYED_PROVIDERS).not.toContain("ollama");
		expect(providerLabel("anthropic")).toBe("Anthropic");
		expect(providerLabel("openai")).toBe("OpenAI or compatible");
		expect([speaksCompatible("anthropic"), speaksCompatible("openai"), speaksCompatible("ollama")]).toEqual([false, true, false]);
	});
});
