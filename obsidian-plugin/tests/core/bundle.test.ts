import { builtinModules } from "node:module";
import esbuild from "esbuild";
import { describe, expect, it } from "vitest";
import { options } from "../../esbuild.config.mjs";

describe("the production bundle", () => {
	it("is CommonJS that reaches obsidian and Node built-ins with require() only", async () => {
		const result = await esbuild.build({ ...options, write: false, logLevel: "silent" });
		const code = result.outputFiles?.[0]?.text ?? "";
		expect(code).not.toMatch(/\bimport\(/);
		const required = new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
		expect([...required].filter((name) => name !== "obsidian" && !builtinModules.includes(name ?? ""))).toEqual([]);
		expect(required.has("obsidian")).toBe(true);
		expect(code).toMatch(/module\.exports/);
	});
});
