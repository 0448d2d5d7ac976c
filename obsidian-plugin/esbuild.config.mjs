// Bundles src/main.ts into main.js (CommonJS, as Obsidian loads plugins).
// `node esbuild.config.mjs production` builds once, minified; without an argument it watches.
import { builtinModules } from "node:module";
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
	logLevel: "info",
	sourcemap: production ? false : "inline",
	treeShaking: true,
	minify: production,
	outfile: "main.js",
};

if (production) {
	await esbuild.build(options);
} else {
	const context = await esbuild.context(options);
	await context.watch();
}
