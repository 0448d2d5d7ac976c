// Images and PDFs as context in the real panel (headless Chromium, the real server): an image
// dropped from the desktop is saved into the vault's attachment folder and becomes a chip with
// its thumbnail; a PDF dragged from the file explorer becomes a chip; `@` offers both.
// `make screenshot` saves docs/panel-image-chip.png from here (SCREENSHOT_DIR).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, haveChromium, send, testPages, WAIT, type TestPages } from "../helpers/browser";
import { demoServer, type DemoServer } from "../helpers/server";

let pages: TestPages;
let server: DemoServer;

beforeAll(async () => {
	if (!haveChromium) return;
	pages = await testPages();
	server = await demoServer({ origins: [pages.origin], delay: 0.03 });
}, 120_000);

afterAll(async () => {
	await pages?.close();
	await server?.cleanup();
});

describe.skipIf(!haveChromium)("images and PDFs dropped on the panel", () => {
	it("a desktop image is saved as an attachment and shown as a chip with its thumbnail", async () => {
		const page = await pages.open(readFileSync(server.infoFile, "utf8"));
		await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
		await page.evaluate(async () => {
			// A small diagram, as a PNG file from the desktop (a File in the drop's DataTransfer).
			const canvas = document.createElement("canvas");
			canvas.width = 320;
			canvas.height = 200;
			const g = canvas.getContext("2d")!;
			g.fillStyle = "#f4f1ea";
			g.fillRect(0, 0, 320, 200);
			g.fillStyle = "#7c5cff";
			g.fillRect(20, 70, 100, 60);
			g.fillStyle = "#2fb37a";
			g.fillRect(200, 70, 100, 60);
			g.fillStyle = "#333";
			g.fillRect(120, 97, 80, 6);
			const blob = await new Promise<Blob>((done) => canvas.toBlob((b) => done(b!), "image/png"));
			const transfer = new DataTransfer();
			transfer.items.add(new File([blob], "diagram.png", { type: "image/png" }));
			const target = document.querySelector(".aib-composer")!;
			target.dispatchEvent(new DragEvent("dragover", { dataTransfer: transfer, bubbles: true, cancelable: true }));
			target.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
		});
		const chip = page.locator(".aib-chip", { hasText: "diagram.png" });
		await chip.locator("img.aib-chip-thumb").waitFor({ timeout: WAIT });
		const saved = await page.evaluate(() => [...(window as any).harness.vault.binaries.keys()]);
		expect(saved).toEqual(["Attachments/diagram.png"]);
		const width = await chip.locator("img.aib-chip-thumb").evaluate((img: HTMLImageElement) => img.naturalWidth);
		expect(width).toBe(320); // the saved image itself, loaded from the vault

		// A PDF dragged from the file explorer: the drag's text is an obsidian:// link to it.
		await page.evaluate(async () => {
			await (window as any).harness.vault.createBinary("Papers/Attention.pdf", new ArrayBuffer(8));
			const transfer = new DataTransfer();
			transfer.setData("text/plain", "obsidian://open?vault=My%20Vault&file=Papers%2FAttention.pdf");
			document.querySelector(".aib-composer")!.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
		});
		await page.locator(".aib-chip", { hasText: "Attention.pdf" }).waitFor({ timeout: WAIT });

		// `@` offers images and PDFs beside notes.
		await page.fill(".aib-input", "@atta");
		await page.dispatchEvent(".aib-input", "input");
		await page.locator(".aib-suggestion", { hasText: "Attachments/diagram.png" }).waitFor({ timeout: WAIT });
		await page.fill(".aib-input", "What does this diagram show?");
		await page.dispatchEvent(".aib-input", "input");
		const shots = process.env.SCREENSHOT_DIR;
		if (shots) await page.locator(".workspace-leaf").last().screenshot({ path: join(shots, "panel-image-chip.png") });

		// Sent to the demo server's text-only model: the answer comes, with the one-sentence notice.
		const saved1 = await page.evaluate(async () => {
			const blob = await (await fetch((document.querySelector("img.aib-chip-thumb") as HTMLImageElement).src)).arrayBuffer();
			return Array.from(new Uint8Array(blob));
		});
		mkdirSync(join(server.vault, "Attachments"), { recursive: true });
		writeFileSync(join(server.vault, "Attachments", "diagram.png"), Buffer.from(saved1));
		await page.locator(".aib-chip", { hasText: "Attention.pdf" }).locator(".aib-chip-remove").click();
		await send(page, "What does this diagram show?");
		await page.locator(".aib-assistant .aib-usage").last().waitFor({ timeout: WAIT });
		expect(await page.locator(".aib-warning").last().textContent()).toMatch(/cannot see images, so Attachments\/diagram.png was not sent/);
		await page.close();
	});
});

if (!haveChromium) {
	writeFileSync(1, `Skipping the browser test: ${CHROMIUM} is missing (make test installs Debian's chromium with apt).\n`);
}
