// The real panel bundle in headless Chromium (Debian's package, driven by playwright-core),
// talking to the real Python server: a streamed answer, Stop, a reviewed write, and a vault's
// Server command to confirm, then the install card. `make screenshot` saves docs/assistant-panel.png from it (SCREENSHOT_DIR).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, haveChromium, send, testPages, WAIT, type PageOptions, type TestPages } from "../helpers/browser";
import { testHost } from "../helpers/node";
import { exposeHost, type PageHost } from "../helpers/page-host";
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

async function shot(page: Page, name: string): Promise<void> {
	const dir = process.env.SCREENSHOT_DIR;
	if (dir) await page.screenshot({ path: join(dir, name) });
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
		await shot(page, "tool-call.png");
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

	it("uvx that cannot run the package, and a command that stops before it is ready: one sentence, the output behind Details", { timeout: 60_000 }, async () => {
		const root = realpathSync(mkdtempSync(join(tmpdir(), "aib-fails-")));
		try {
			const bin = join(root, "bin");
			mkdirSync(bin);
			mkdirSync(join(root, "home"));
			const script = (name: string, body: string): string => {
				writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
				chmodSync(join(bin, name), 0o755);
				return join(bin, name);
			};
			script("uvx", 'echo "  × No solution found when resolving tool dependencies:" >&2\necho "  ╰─▶ Because obsidian-ai-bridge was not found in the package registry" >&2\nexit 1');
			const failing = script("bridge", 'echo "Error: address already in use" >&2\nexit 3');
			const real = testHost();
			const host = testHost(
				{ homedir: () => join(root, "home"), isExecutable: async (path) => path.startsWith(root) && (await real.isExecutable(path)) },
				{ env: { HOME: join(root, "home"), PATH: bin } },
			);
			let pageHost: PageHost | null = null;
			const page = await openPanel(null, { vault: root, prepare: async (fresh) => void (pageHost = await exposeHost(fresh, host)) });
			const card = page.locator(".aib-install-card");
			await card.locator(".aib-card-failure").waitFor({ timeout: WAIT });
			expect(await card.locator(".aib-card-failure-text").textContent()).toBe(
				"uv could not run obsidian-ai-bridge (see Details): install it with the command below, then Check again.",
			);
			expect(await card.locator(".aib-card-details pre").isVisible()).toBe(false);
			await card.locator(".aib-card-details summary").click();
			expect(await card.locator(".aib-card-details pre").textContent()).toContain("not found in the package registry");
			await shot(page, "install-card-uvx.png");
			// uv was asked once, whatever the retries; nothing was started with it.
			await new Promise((resolve) => setTimeout(resolve, 2000));
			expect(pageHost!.started).toEqual([`${join(bin, "uvx")} obsidian-ai-bridge --version`]);
			await page.close();

			// A command that stops before its server is ready: started twice, then the card says so.
			const command = `${failing} serve --vault {vault}`;
			const second = await openPanel(null, { vault: root, data: { serverCommand: command }, prepare: async (fresh) => void (pageHost = await exposeHost(fresh, host)) });
			await second.locator(".aib-confirm-command-card button.mod-cta").click();
			const failed = second.locator(".aib-start-failed-card");
			await failed.waitFor({ timeout: WAIT });
			expect(await failed.locator(".aib-card-failure-text").textContent()).toBe(
				"The assistant's server stopped 2 times before it was ready, so it is not started again: see Details, fix it, then Check again.",
			);
			await failed.locator(".aib-card-details summary").click();
			expect(await failed.locator(".aib-card-details pre").textContent()).toContain("Error: address already in use");
			expect(await second.locator(".aib-disconnected").count()).toBe(0);
			await shot(second, "start-failed.png");
			await new Promise((resolve) => setTimeout(resolve, 3000));
			expect(pageHost!.started).toHaveLength(2);
			// Check again starts it anew (twice at most again).
			await failed.locator("button:has-text('Check again')").click();
			await expect.poll(() => pageHost!.started.length, { timeout: WAIT }).toBe(4);
			await second.close();
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});
});

if (!haveChromium) {
	writeFileSync(1, `Skipping the browser test: ${CHROMIUM} is missing (make test installs Debian's chromium with apt).\n`);
}
