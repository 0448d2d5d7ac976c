import { describe, expect, it } from "vitest";
import { chipsFor, examplePrompts, isAttachmentPath, isImagePath, vaultPathFromDrag, withItem, withoutKey } from "../../src/core/chips";

describe("context chips", () => {
	it("a mention is one chip, added once, and can be removed", () => {
		let items = withItem([], { note: "Projects/Kafka pipeline.md" });
		items = withItem(items, { note: "Projects/Kafka pipeline.md" });
		items = withItem(items, { folder: "Areas" });
		items = withItem(items, { tag: "#project" });
		const chips = chipsFor(items, null, true);
		expect(chips.map((c) => c.label)).toEqual(["Kafka pipeline", "Areas/", "#project"]);
		items = withoutKey(items, chips[1]!.key);
		expect(chipsFor(items, null, true).map((c) => c.label)).toEqual(["Kafka pipeline", "#project"]);
	});

	it("the active note is a chip while the toggle is on, and not twice", () => {
		const active = { note: "Welcome.md" };
		expect(chipsFor([], active, true)).toEqual([{ key: "note:Welcome.md", label: "Welcome", item: active, active: true }]);
		expect(chipsFor([], active, false)).toEqual([]);
		expect(chipsFor([{ note: "Welcome.md" }], active, true)).toHaveLength(1);
		expect(chipsFor([], { note: "Welcome.md", selection: "Hi" }, true)[0]?.label).toBe("Selection in Welcome");
	});

	it("examples come from a recent note, a folder and a tag", () => {
		const examples = examplePrompts({ recent: "Journal/2025-03-15.md", folder: "Projects", tag: "#cooking" });
		expect(examples.map((e) => e.text)).toEqual([
			"Summarize 2025-03-15 in three bullet points",
			"What are the open questions in Projects?",
			"What do my notes tagged #cooking have in common?",
		]);
		expect(examples[1]?.context).toEqual([{ folder: "Projects" }]);
		expect(examplePrompts({ recent: null, folder: null, tag: null })).toHaveLength(1);
	});
});

describe("images and PDFs as context", () => {
	it("knows images and PDFs by extension, in any case", () => {
		expect(isImagePath("Images/Diagram.PNG")).toBe(true);
		expect(isImagePath("Papers/x.pdf")).toBe(false);
		expect(isAttachmentPath("Papers/x.pdf")).toBe(true);
		expect(isAttachmentPath("Notes/pdf")).toBe(false);
		expect(isAttachmentPath("Notes/a.md")).toBe(false);
	});

	it("reads the vault path a drag from Obsidian carries", () => {
		expect(vaultPathFromDrag("obsidian://open?vault=My%20Vault&file=Papers%2FAttention%20is%20all.pdf")).toBe("Papers/Attention is all.pdf");
		expect(vaultPathFromDrag("![[diagram.png|300]]")).toBe("diagram.png");
		expect(vaultPathFromDrag("[[Papers/x.pdf#page=3]]")).toBe("Papers/x.pdf");
		expect(vaultPathFromDrag("https://example.com/cat.png")).toBeNull();
		expect(vaultPathFromDrag("obsidian://open?vault=V")).toBeNull();
	});
});
