import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Methods, ParamsOf, ResultOf } from "../../src/core/protocol";

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
});
