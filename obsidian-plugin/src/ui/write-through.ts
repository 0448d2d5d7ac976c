// The server's note/apply request carried out through Obsidian: a note open in an editor gets the
// write as one editor transaction (beside unsaved typing that it does not touch); a note open in
// another view goes through vault.process; a note open nowhere is left to the server.
// The rules are core/apply.ts's; this is the adapter.
import { MarkdownView, type App, type TFile } from "obsidian";
import { planApply, sha256Hex, type OpenNote } from "../core/apply";
import { ErrorCode, type NoteApplyParams, type NoteApplyResult } from "../core/protocol";
import { RpcError } from "../core/rpc";

export async function applyInObsidian(app: App, params: NoteApplyParams): Promise<NoteApplyResult> {
	const file = app.vault.getFileByPath(params.path);
	const view = file ? openView(app, file) : null;
	if (!file || !view) return { applied: false };
	if (view.getMode() === "source") {
		const editor = view.editor;
		const plan = planApply({ kind: "editor", text: editor.getValue() }, params.path, params.before, params.after);
		if (plan.kind === "server") return { applied: false };
		if (plan.kind === "conflict") throw new RpcError({ code: ErrorCode.noteConflict, message: plan.message });
		// One transaction: one undo step of the editor, positions in the text as it is now.
		editor.transaction({
			changes: plan.changes.map((change) => ({
				from: editor.offsetToPos(change.from),
				to: editor.offsetToPos(change.to),
				text: change.text,
			})),
		});
		return { applied: true, hash: await sha256Hex(editor.getValue()) };
	}
	let conflict: string | null = null;
	const written = await app.vault.process(file, (data) => {
		const open: OpenNote = { kind: "file", text: data };
		const plan = planApply(open, params.path, params.before, params.after);
		if (plan.kind !== "apply") {
			conflict = plan.kind === "conflict" ? plan.message : null;
			return data;
		}
		return plan.text;
	});
	if (conflict !== null) throw new RpcError({ code: ErrorCode.noteConflict, message: conflict });
	return { applied: true, hash: await sha256Hex(written) };
}

/** A Markdown view showing `file`, the active one first. */
function openView(app: App, file: TFile): MarkdownView | null {
	const active = app.workspace.getActiveViewOfType(MarkdownView);
	if (active?.file?.path === file.path) return active;
	for (const leaf of app.workspace.getLeavesOfType("markdown")) {
		const view = leaf.view;
		if (view instanceof MarkdownView && view.file?.path === file.path) return view;
	}
	return null;
}
