// Words a non-developer understands (issue 31): tool calls as sentences, closeness, tool support.
import { describe, expect, it } from "vitest";
import { closeness, isEmbeddingModel, sameEmbedder, toolResultView, toolSentence, toolSupport } from "../../src/core/words";

describe("words", () => {
	it("a tool call is a sentence, in the past once done", () => {
		expect(toolSentence("search_notes", { query: "kafka" }, false)).toBe("Searched your notes for 'kafka'");
		expect(toolSentence("search_notes", { query: "kafka" }, true)).toBe("Searching your notes for 'kafka'");
		expect(toolSentence("edit_note", { path: "Plan.md", edits: [] }, false)).toBe("Edited Plan.md");
		expect(toolSentence("read_note", { path: "Areas/Cooking/Sourdough.md" }, false)).toBe("Read Areas/Cooking/Sourdough.md");
		expect(toolSentence("create_note", { path: "New.md" }, true)).toBe("Creating New.md");
		expect(toolSentence("append_to_note", {}, false)).toBe("Added to a note");
		expect(toolSentence("list_notes", { folder: "Projects" }, false)).toBe("Listed the notes in Projects");
		expect(toolSentence("get_backlinks", { path: "A.md" }, false)).toBe("Looked for notes that link to A.md");
		expect(toolSentence("weather__forecast", { city: "Oslo" }, false)).toBe("Used the tool weather__forecast");
		expect(toolSentence("search_notes", { query: "x".repeat(100) }, false)).toMatch(/^Searched your notes for 'x{57}…'$/);
	});

	it("closeness in words; tool support in words; embedding models told apart", () => {
		expect(closeness(0.82)).toBe("close match");
		expect(closeness(0.37)).toBe("related");
		expect(toolSupport(true)).toBe("can use your notes");
		expect(toolSupport(false)).toBe("chat only");
		expect(toolSupport(null)).toBe("chat only");
		expect(isEmbeddingModel({ id: "text-embedding-3-small" })).toBe(true);
		expect(isEmbeddingModel({ id: "nomic-embed-text:latest" })).toBe(true);
		expect(isEmbeddingModel({ id: "x", displayName: "Claude Sonnet 4.5" })).toBe(false);
		expect(isEmbeddingModel({ id: "x", displayName: "Gemini Embedding 001" })).toBe(true);
		expect(isEmbeddingModel({ id: "gpt-4.1-mini", displayName: "GPT-4.1 mini" })).toBe(false);
	});

	it("Ollama's name and name:latest are one embedder", () => {
		expect(sameEmbedder("ollama:nomic-embed-text", "ollama:nomic-embed-text:latest")).toBe(true);
		expect(sameEmbedder("ollama:nomic-embed-text", "openai:nomic-embed-text")).toBe(false);
	});
});

describe("a tool's result in plain words", () => {
	it("lists a search's notes with snippets, names a read note with its size, and leaves the rest to Details", () => {
		const search = JSON.stringify({ results: [{ path: "Projects/Kafka pipeline.md", snippet: "Move the **nightly** batch\nexport" }] });
		expect(toolResultView("search_notes", search)).toEqual({ kind: "notes", notes: [{ path: "Projects/Kafka pipeline.md", snippet: "Move the nightly batch export" }] });
		expect(toolResultView("read_note", JSON.stringify({ path: "Plan.md", hash: "h", content: "x".repeat(2400) }))).toEqual({ kind: "read", path: "Plan.md", size: "2.4k characters" });
		expect(toolResultView("create_note", JSON.stringify({ path: "A.md" }))).toBeNull();
		expect(toolResultView("search_notes", "not json")).toBeNull();
	});
});
