// Generates src/core/protocol.gen.ts from docs/protocol.schema.json (the Python models' schema).
// `node scripts/gen-types.mjs --check` fails when the committed file is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const schemaPath = join(root, "..", "docs", "protocol.schema.json");
const outPath = join(root, "src", "core", "protocol.gen.ts");

export async function generate() {
	const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
	const banner =
		"/* Generated from docs/protocol.schema.json by scripts/gen-types.mjs: do not edit. */";
	return compile(schema, "Protocol", {
		bannerComment: banner,
		additionalProperties: false,
		maxItems: -1,
		style: { useTabs: true, singleQuote: false },
	});
}

// The schema's constants as values (a type cannot be listed at run time).
function constants(schema) {
	const camel = (name) => name.toLowerCase().replace(/_([a-z])/g, (_, letter) => letter.toUpperCase());
	const codes = schema.errors.map((error) => `\t${camel(error.name)}: ${error.code},`);
	const closeCodes = schema.closeCodes.map((close) => `\t${camel(close.name)}: ${close.code},`);
	const profiles = schema.providerProfiles.map((profile) => `\t${profile.name}: ${JSON.stringify(profile)},`);
	return [
		"",
		"export const PROTOCOL_VERSION = " + JSON.stringify(schema.protocolVersion) + ";",
		"",
		"/** The model providers the server can use (llm_service's ProviderName). */",
		`export const PROVIDER_NAMES = ${JSON.stringify(schema.providers)} as const;`,
		"",
		"/** Each provider's profile (llm_service's ProviderProfile): label, key, local or hosted. */",
		"export const PROVIDER_PROFILES = {",
		...profiles,
		"} as const;",
		"",
		"/** The tools that write a note: the user reviews each call (tool/confirm). */",
		`export const WRITE_TOOLS = ${JSON.stringify(schema.writeTools)} as const;`,
		"",
		"/** The protocol's error codes (docs/protocol.md), by the server's names. */",
		"export const ErrorCode = {",
		...codes,
		"} as const;",
		"",
		"/** The WebSocket close codes of both sides (docs/protocol.md, \"Limits and close codes\"). */",
		"export const CloseCode = {",
		...closeCodes,
		"} as const;",
		"",
	].join("\n");
}

// An empty params or result object: "no fields", not TypeScript's "any non-null value".
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const text =
	(await generate()).replace(/export interface (\w+) \{\}/g, "export type $1 = Record<string, never>;") +
	constants(schema);
if (process.argv.includes("--check")) {
	if (readFileSync(outPath, "utf8") !== text) {
		console.error("src/core/protocol.gen.ts is stale: run `npm run types` (or make schema).");
		process.exit(1);
	}
} else {
	writeFileSync(outPath, text);
}
