// Images and PDFs dropped on the panel become the next message's context: a file from the vault
// (the file explorer, a link) as it is; a file from the desktop saved first where Obsidian saves
// attachments (its "Default location for new attachments" setting, through the fileManager). A
// chip of an image shows the image itself.
import { type App, type Component, setIcon, TFile } from "obsidian";
import { isAttachmentPath, isImagePath, vaultPathFromDrag, type ContextItem } from "../core/chips";

/** Take drops on `target`: each dropped note, image or PDF is passed to `add` by vault path. */
export function acceptDrops(owner: Component, target: HTMLElement, app: App, sourcePath: () => string, add: (path: string) => void): void {
	owner.registerDomEvent(target, "dragover", (event: DragEvent) => {
		if (!event.dataTransfer) return;
		event.preventDefault();
		event.dataTransfer.dropEffect = "copy";
		target.addClass("is-drop-target");
	});
	owner.registerDomEvent(target, "dragleave", () => target.removeClass("is-drop-target"));
	owner.registerDomEvent(target, "drop", (event: DragEvent) => {
		target.removeClass("is-drop-target");
		const transfer = event.dataTransfer;
		if (!transfer) return;
		event.preventDefault();
		void dropped(transfer, app, sourcePath(), add);
	});
}

async function dropped(transfer: DataTransfer, app: App, sourcePath: string, add: (path: string) => void): Promise<void> {
	const files = Array.from(transfer.files).filter((file) => isAttachmentPath(file.name));
	for (const file of files) {
		const path = await app.fileManager.getAvailablePathForAttachment(file.name, sourcePath);
		const saved = await app.vault.createBinary(path, await file.arrayBuffer());
		add(saved.path);
	}
	if (files.length > 0) return;
	const linked = vaultPathFromDrag(transfer.getData("text/plain"));
	if (!linked) return;
	const file = app.vault.getFileByPath(linked) ?? app.metadataCache.getFirstLinkpathDest(linked, sourcePath);
	if (file instanceof TFile && (file.extension === "md" || isAttachmentPath(file.path))) add(file.path);
}

/** A chip's icon: the image itself for an image in the vault, else the kind's icon. */
export function renderChipIcon(icon: HTMLElement, item: ContextItem, app: App): void {
	if ("note" in item && isImagePath(item.note)) {
		const file = app.vault.getFileByPath(item.note);
		if (file) {
			icon.addClass("has-thumbnail");
			icon.createEl("img", { cls: "aib-chip-thumb", attr: { src: app.vault.getResourcePath(file), alt: "" } });
			return;
		}
	}
	if ("note" in item) setIcon(icon, isAttachmentPath(item.note) ? "file" : "file-text");
	else setIcon(icon, "folder" in item ? "folder" : "tag");
}
