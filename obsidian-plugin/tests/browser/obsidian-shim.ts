// A small stand-in for the `obsidian` module, enough to run the real plugin bundle in a plain
// browser page: Obsidian's DOM helpers, Component/Plugin/ItemView/Modal/Setting, a Markdown
// renderer that makes [[wikilinks]] internal links, and a workspace with one right-side leaf.
/* eslint-disable */

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

export class Events {
	on(): void {}
	off(): void {}
	trigger(): void {}
}

export class Component {
	private children: Component[] = [];
	private cleanups: (() => void)[] = [];
	private loaded = false;
	load(): void {
		this.loaded = true;
		this.onload();
		for (const child of this.children) child.load();
	}
	onload(): void {}
	unload(): void {
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
}
export class TFile extends TAbstractFile {
	get basename(): string {
		return this.path.split("/").pop()!.replace(/\.md$/, "");
	}
	extension = "md";
}
export class TFolder extends TAbstractFile {}

export class FileSystemAdapter {
	constructor(private base: string) {}
	getBasePath(): string {
		return this.base;
	}
}

export class MarkdownView {}

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

export class Workspace {
	factories = new Map<string, (leaf: WorkspaceLeaf) => any>();
	leaves: { type: string; leaf: WorkspaceLeaf }[] = [];
	opened: string[] = [];
	constructor(
		private app: any,
		private sidebar: HTMLElement,
	) {}
	onLayoutReady(callback: () => void): void {
		callback();
	}
	getLeavesOfType(type: string): WorkspaceLeaf[] {
		return this.leaves.filter((l) => l.type === type).map((l) => l.leaf);
	}
	async ensureSideLeaf(type: string): Promise<WorkspaceLeaf> {
		const existing = this.getLeavesOfType(type)[0];
		if (existing) return existing;
		const leaf = new WorkspaceLeaf(this.app, this.sidebar);
		this.leaves.push({ type, leaf });
		await leaf.setViewState({ type });
		return leaf;
	}
	async revealLeaf(): Promise<void> {}
	async openLinkText(path: string): Promise<void> {
		this.opened.push(path);
	}
	getMostRecentLeaf(): null {
		return null;
	}
	getActiveFile(): null {
		return null;
	}
	getActiveViewOfType(): null {
		return null;
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
	addRibbonIcon(): HTMLElement {
		return document.createElement("div");
	}
	commands: any[] = [];
	addCommand(command: any): any {
		this.commands.push(command);
		return command;
	}
	removeCommand(): void {}
	addSettingTab(): void {}
}

export class Notice {
	static shown: string[] = [];
	constructor(message: string | DocumentFragment) {
		const text = typeof message === "string" ? message : message.textContent ?? "";
		Notice.shown.push(text);
		const box = document.getElementById("notices")!.createDiv({ cls: "notice", text });
		if (typeof message !== "string") {
			box.empty();
			box.appendChild(message);
		}
	}
	hide(): void {}
}

export class Modal {
	contentEl: HTMLElement;
	modalEl: HTMLElement;
	titleEl: HTMLElement;
	constructor(public app: any) {
		this.modalEl = document.createElement("div");
		this.modalEl.className = "modal";
		this.titleEl = this.modalEl.createDiv({ cls: "modal-title" });
		this.contentEl = this.modalEl.createDiv({ cls: "modal-content" });
	}
	setTitle(title: string): this {
		this.titleEl.textContent = title;
		return this;
	}
	open(): void {
		document.getElementById("modals")!.appendChild(this.modalEl);
		this.onOpen();
	}
	close(): void {
		this.onClose();
		this.modalEl.remove();
	}
	onOpen(): void {}
	onClose(): void {}
}

export class Setting {
	settingEl: HTMLElement;
	controlEl: HTMLElement;
	constructor(container: HTMLElement) {
		this.settingEl = container.createDiv({ cls: "setting-item" });
		this.controlEl = this.settingEl.createDiv({ cls: "setting-item-control" });
	}
	setName(name: string): this {
		this.settingEl.prepend(Object.assign(document.createElement("div"), { textContent: name }));
		return this;
	}
	setDesc(): this {
		return this;
	}
	setHeading(): this {
		return this;
	}
	addButton(build: (button: any) => void): this {
		const button = this.controlEl.createEl("button");
		const api: any = {
			setButtonText: (t: string) => ((button.textContent = t), api),
			setCta: () => api,
			onClick: (f: () => void) => (button.addEventListener("click", f), api),
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
	) {}
}

export function setIcon(parent: HTMLElement, icon: string): void {
	parent.setAttribute("data-icon", icon);
	parent.textContent = icon === "plus" ? "+" : icon === "history" ? "☰" : "⤓";
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
