// Bundles src/main.ts into main.js (CommonJS, as Obsidian loads plugins).
// `node esbuild.config.mjs production` builds once, minified; without an argument it watches.
import { builtinModules } from "node:module";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";

const production = process.argv[2] === "production";

export const options = {
	entryPoints: ["src/main.ts"],
	bundle: true,
	external: [
		"obsidian",
		"electron",
		"@codemirror/*",
		"@lezer/*",
		...builtinModules,
		...builtinModules.map((name) => `node:${name}`),
	],
	format: "cjs",
	target: "es2021",
	// Obsidian evaluates main.js as CommonJS: Node built-ins must be reached with require(),
	// which esbuild writes for import() when dynamic import is marked unsupported.
	supported: { "dynamic-import": false },
	logLevel: "info",
	sourcemap: production ? false : "inline",
	treeShaking: true,
	minify: production,
	outfile: "main.js",
};

// Run as a script it builds; imported (by the bundle test) it only gives its options.
const main = process.argv[1] === fileURLToPath(import.meta.url);
if (main && production) {
	await esbuild.build(options);
} else if (main) {
	const context = await esbuild.context(options);
	await context.watch();
}
