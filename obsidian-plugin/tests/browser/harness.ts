// The page the browser test opens: the real plugin (src/main.ts) with the obsidian shim, in an
// approximation of Obsidian's window (page.html): a vault in memory, a note editor, a right
// sidebar with tabs, a settings window; and a host: by default a fake one whose info file is the
// demo server's (or absent); when the test exposed `window.aibHost` (tests/helpers/page-host.ts),
// the test's Node side, so the plugin finds, starts and stops real processes.
import { FileManager, FileSystemAdapter, MarkdownView, MetadataCache, Platform, Vault, Workspace, WorkspaceLeaf } from "./obsidian-shim";
import type { Command } from "obsidian";
import type { ChildProcessLike, Host } from "../../src/core/host";
import AssistantPlugin from "../../src/main";
import type { HostCall, HostEvent } from "../helpers/page-host";

const query = new URLSearchParams(window.location.search);
/** The server's info file as the host reads it (a test may change it: a restarted server). */
let info = query.get("info");
/** The plugin's data.json (`?data=<json>`); none by default. */
const data = query.get("data");
const vaultPath = query.get("vault") ?? "/home/user/My Vault";
document.body.classList.add(query.get("theme") === "light" ? "theme-light" : "theme-dark");
// `?mobile=1`: Obsidian on a phone (the plugin then never asks for a host: no Node there).
if (query.get("mobile") === "1") {
	Platform.isMobile = true;
	Platform.isDesktop = false;
}

declare global {
	interface Window {
		aibHost?: HostCall;
		aibHostEvent?: (event: HostEvent) => void;
	}
}

const posixJoin = (...parts: string[]): string => parts.join("/").replace(/\/+/g, "/");
const basename = (path: string): string => path.split("/").pop() ?? "";

function fakeHost(): Host {
	return {
		platform: "linux",
		arch: "x64",
		env: {},
		homedir: () => "/home/user",
		join: posixJoin,
		basename,
		realpath: async (path) => path,
		sha256Hex: async () => "0123456789abcdef",
		readText: async () => info,
		isExecutable: async () => false,
		process: async () => ({ state: "alive", command: null }),
		spawn: () => {
			throw new Error("not in the browser test");
		},
		probe: async (url) => ({ status: 0, body: `nothing answers at ${url}` }),
		download: async (url) => {
			throw new Error(`Could not download ${url}: not in the browser test.`);
		},
		fileSha256: async () => "0".repeat(64),
	};
}

/** The Node side's host: every call goes to the test process; a child's output and exit come
 * back as events. */
async function nodeSideHost(call: HostCall): Promise<Host> {
	const machine = (await call({ op: "info" })) as { platform: string; arch: string; env: Record<string, string>; home: string };
	const children = new Map<number, { output: ((line: string) => void)[]; exit: ((code: number | null) => void)[] }>();
	window.aibHostEvent = (event) => {
		const child = children.get(event.child);
		if (event.kind === "output") child?.output.forEach((l) => l(event.line));
		else child?.exit.forEach((e) => e(event.code));
	};
	let nextChild = 1;
	return {
		platform: machine.platform,
		arch: machine.arch,
		env: machine.env,
		homedir: () => machine.home,
		join: posixJoin,
		basename,
		realpath: async (path) => (await call({ op: "realpath", path })) as string,
		sha256Hex: async (text) => (await call({ op: "sha256Hex", text })) as string,
		readText: async (path) => (await call({ op: "readText", path })) as string | null,
		isExecutable: async (path) => (await call({ op: "isExecutable", path })) as boolean,
		process: async (pid) => (await call({ op: "process", pid })) as Awaited<ReturnType<Host["process"]>>,
		probe: async (url, origin) => (await call({ op: "probe", url, origin })) as { status: number; body: string },
		download: async (url, path) => void (await call({ op: "download", url, path })),
		fileSha256: async (path) => (await call({ op: "fileSha256", path })) as string,
		spawn: (command, args, cwd): ChildProcessLike => {
			const id = nextChild++;
			const listeners = { output: [] as ((line: string) => void)[], exit: [] as ((code: number | null) => void)[] };
			children.set(id, listeners);
			const child = {
				pid: undefined as number | undefined,
				kill: () => void call({ op: "kill", child: id }),
				onExit: (listener: (code: number | null) => void) => listeners.exit.push(listener),
				onOutput: (listener: (line: string) => void) => listeners.output.push(listener),
			};
			void call({ op: "spawn", child: id, command, args, cwd }).then((pid) => (child.pid = pid as number));
			return child;
		},
	};
}

class BrowserPlugin extends AssistantPlugin {
	override loadData(): Promise<unknown> {
		return Promise.resolve(data === null ? null : JSON.parse(data));
	}

	protected override createHost(): Promise<Host | null> {
		return window.aibHost ? nodeSideHost(window.aibHost) : Promise.resolve(fakeHost());
	}
}

const app: Record<string, unknown> = {};
const vault = new Vault(vaultPath);
const metadataCache = new MetadataCache();
const workspace = new Workspace(app, document.getElementById("sidebar")!, document.getElementById("sidebar-tabs")!);
app.workspace = workspace;
app.vault = vault;
app.metadataCache = metadataCache;
// Obsidian's settings window: the plugin opens it on its tab (an error's *Settings*).
app.setting = { open: () => undefined, openTabById: () => harness.openSettings() };
app.fileManager = new FileManager(vault);
vault.adapter = new FileSystemAdapter(vaultPath);

const textarea = document.getElementById("note") as HTMLTextAreaElement;
const markdown = new MarkdownView(new WorkspaceLeaf(app, document.getElementById("editor")!), textarea);
(markdown.leaf as { view: unknown }).view = markdown;

const plugin = new BrowserPlugin(app as never, { id: "ai-bridge-assistant", version: "0.1.0" } as never);

const harness = {
	plugin,
	setInfo(text: string | null): void {
		info = text;
	},
	/** A note in the page's vault (the test adds the server's copies of the ones it uses). */
	addNote(path: string, text: string, tags: string[] = [], mtime = Date.now()): void {
		vault.add(path, text, mtime);
		metadataCache.tags.set(path, tags);
		renderFiles();
	},
	/** Open a note in the editor pane and make it the active one. */
	openNote(path: string): void {
		const file = vault.getFileByPath(path);
		if (!file) throw new Error(`no note ${path} in the page's vault`);
		markdown.file = file;
		textarea.value = vault.notes.get(path)?.text ?? "";
		workspace.markdown = markdown;
		document.getElementById("note-title")!.textContent = file.basename;
		document.getElementById("tab-title")!.textContent = file.basename;
		for (const item of document.querySelectorAll<HTMLElement>(".nav-file-title")) item.classList.toggle("is-active", item.dataset.path === path);
		workspace.trigger("file-open", file);
		workspace.trigger("active-leaf-change", markdown.leaf);
	},
	/** Select text in the editor (by its first occurrence). */
	select(text: string): void {
		const start = textarea.value.indexOf(text);
		textarea.focus();
		textarea.setSelectionRange(start, start + text.length);
	},
	/** Run a command of the plugin by id, as the command palette would. */
	run(id: string): void {
		const commands = (plugin as unknown as { commands: Command[] }).commands;
		const command = commands.find((c) => c.id === id);
		if (!command) throw new Error(`no command ${id}`);
		const editor = markdown.editor as never;
		const view = markdown as never;
		if (command.editorCallback) void command.editorCallback(editor, view);
		else if (command.editorCheckCallback) command.editorCheckCallback(false, editor, view);
		else if (command.checkCallback) command.checkCallback(false);
		else void command.callback?.();
	},
	/** Open an obsidian:// link of the plugin's, as a scanned QR code would. */
	openLink(url: string): void {
		const parsed = new URL(url);
		const action = parsed.hostname || parsed.pathname.replace(/^\/+/, "");
		const handlers = (plugin as unknown as { protocolHandlers: Map<string, (params: Record<string, string>) => void> }).protocolHandlers;
		handlers.get(action)?.({ action, ...Object.fromEntries(parsed.searchParams) });
	},
	/** Open Obsidian's settings window on the plugin's tab. */
	openSettings(): void {
		const tab = (plugin as unknown as { settingTabs: { containerEl: HTMLElement; display(): void }[] }).settingTabs[0]!;
		const host = document.getElementById("settings")!;
		host.classList.remove("is-hidden");
		const content = host.querySelector(".vertical-tab-content-container")!;
		content.replaceChildren(tab.containerEl);
		tab.display();
	},
	markdown,
	vault,
};
(window as unknown as { harness: typeof harness; plugin: AssistantPlugin }).harness = harness;
(window as unknown as { plugin: AssistantPlugin }).plugin = plugin;

function renderFiles(): void {
	const list = document.getElementById("files")!;
	list.replaceChildren();
	for (const path of [...vault.notes.keys()].sort()) {
		const item = list.createDiv({ cls: "nav-file-title", text: path.replace(/\.md$/, "") });
		item.dataset.path = path;
		item.addEventListener("click", () => harness.openNote(path));
	}
}

void plugin.onload().then(async () => {
	await plugin.activateView();
	document.body.dataset.ready = "true";
});
