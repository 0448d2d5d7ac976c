// Obsidian's review rules (eslint-plugin-obsidianmd's recommended config) on the plugin's source.
// Tests are not part of the plugin (Obsidian's review skips them too) and are type-checked by tsc.
import { defineConfig } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";

export default defineConfig([
	{
		ignores: ["main.js", "node_modules/**", "tests/**", "scripts/**", "*.config.*"],
	},
	...obsidianmd.configs.recommended,
	{
		languageOptions: {
			parserOptions: {
				projectService: true,
				tsconfigRootDir: import.meta.dirname,
			},
		},
	},
]);
