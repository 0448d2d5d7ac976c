// A small stand-in for the `obsidian` module, enough to run the real plugin bundle in a plain
// browser page: Obsidian's DOM helpers, Component/Plugin/ItemView/Modal/Setting, icons drawn from
// lucide-static (Obsidian's icon set), a Markdown renderer that makes [[wikilinks]] internal
// links, a vault of notes in memory, and a Markdown view whose editor is a textarea with
// Obsidian's Editor API (transactions, one undo step each). The page around it is page.html.
/* eslint-disable */
import * as lucide from "lucide-static";

type ElInfo = { cls?: string | string[]; text?: string; attr?: Record<string, string>; type?: string; href?: string };

function apply(el: HTMLElement, info?: ElInfo | string): void {
	if (typeof info === "string") {
		el.className = info;
		return;
	}
	if (!info) return;
	if (info.cls) el.classList.add(...(Array.isArray(info.cls) ? info.cls : info.cls.split(" ").filter(Boolean)));
	if (info.text !== undefined) el.textContent = info.text;
	if (info.type) (el as HTMLInputElement).type = info.type;
	if (info.href) (el as HTMLAnchorElement).href = info.href;
	for (const [k, v] of Object.entries(info.attr ?? {})) el.setAttribute(k, v);
}

const proto = Node.prototype as any;
proto.createEl = function (tag: string, info?: ElInfo | string, callback?: (el: HTMLElement) => void) {
	const el = document.createElement(tag);
	apply(el, info);
	this.appendChild(el);
	callback?.(el);
	return el;
};
proto.createDiv = function (info?: ElInfo | string) {
	return this.createEl("div", info);
};
proto.createSpan = function (info?: ElInfo | string) {
	return this.createEl("span", info);
};
proto.empty = function () {
	while (this.firstChild) this.removeChild(this.firstChild);
};
proto.setText = function (text: string) {
	this.textContent = text;
};
proto.appendText = function (text: string) {
	this.appendChild(document.createTextNode(text));
};
const el = HTMLElement.prototype as any;
el.addClass = function (...c: string[]) {
	this.classList.add(...c);
};
el.removeClass = function (...c: string[]) {
	this.classList.remove(...c);
};
el.toggleClass = function (c: string, on: boolean) {
	this.classList.toggle(c, on);
};
el.hasClass = function (c: string) {
	return this.classList.contains(c);
};
(window as any).createDiv = (info?: ElInfo) => {
	const div = document.createElement("div");
	apply(div, info);
	return div;
};
(window as any).createFragment = (callback?: (f: DocumentFragment) => void) => {
	const f = document.createDocumentFragment();
	callback?.(f);
	return f;
};

export const Platform = { isDesktop: true, isMobile: false };

/** The browser test never reaches the network: every request fails as it would offline; a test
 * may answer them from its Node side (`window.aibRequestUrl`, loopback only), as Obsidian's
 * requestUrl does outside the page (its own TLS checks, no CORS). */
export function requestUrl(request: { url: string; headers?: Record<string, string> }): Promise<{ status: number; text: string }> {
	const node = (window as any).aibRequestUrl as ((url: string, headers: Record<string, string>) => Promise<{ status: number; text: string }>) | undefined;
	if (node) return node(request.url, request.headers ?? {});
	return Promise.reject(new Error(`no network in the browser test (${request.url})`));
}

type EventRef = { owner: Events; name: string; callback: (...args: any[]) => void };

export class Events {
	private handlers = new Map<string, ((...args: any[]) => void)[]>();
	on(name: string, callback: (...args: any[]) => void): EventRef {
		this.handlers.set(name, [...(this.handlers.get(name) ?? []), callback]);
		return { owner: this, name, callback };
	}
	offref(ref: EventRef): void {
		this.handlers.set(ref.name, (this.handlers.get(ref.name) ?? []).filter((c) => c !== ref.callback));
	}
	trigger(name: string, ...args: unknown[]): void {
		for (const callback of this.handlers.get(name) ?? []) callback(...args);
	}
}

export class Component {
	private children: Component[] = [];
	private cleanups: (() => void)[] = [];
	private loaded = false;
	load(): void {
		if (this.loaded) return;
		this.loaded = true;
		this.onload();
		for (const child of this.children) child.load();
	}
	onload(): void {}
	unload(): void {
		if (!this.loaded) return;
		this.loaded = false;
		for (const child of this.children) child.unload();
		this.children = [];
		for (const cleanup of this.cleanups.splice(0)) cleanup();
		this.onunload();
	}
	onunload(): void {}
	addChild<T extends Component>(child: T): T {
		this.children.push(child);
		if (this.loaded) child.load();
		return child;
	}
	removeChild<T extends Component>(child: T): T {
		this.children = this.children.filter((c) => c !== child);
		child.unload();
		return child;
	}
	register(cleanup: () => void): void {
		this.cleanups.push(cleanup);
	}
	registerEvent(ref: EventRef): void {
		this.register(() => ref.owner.offref(ref));
	}
	registerDomEvent(target: EventTarget, type: string, listener: (event: any) => void): void {
		target.addEventListener(type, listener);
		this.register(() => target.removeEventListener(type, listener));
	}
	registerInterval(id: number): number {
		this.register(() => window.clearInterval(id));
		return id;
	}
}

export class TAbstractFile {
	constructor(public path: string) {}
	get name(): string {
		return this.path.split("/").pop() ?? this.path;
	}
}
export class TFolder extends TAbstractFile {}
export class TFile extends TAbstractFile {
	extension: string;
	stat = { mtime: 0, ctime: 0, size: 0 };
	constructor(path: string) {
		super(path);
		this.extension = path.split(".").pop() ?? "";
	}
	get basename(): string {
		return this.name.replace(/\.[^.]+$/, "");
	}
	get parent(): TFolder {
		const folder = this.path.split("/").slice(0, -1).join("/");
		return new TFolder(folder || "/");
	}
}

export class FileSystemAdapter {
	constructor(private base: string) {}
	getBasePath(): string {
		return this.base;
	}
}

/** The notes of the page's vault, in memory (the test adds the ones it uses). */
export class Vault extends Events {
	adapter: FileSystemAdapter;
	configDir = ".obsidian";
	notes = new Map<string, { file: TFile; text: string }>();
	constructor(base: string) {
		super();
		this.adapter = new FileSystemAdapter(base);
	}
	getName(): string {
		return this.adapter.getBasePath().split("/").pop() ?? "";
	}
	add(path: string, text: string, mtime = Date.now()): TFile {
		const file = new TFile(path);
		file.stat.mtime = mtime;
		this.notes.set(path, { file, text });
		return file;
	}
	getAllLoadedFiles(): TAbstractFile[] {
		return [...this.notes.values(), ...this.binaries.values()].map((n) => n.file);
	}
	getMarkdownFiles(): TFile[] {
		return [...this.notes.values()].map((n) => n.file).filter((f) => f.extension === "md");
	}
	getFileByPath(path: string): TFile | null {
		return this.notes.get(path)?.file ?? this.binaries.get(path)?.file ?? null;
	}
	/** Images and PDFs, with an object URL for <img> (Obsidian's app:// resource path). */
	binaries = new Map<string, { file: TFile; url: string }>();
	async createBinary(path: string, data: ArrayBuffer): Promise<TFile> {
		const file = new TFile(path);
		file.stat.size = data.byteLength;
		this.binaries.set(path, { file, url: URL.createObjectURL(new Blob([data])) });
		this.trigger("create", file);
		return file;
	}
	getResourcePath(file: TFile): string {
		return this.binaries.get(file.path)?.url ?? `app://local/${file.path}`;
	}
	async read(file: TFile): Promise<string> {
		return this.notes.get(file.path)?.text ?? "";
	}
	async process(file: TFile, fn: (data: string) => string): Promise<string> {
		const note = this.notes.get(file.path);
		if (!note) throw new Error(`no note ${file.path}`);
		note.text = fn(note.text);
		this.trigger("modify", file);
		return note.text;
	}
	/** The editor saved (Obsidian saves on its own a moment after typing). */
	save(file: TFile, text: string): void {
		const note = this.notes.get(file.path);
		if (note) note.text = text;
		this.trigger("modify", file);
	}
}

export class MetadataCache extends Events {
	tags = new Map<string, string[]>();
	getFileCache(file: TFile): { tags?: { tag: string }[] } | null {
		return { tags: (this.tags.get(file.path) ?? []).map((tag) => ({ tag })) };
	}
	fileToLinktext(file: TFile): string {
		return file.path.replace(/\.md$/, "");
	}
	getFirstLinkpathDest(): TFile | null {
		return null;
	}
}

/** Obsidian's fileManager: new attachments go to the folder its setting names ("Attachments"). */
export class FileManager {
	constructor(
		private vault: Vault,
		public attachmentFolder = "Attachments",
	) {}
	async getAvailablePathForAttachment(name: string): Promise<string> {
		const dot = name.lastIndexOf(".");
		for (let n = 0; ; n++) {
			const candidate = `${this.attachmentFolder}/${n ? `${name.slice(0, dot)} ${n}${name.slice(dot)}` : name}`;
			if (!this.vault.getFileByPath(candidate)) return candidate;
		}
	}
}

export function getAllTags(cache: { tags?: { tag: string }[] }): string[] | null {
	return cache.tags?.map((t) => t.tag) ?? null;
}

type Pos = { line: number; ch: number };

/** Obsidian's Editor over a textarea: each transaction is one undo step, as in the app. */
export class Editor {
	private history: string[] = [];
	constructor(public textarea: HTMLTextAreaElement) {}
	getValue(): string {
		return this.textarea.value;
	}
	setValue(text: string): void {
		this.textarea.value = text;
	}
	posToOffset(pos: Pos): number {
		const lines = this.getValue().split("\n");
		let offset = 0;
		for (let i = 0; i < pos.line && i < lines.length; i++) offset += (lines[i]?.length ?? 0) + 1;
		return offset + pos.ch;
	}
	offsetToPos(offset: number): Pos {
		const before = this.getValue().slice(0, offset).split("\n");
		return { line: before.length - 1, ch: before[before.length - 1]?.length ?? 0 };
	}
	getCursor(which: "from" | "to" | "head" = "head"): Pos {
		const { selectionStart, selectionEnd } = this.textarea;
		return this.offsetToPos(which === "to" ? selectionEnd : selectionStart);
	}
	getSelection(): string {
		return this.getValue().slice(this.textarea.selectionStart, this.textarea.selectionEnd);
	}
	somethingSelected(): boolean {
		return this.textarea.selectionEnd > this.textarea.selectionStart;
	}
	getRange(from: Pos, to: Pos): string {
		return this.getValue().slice(this.posToOffset(from), this.posToOffset(to));
	}
	transaction(tx: { changes?: { from: Pos; to?: Pos; text: string }[] }): void {
		const text = this.getValue();
		const changes = (tx.changes ?? [])
			.map((c) => ({ from: this.posToOffset(c.from), to: this.posToOffset(c.to ?? c.from), text: c.text }))
			.sort((a, b) => b.from - a.from);
		let next = text;
		for (const change of changes) next = next.slice(0, change.from) + change.text + next.slice(change.to);
		this.history.push(text);
		this.textarea.value = next;
	}
	replaceSelection(text: string): void {
		this.transaction({ changes: [{ from: this.getCursor("from"), to: this.getCursor("to"), text }] });
	}
	undo(): void {
		const previous = this.history.pop();
		if (previous !== undefined) this.textarea.value = previous;
	}
}

export class WorkspaceLeaf {
	view: any = null;
	constructor(
		private app: any,
		public containerEl: HTMLElement,
	) {}
	async setViewState(state: { type: string }): Promise<void> {
		const factory = this.app.workspace.factories.get(state.type);
		this.view = factory(this);
		this.containerEl.appendChild(this.view.containerEl);
		this.view.load();
		await this.view.onOpen();
	}
}

export class ItemView extends Component {
	containerEl: HTMLElement;
	contentEl: HTMLElement;
	app: any;
	constructor(public leaf: WorkspaceLeaf) {
		super();
		this.app = (leaf as any).app;
		this.containerEl = document.createElement("div");
		this.containerEl.className = "workspace-leaf-content";
		this.contentEl = this.containerEl.createDiv({ cls: "view-content" });
	}
	async onOpen(): Promise<void> {}
	async onClose(): Promise<void> {}
}

/** The note open in the page's editor pane. */
export class MarkdownView extends ItemView {
	file: TFile | null = null;
	editor: Editor;
	/** "preview": the note is shown in reading mode (no editor to type in). */
	mode: "source" | "preview" = "source";
	constructor(leaf: WorkspaceLeaf, textarea: HTMLTextAreaElement) {
		super(leaf);
		this.editor = new Editor(textarea);
	}
	getMode(): "source" | "preview" {
		return this.mode;
	}
}

export class Workspace extends Events {
	factories = new Map<string, (leaf: WorkspaceLeaf) => any>();
	leaves: { type: string; leaf: WorkspaceLeaf; tab: HTMLElement }[] = [];
	opened: string[] = [];
	markdown: MarkdownView | null = null;
	constructor(
		private app: any,
		private sidebar: HTMLElement,
		private tabs: HTMLElement,
	) {
		super();
	}
	onLayoutReady(callback: () => void): void {
		callback();
	}
	getLeavesOfType(type: string): WorkspaceLeaf[] {
		if (type === "markdown") return this.markdown ? [this.markdown.leaf] : [];
		return this.leaves.filter((l) => l.type === type).map((l) => l.leaf);
	}
	async ensureSideLeaf(type: string): Promise<WorkspaceLeaf> {
		const existing = this.leaves.find((l) => l.type === type);
		if (existing) {
			this.show(type);
			return existing.leaf;
		}
		const holder = this.sidebar.createDiv({ cls: "workspace-leaf" });
		const leaf = new WorkspaceLeaf(this.app, holder);
		const tab = this.tabs.createDiv({ cls: "workspace-tab-header clickable-icon", attr: { "data-type": type } });
		tab.addEventListener("click", () => this.show(type));
		this.leaves.push({ type, leaf, tab });
		await leaf.setViewState({ type });
		setIcon(tab, leaf.view.getIcon());
		tab.setAttribute("aria-label", leaf.view.getDisplayText());
		this.show(type);
		return leaf;
	}
	/** The right sidebar shows one of its views at a time, like Obsidian's tabs. */
	show(type: string): void {
		for (const l of this.leaves) {
			l.leaf.containerEl.toggleClass("is-hidden", l.type !== type);
			l.tab.toggleClass("is-active", l.type === type);
		}
	}
	async revealLeaf(): Promise<void> {}
	async openLinkText(path: string): Promise<void> {
		this.opened.push(path);
		const harness = (window as any).harness;
		const target = path.endsWith(".md") ? path : `${path}.md`;
		if (harness && this.app.vault.getFileByPath(target)) harness.openNote(target);
	}
	getMostRecentLeaf(): WorkspaceLeaf | null {
		return this.markdown?.leaf ?? null;
	}
	getActiveFile(): TFile | null {
		return this.markdown?.file ?? null;
	}
	getActiveViewOfType(type: unknown): any {
		return type === MarkdownView && this.markdown?.file ? this.markdown : null;
	}
}

export class Plugin extends Component {
	constructor(
		public app: any,
		public manifest: any,
	) {
		super();
	}
	private data: unknown = null;
	async loadData(): Promise<unknown> {
		return this.data;
	}
	async saveData(data: unknown): Promise<void> {
		this.data = data;
	}
	registerView(type: string, factory: (leaf: WorkspaceLeaf) => any): void {
		this.app.workspace.factories.set(type, factory);
	}
	addStatusBarItem(): HTMLElement {
		return document.getElementById("status-bar")!.createDiv({ cls: "status-bar-item" });
	}
	addRibbonIcon(icon: string, title: string): HTMLElement {
		const button = document.getElementById("ribbon")!.createDiv({ cls: "clickable-icon side-dock-ribbon-action", attr: { "aria-label": title } });
		setIcon(button, icon);
		return button;
	}
	commands: any[] = [];
	addCommand(command: any): any {
		this.commands.push(command);
		return command;
	}
	removeCommand(): void {}
	settingTabs: any[] = [];
	addSettingTab(tab: any): void {
		this.settingTabs.push(tab);
	}
	/** Handlers of obsidian:// links by action (the harness opens one as a scanned QR code would). */
	protocolHandlers = new Map<string, (params: Record<string, string>) => void>();
	registerObsidianProtocolHandler(action: string, handler: (params: Record<string, string>) => void): void {
		this.protocolHandlers.set(action, handler);
	}
}

export class Notice {
	static shown: string[] = [];
	private box: HTMLElement;
	/** Shown for `duration` ms (0: until hidden), as Obsidian's notices are. */
	constructor(message: string | DocumentFragment, duration = 4000) {
		const text = typeof message === "string" ? message : message.textContent ?? "";
		Notice.shown.push(text);
		this.box = document.getElementById("notices")!.createDiv({ cls: "notice", text });
		if (typeof message !== "string") {
			this.box.empty();
			this.box.appendChild(message);
		}
		if (duration > 0) window.setTimeout(() => this.hide(), Math.min(duration, 4000));
	}
	hide(): void {
		this.box.remove();
	}
}

export class Modal {
	contentEl: HTMLElement;
	modalEl: HTMLElement;
	titleEl: HTMLElement;
	containerEl: HTMLElement;
	constructor(public app: any) {
		this.containerEl = document.createElement("div");
		this.containerEl.className = "modal-container";
		this.containerEl.createDiv({ cls: "modal-bg" });
		this.modalEl = this.containerEl.createDiv({ cls: "modal" });
		const close = this.modalEl.createDiv({ cls: "modal-close-button" });
		close.addEventListener("click", () => this.close());
		const header = this.modalEl.createDiv({ cls: "modal-header" });
		this.titleEl = header.createDiv({ cls: "modal-title" });
		this.contentEl = this.modalEl.createDiv({ cls: "modal-content" });
	}
	setTitle(title: string): this {
		this.titleEl.textContent = title;
		return this;
	}
	open(): void {
		document.getElementById("modals")!.appendChild(this.containerEl);
		this.onOpen();
	}
	close(): void {
		this.onClose();
		this.containerEl.remove();
	}
	onOpen(): void {}
	onClose(): void {}
}

function control(parent: HTMLElement, tag: string, cls: string): any {
	return (parent as any).createEl(tag, { cls });
}

export class Setting {
	settingEl: HTMLElement;
	infoEl: HTMLElement;
	nameEl: HTMLElement;
	descEl: HTMLElement;
	controlEl: HTMLElement;
	constructor(container: HTMLElement) {
		this.settingEl = container.createDiv({ cls: "setting-item" });
		this.infoEl = this.settingEl.createDiv({ cls: "setting-item-info" });
		this.nameEl = this.infoEl.createDiv({ cls: "setting-item-name" });
		this.descEl = this.infoEl.createDiv({ cls: "setting-item-description" });
		this.controlEl = this.settingEl.createDiv({ cls: "setting-item-control" });
	}
	setName(name: string): this {
		this.nameEl.textContent = name;
		return this;
	}
	setDesc(desc: string): this {
		this.descEl.textContent = desc;
		return this;
	}
	setHeading(): this {
		this.settingEl.addClass("setting-item-heading");
		return this;
	}
	setClass(cls: string): this {
		this.settingEl.addClass(cls);
		return this;
	}
	addButton(build: (button: any) => void): this {
		const button = control(this.controlEl, "button", "");
		const api: any = {
			buttonEl: button,
			setButtonText: (t: string) => ((button.textContent = t), api),
			setCta: () => (button.addClass("mod-cta"), api),
			onClick: (f: () => void) => (button.addEventListener("click", f), api),
		};
		build(api);
		return this;
	}
	addText(build: (text: any) => void): this {
		const input = control(this.controlEl, "input", "") as HTMLInputElement;
		input.type = "text";
		const api: any = {
			inputEl: input,
			setValue: (v: string) => ((input.value = v), api),
			getValue: () => input.value,
			setPlaceholder: (p: string) => ((input.placeholder = p), api),
			onChange: (f: (v: string) => void) => (input.addEventListener("input", () => f(input.value)), api),
		};
		build(api);
		return this;
	}
	addDropdown(build: (dropdown: any) => void): this {
		const select = control(this.controlEl, "select", "dropdown") as HTMLSelectElement;
		const api: any = {
			selectEl: select,
			addOption: (value: string, label: string) => (select.createEl("option", { text: label, attr: { value } }), api),
			addOptions: (options: Record<string, string>) => {
				for (const [value, label] of Object.entries(options)) api.addOption(value, label);
				return api;
			},
			setValue: (v: string) => ((select.value = v), api),
			getValue: () => select.value,
			onChange: (f: (v: string) => void) => (select.addEventListener("change", () => f(select.value)), api),
		};
		build(api);
		return this;
	}
	addToggle(build: (toggle: any) => void): this {
		const box = control(this.controlEl, "div", "checkbox-container");
		let value = false;
		const api: any = {
			setValue: (v: boolean) => ((value = v), box.toggleClass("is-enabled", v), api),
			getValue: () => value,
			onChange: (f: (v: boolean) => void) => (box.addEventListener("click", () => (api.setValue(!value), f(value))), api),
		};
		build(api);
		return this;
	}
}

export class PluginSettingTab {
	containerEl = document.createElement("div");
	constructor(
		public app: any,
		public plugin: any,
	) {
		this.containerEl.className = "vertical-tab-content";
	}
	display(): void {}
	hide(): void {}
}

function iconName(icon: string): string {
	return icon
		.split("-")
		.map((part) => part.charAt(0).toUpperCase() + part.slice(1))
		.join("");
}

/** Draws the lucide icon as Obsidian does (an svg with class svg-icon). */
export function setIcon(parent: HTMLElement, icon: string): void {
	parent.setAttribute("data-icon", icon);
	const svg = (lucide as Record<string, string>)[iconName(icon)];
	parent.innerHTML = svg ? svg.replace('class="lucide ', 'class="svg-icon lucide ') : "";
}

export const MarkdownRenderer = {
	async render(_app: unknown, markdown: string, target: HTMLElement): Promise<void> {
		for (const block of markdown.split(/\n{2,}/)) {
			const p = target.createEl("p");
			for (const part of block.split(/(\[\[[^\]]+\]\])/)) {
				const link = /^\[\[([^\]|]+)(?:\|([^\]]+))?\]\]$/.exec(part);
				if (link) {
					const a = p.createEl("a", { cls: "internal-link", text: link[2] ?? link[1] });
					a.dataset.href = link[1];
				} else if (part) {
					p.appendText(part);
				}
			}
		}
	},
};
