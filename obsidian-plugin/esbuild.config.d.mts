import type { BuildOptions } from "esbuild";

/** The options esbuild.config.mjs builds main.js with. */
export declare const options: BuildOptions;
