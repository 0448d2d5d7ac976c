// The plugin's commands (Obsidian's command palette), one table of ids so that tests and other
// code name them without spelling the strings again.
import { Notice, type App, type Command } from "obsidian";
import type { BridgeClient } from "../core/client";
import { PromptModal } from "./prompt-modal";
import { RewriteModal } from "./rewrite-modal";
import type { AssistantView } from "./view";

export const COMMAND_IDS = {
	open: "open",
	askCurrentNote: "ask-current-note",
	askSelection: "ask-selection",
	createNote: "create-note",
	searchSummarize: "search-summarize",
	relatedNotes: "related-notes",
	rewriteSelection: "rewrite-selection",
	continueWriting: "continue-writing",
	saveConversation: "save-conversation",
	updateAboutMe: "update-about-me",
	setUpModel: "set-up-model",
	/** Prefix of the commands made from the server's custom prompts (`prompt-<slug>`). */
	promptPrefix: "prompt-",
} as const;

/** What the commands need from the plugin. */
export interface CommandHost {
	app: App;
	client: BridgeClient;
	addCommand(command: Command): Command;
	activateView(): Promise<AssistantView | null>;
	activateRelated(): Promise<void>;
	/** The panel's setup card, at any time. */
	openSetup(): void;
	/** Whether the server's model runs on this computer (its cost: free). */
	localModel(): boolean;
}

export function addCommands(host: CommandHost): void {
	const { app } = host;
	host.addCommand({ id: COMMAND_IDS.open, name: "Open assistant", callback: () => void host.activateView() });
	host.addCommand({
		id: COMMAND_IDS.askCurrentNote,
		name: "Ask about current note",
		checkCallback: (checking) => {
			const file = app.workspace.getActiveFile();
			if (!file) return false;
			if (!checking) {
				void host.activateView().then((view) => view?.setContext([{ note: file.path }]));
			}
			return true;
		},
	});
	host.addCommand({
		id: COMMAND_IDS.askSelection,
		name: "Ask about selection",
		editorCheckCallback: (checking, editor, ctx) => {
			const selection = editor.getSelection();
			const file = ctx.file;
			if (!selection || !file) return false;
			if (!checking) {
				void host.activateView().then((view) => view?.setContext([{ note: file.path, selection }]));
			}
			return true;
		},
	});
	host.addCommand({
		id: COMMAND_IDS.createNote,
		name: "Create note from prompt",
		callback: () =>
			new PromptModal(app, "Create note from prompt", "What should the note be about?", "Create", (prompt) =>
				void createNote(host, prompt),
			).open(),
	});
	host.addCommand({
		id: COMMAND_IDS.searchSummarize,
		name: "Search and summarize",
		callback: () =>
			new PromptModal(app, "Search and summarize", "What are you looking for?", "Search", (query) =>
				void host.activateView().then((view) => view?.summarize(query)),
			).open(),
	});
	host.addCommand({
		id: COMMAND_IDS.relatedNotes,
		name: "Show related notes",
		callback: () => void host.activateRelated(),
	});
	host.addCommand({
		id: COMMAND_IDS.rewriteSelection,
		name: "Rewrite selection…",
		editorCheckCallback: (checking, editor) => {
			if (!editor.somethingSelected()) return false;
			if (!checking) new RewriteModal(app, host.client, editor, "rewrite", () => host.localModel()).open();
			return true;
		},
	});
	host.addCommand({
		id: COMMAND_IDS.continueWriting,
		name: "Continue writing",
		editorCallback: (editor) => new RewriteModal(app, host.client, editor, "continue", () => host.localModel()).open(),
	});
	host.addCommand({
		id: COMMAND_IDS.saveConversation,
		name: "Save conversation as note",
		callback: () => void host.activateView().then((view) => view?.exportConversation()),
	});
	host.addCommand({
		id: COMMAND_IDS.updateAboutMe,
		name: "Update what the assistant knows about me",
		callback: () => void host.activateView().then((view) => view?.introduce(true)),
	});
	host.addCommand({ id: COMMAND_IDS.setUpModel, name: "Set up a model", callback: () => host.openSetup() });
}

async function createNote(host: CommandHost, prompt: string): Promise<void> {
	const notice = new Notice("Writing the note…", 0);
	try {
		const folder = host.app.workspace.getActiveFile()?.parent?.path ?? "";
		const result = await host.client.call("command/createNote", { prompt, folder: folder === "/" ? "" : folder });
		await host.app.workspace.openLinkText(result.path, "", true);
	} catch (error) {
		new Notice((error as Error).message);
	} finally {
		notice.hide();
	}
}
