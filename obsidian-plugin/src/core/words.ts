// Words a non-developer understands (issue 31): a tool call as a sentence, a related note's
// closeness, a model's tool support and price.

/** A note as the vault shows its path. */
function noteName(value: unknown): string {
	return typeof value === "string" && value ? value : "a note";
}

function quoted(value: unknown): string {
	return typeof value === "string" ? `'${value.length > 60 ? `${value.slice(0, 57)}…` : value}'` : "''";
}

/** What a tool call did (or does: running, waiting for review, not applied, failed), in one
 * sentence; MCP tools and unknown ones by their name. */
export function toolSentence(name: string, args: Record<string, unknown>, running: boolean): string {
	const path = noteName(args.path);
	const done = (past: string, present: string): string => (running ? present : past);
	switch (name) {
		case "search_notes":
			return `${done("Searched", "Searching")} your notes for ${quoted(args.query)}`;
		case "read_note":
			return `${done("Read", "Reading")} ${path}`;
		case "list_notes":
			return typeof args.folder === "string" && args.folder
				? `${done("Listed", "Listing")} the notes in ${args.folder}`
				: `${done("Listed", "Listing")} your notes`;
		case "get_backlinks":
			return `${done("Looked", "Looking")} for notes that link to ${path}`;
		case "related_notes":
			return `${done("Looked", "Looking")} for notes related to ${path}`;
		case "create_note":
			return `${done("Created", "Creating")} ${path}`;
		case "edit_note":
		case "replace_note":
			return `${done("Edited", "Editing")} ${path}`;
		case "append_to_note":
			return `${done("Added", "Adding")} to ${path}`;
		case "complete_setup":
			return `${done("Saved", "Saving")} what the assistant knows about you`;
		default:
			return `${done("Used", "Using")} the tool ${name}`;
	}
}

/** A related note's score (cosine similarity) in words; the number goes to a tooltip. */
export function closeness(score: number): "close match" | "related" {
	return score >= 0.6 ? "close match" : "related";
}

/** Whether a model can use the vault's tools, as the setup card and settings say it. */
export function toolSupport(supportsTools: boolean | null | undefined): string {
	return supportsTools ? "can use your notes" : "chat only";
}

/** An embedding model (search by meaning), never offered as a chat model: its id or name says so. */
export function isEmbeddingModel(model: { id: string; displayName?: string | null; embedding?: boolean | null }): boolean {
	return model.embedding === true || /embed/i.test(model.id) || /embed/i.test(model.displayName ?? "");
}

/** Whether two embedder specs name the same model (Ollama's `:latest` tag is its default). */
export function sameEmbedder(a: string, b: string): boolean {
	const plain = (spec: string): string => spec.replace(/:latest$/, "");
	return plain(a) === plain(b);
}

/** A tool's result in plain words (issue 39): a search's notes with their snippets (the
 * matches' ** marks dropped), a read note's name and size; null for any other (its JSON stays
 * behind Details). */
export type ToolResultView = { kind: "notes"; notes: { path: string; snippet: string }[] } | { kind: "read"; path: string; size: string } | null;

export function toolResultView(name: string, result: string | null): ToolResultView {
	if (result === null) return null;
	let parsed: unknown;
	try {
		parsed = JSON.parse(result);
	} catch {
		return null;
	}
	if (typeof parsed !== "object" || parsed === null) return null;
	const fields = parsed as Record<string, unknown>;
	if (name === "search_notes" && Array.isArray(fields.results)) {
		const notes = fields.results
			.filter((hit): hit is Record<string, unknown> => typeof hit === "object" && hit !== null && typeof (hit as Record<string, unknown>).path === "string")
			.map((hit) => ({ path: String(hit.path), snippet: typeof hit.snippet === "string" ? hit.snippet.replace(/\*\*/g, "").replace(/\s+/g, " ").trim() : "" }));
		return { kind: "notes", notes };
	}
	if (name === "read_note" && typeof fields.path === "string" && typeof fields.content === "string") {
		const chars = fields.content.length;
		return { kind: "read", path: fields.path, size: chars < 1000 ? `${chars} characters` : `${(chars / 1000).toFixed(1)}k characters` };
	}
	return null;
}
