// A related note's first lines as a reader sees them (issue 39): no Markdown marks left.
import { describe, expect, it } from "vitest";
import { previewText } from "../../src/core/preview";

describe("previewText", () => {
	it("drops front matter, the title heading, list and quote marks, emphasis and code ticks; links show their text", () => {
		const note = [
			"---",
			"title: Sourdough",
			"tags: [cooking]",
			"---",
			"# Sourdough",
			"",
			"## Starter",
			"Feed **1:1:1** once a day, see [[Miso soup|the soup]] and [[Reading list#Next]].",
			"- [ ] Buy `rye` flour from [the mill](https://example.org) ![[crust.png]]",
			"> *Patience* ~~always~~ pays %%private%%",
			"1. Bake",
		].join("\n");
		expect(previewText(note, "Sourdough")).toBe(
			["Starter", "Feed 1:1:1 once a day, see the soup and Reading list.", "Buy rye flour from the mill", "Patience always pays"].join("\n"),
		);
	});

	it("a table's rows are its cells, its rule line is left out", () => {
		expect(previewText("| Date | Distance |\n|---|:--:|\n| 2025-03-10 | 5 km |")).toBe("Date · Distance\n2025-03-10 · 5 km");
	});

	it("keeps snake_case words and a first heading that is not the title; stops at about 300 characters", () => {
		expect(previewText("# Other\nuse my_var_name here", "Note")).toBe("Other\nuse my_var_name here");
		const long = previewText("word ".repeat(200));
		expect(long.length).toBe(300);
		expect(long.endsWith("…")).toBe(true);
	});
});
