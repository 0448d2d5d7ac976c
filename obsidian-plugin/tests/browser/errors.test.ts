// Every error has a way out (issue 39), in Chromium against the real server with the demo model:
// a refused key, a local runtime that does not answer, a model that is not there and a budget
// reached each say one plain sentence with the button that leads to the fix; the server's words
// and the terminal command (the last line) are behind Details; *Set up a model* reopens the setup
// card at any time. `make screenshot` saves docs/error-with-button.png.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, send, testPages, WAIT, type TestPages } from "../helpers/browser";
import { demoServer, type DemoServer } from "../helpers/server";

let pages: TestPages;
let server: DemoServer;
let page: Page;

beforeAll(async () => {
	if (!haveChromium) return;
	pages = await testPages();
	// $1.02 already spent today: a daily budget of $1 set later is used up.
	server = await demoServer({ origins: [pages.origin], spent: 1.02 });
	page = await pages.open(readFileSync(server.infoFile, "utf8"));
	await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
}, 120_000);

afterAll(async () => {
	await pages?.close();
	await server?.cleanup();
});

/** The last answer's error: its sentence, its buttons, and what Details holds. */
async function lastError(): Promise<{ text: string; buttons: string[]; details: string }> {
	const banner = page.locator(".aib-assistant").last().locator(".aib-error");
	await banner.waitFor({ timeout: WAIT });
	const details = banner.locator(".aib-error-details pre");
	return {
		text: (await banner.locator(".aib-error-text").textContent()) ?? "",
		buttons: await banner.locator(".aib-error-buttons button").allTextContents(),
		details: (await details.count()) > 0 ? ((await details.textContent()) ?? "") : "",
	};
}

describe.skipIf(!haveChromium)("errors with a way out", () => {
	it("a refused key says so plainly and Open setup opens the setup card; the command is last, behind Details", async () => {
		await send(page, "refused key please");
		const error = await lastError();
		expect(error.text).toBe("The model provider refused the API key: give a new key in the setup card, or choose another model.");
		expect(error.text).not.toContain("obsidian-ai-bridge");
		expect(error.buttons).toEqual(["Open setup", "Choose another model"]);
		expect(error.details.split("\n").pop()).toBe("In a terminal: obsidian-ai-bridge setup");
		expect(await page.locator(".aib-error-details pre").last().isVisible()).toBe(false);
		const shots = process.env.SCREENSHOT_DIR;
		if (shots) await page.screenshot({ path: join(shots, "error-with-button.png") });
		await page.locator(".aib-error button:has-text('Open setup')").last().click();
		await page.locator(".aib-setup-card").waitFor({ timeout: WAIT });
		await page.locator(".aib-setup-card button:has-text('Done')").click();
		expect(await page.locator(".aib-setup-card").count()).toBe(0);
		// *Set up a model* reopens the card at any time.
		await page.evaluate(() => (window as any).harness.run("set-up-model"));
		await page.locator(".aib-setup-card").waitFor({ timeout: WAIT });
		await page.locator(".aib-setup-card button:has-text('Done')").click();
	});

	it("a local runtime that does not answer offers Retry, which sends the message again", async () => {
		await page.evaluate(() => ((window as any).plugin.localModel = () => true));
		await send(page, "runtime stopped please");
		const error = await lastError();
		expect(error.text).toBe("The model runtime on this computer does not answer: start it (Ollama or LM Studio), then Retry.");
		expect(error.buttons).toEqual(["Retry", "Choose another model", "Open setup"]);
		const answers = await page.locator(".aib-assistant").count();
		await page.locator(".aib-error button:has-text('Retry')").last().click();
		await page.waitForFunction((n) => document.querySelectorAll(".aib-assistant .aib-error").length > 0 && document.querySelectorAll(".aib-assistant").length > n, answers, { timeout: WAIT });
	});

	it("a model that is not there offers Choose another model, with the download command behind Details", async () => {
		await send(page, "missing model please");
		const error = await lastError();
		expect(error.text).toBe("The model llama3.2 is not on this computer: choose another model, or download it in the setup card.");
		expect(error.buttons).toEqual(["Choose another model", "Open setup"]);
		expect(error.details.split("\n").pop()).toBe("In a terminal: ollama pull llama3.2");
	});

	it("a budget reached offers a free model and the settings; Settings opens the plugin's tab", async () => {
		await page.evaluate(() => (window as any).plugin.client.call("settings/update", { dailyBudgetUsd: 1 }));
		await send(page, "hello again");
		const error = await lastError();
		expect(error.text).toBe("The assistant's spending limit is reached: choose a model that runs on this computer (free), or raise the budget in the settings.");
		expect(error.buttons).toEqual(["Choose another model", "Settings"]);
		await page.locator(".aib-error button:has-text('Settings')").last().click();
		await page.locator("#settings:not(.is-hidden) .setting-item").first().waitFor({ timeout: WAIT });
	});
});
