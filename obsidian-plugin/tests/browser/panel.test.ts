// The real panel bundle in headless Chromium (Debian's package, driven by playwright-core),
// talking to the real Python server: a streamed answer, Stop, a reviewed write, and a vault's
// Server command to confirm, then the install card. `make screenshot` saves docs/assistant-panel.png from it (SCREENSHOT_DIR).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, haveChromium, send, testPages, WAIT, type PageOptions, type TestPages } from "../helpers/browser";
import { demoServer, type DemoServer } from "../helpers/server";
import { PLUGIN_VERSION, wheelUrl } from "../../src/core/install";

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

function openPanel(info: string | null, options: PageOptions = {}): Promise<Page> {
	return pages.open(info, options);
}

describe.skipIf(!haveChromium)("the assistant panel in Chromium", () => {
	it("streams an answer with a clickable wikilink, then Stop cancels a long one", async () => {
		const page = await openPanel(readFileSync(server.infoFile, "utf8"));
		await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
		await send(page, "hello");
		const answer = page.locator(".aib-assistant .aib-body").last();
		await answer.getByText("You said: hello").waitFor({ timeout: WAIT });
		await page.locator(".aib-assistant .aib-usage").last().waitFor({ timeout: WAIT });
		await answer.locator("a.internal-link").click();
		expect(await page.evaluate(() => (window as any).plugin.app.workspace.opened)).toEqual(["Welcome"]);

		await send(page, "slow please");
		const slow = page.locator(".aib-assistant .aib-body").last();
		await slow.getByText("word5", { exact: false }).waitFor({ timeout: WAIT });
		await page.click(".aib-stop");
		await page.locator(".aib-note:has-text('Stopped.')").waitFor({ timeout: WAIT });
		const shown = (await slow.textContent()) ?? "";
		expect(shown).not.toContain("word399");
		expect(await page.isVisible(".aib-send")).toBe(true);
		await page.close();
	});

	it("a write opens the review modal; approving writes the note and the panel says so", async () => {
		const page = await openPanel(readFileSync(server.infoFile, "utf8"));
		await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
		await send(page, "hello");
		await page.locator(".aib-assistant .aib-usage").last().waitFor({ timeout: WAIT });
		await send(page, "write a note about kites");
		await page.waitForSelector(".aib-confirm .aib-hunk", { timeout: WAIT });
		expect(await page.textContent(".aib-confirm")).toContain("+Kites fly.");
		expect(await page.textContent(".modal-title")).toBe("Create Ideas/Kites.md");
		const shots = process.env.SCREENSHOT_DIR;
		if (shots) await page.screenshot({ path: join(shots, "assistant-panel.png") });
		await page.click(".aib-approve");
		await page.getByText("The change is done").waitFor({ timeout: WAIT });
		expect(readFileSync(join(server.vault, "Ideas", "Kites.md"), "utf8")).toBe("# Kites\n\nKites fly.\n");
		expect(await page.textContent(".aib-tool-sentence")).toBe("Created Ideas/Kites.md");
		expect(await page.locator(".aib-tool-args").isVisible()).toBe(false); // the raw call is behind Details
		await page.click(".aib-tool-details");
		expect(await page.textContent(".aib-tool-name")).toBe("create_note");
		expect(await page.textContent(".aib-tool-args")).toContain('"path": "Ideas/Kites.md"');
		await page.close();
	});

	it("a provider error shows the server's sentence with Retry; stored conversations can be reopened", async () => {
		const page = await openPanel(readFileSync(server.infoFile, "utf8"));
		await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
		await send(page, "fail please");
		const banner = page.locator(".aib-error").last();
		await banner.waitFor({ timeout: WAIT });
		expect(await banner.textContent()).toMatch(/overloaded/i);
		expect(await banner.locator("button.aib-retry").isVisible()).toBe(true);
		// In a narrow sidebar Retry keeps its word whole (it wrapped to "R/et/ry"): one line high.
		await page.evaluate(() => ((document.querySelector(".mod-right-split") as HTMLElement).style.width = "260px"));
		const retry = await banner.locator("button.aib-retry").boundingBox();
		const sendButton = await page.locator(".aib-send").boundingBox();
		expect(retry && sendButton && retry.height <= sendButton.height + 1).toBe(true);
		// "/" with no prompts says where prompts live and how to add one.
		await page.fill(".aib-input", "/");
		await page.dispatchEvent(".aib-input", "input");
		expect(await page.locator(".aib-suggestion-hint").textContent()).toContain("Assistant/Prompts/");
		await page.fill(".aib-input", "");
		await send(page, "remember kites");
		await page.locator(".aib-assistant .aib-usage").last().waitFor({ timeout: WAIT });
		await page.click("button[aria-label='New conversation']");
		expect(await page.locator(".aib-message").count()).toBe(0);
		await page.click("button[aria-label='Conversations']");
		// The date fits on one line beside the title (it wrapped to "2026-11-" / "28").
		const item = page.locator(".aib-list-item", { hasText: "remember kites" }).first();
		const date = await item.locator(".aib-list-date").boundingBox();
		const title = await item.locator(".aib-list-title").boundingBox();
		expect(date && title && date.height <= title.height + 1).toBe(true);
		await item.locator(".aib-list-title").click();
		await page.getByText("You said: remember kites").waitFor({ timeout: WAIT });
		await page.close();
	});

	it("with no embedder the related view says what to do, and its button opens the setup card", async () => {
		const page = await openPanel(readFileSync(server.infoFile, "utf8"));
		await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
		await page.evaluate(() => {
			const harness = (window as any).harness;
			harness.addNote("Welcome.md", "# Welcome\n");
			harness.openNote("Welcome.md");
			return (window as any).plugin.activateRelated();
		});
		const message = page.locator(".aib-related-message");
		await message.waitFor({ timeout: WAIT });
		expect(await message.textContent()).toBe("Related notes need semantic search: choose an embedder (a local one is free).");
		await page.click(".aib-related-setup");
		await page.locator(".aib-setup-heading", { hasText: "Search by meaning" }).waitFor({ timeout: WAIT });
		await page.close();
	});

	it("a Server command that came with the vault runs only once confirmed here; refused, the install card follows", async () => {
		const command = "/tmp/synced/evil serve --vault {vault}";
		const page = await openPanel(null, { data: { serverCommand: command } });
		const confirm = page.locator(".aib-confirm-command-card");
		await confirm.waitFor({ timeout: WAIT });
		expect(await confirm.locator(".aib-command").textContent()).toBe(command);
		await confirm.locator("button:has-text(\"Don't run it\")").click();
		const stored = await page.evaluate(() => Object.entries(window.localStorage).find(([key]) => key.includes("server-command")));
		expect(JSON.parse(stored?.[1] ?? "null")).toEqual({ command, allowed: false });
		// The machine itself has no server installed (the fake host finds nothing): one card.
		const card = page.locator(".aib-install-card");
		await card.waitFor({ timeout: WAIT });
		// The fake host names no release host: GitHub's release of the plugin's version.
		expect(await card.locator(".aib-install-command").textContent()).toBe(`uv tool install ${wheelUrl(PLUGIN_VERSION)}`);
		expect(await card.locator("button:has-text('Copy')").isVisible()).toBe(true);
		expect(await card.locator("button:has-text('Check again')").isVisible()).toBe(true);
		expect(await page.locator(".aib-card").count()).toBe(1);
		expect(await page.locator(".aib-disconnected").count()).toBe(0);
		expect(await page.textContent(".aib-status")).toBe("Assistant: not installed");
		await page.close();
	});
});

if (!haveChromium) {
	writeFileSync(1, `Skipping the browser test: ${CHROMIUM} is missing (make test installs Debian's chromium with apt).\n`);
}
