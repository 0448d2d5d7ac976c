// The model switcher (issue 39), in Chromium against the real server with the demo model listing
// 323 models (an OpenRouter-sized list): the header names the model answering and its provider;
// the switcher filters the list by typing, groups it by provider with badges and a price per
// answer; a model chosen for this conversation answers the next message (the usage line names
// it); *Think harder* sends one message to the deep model; the settings tab's list has the same
// filter. `make screenshot` saves docs/model-switcher.png.
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
	server = await demoServer({ origins: [pages.origin], manyModels: 320, deepModel: "demo-deep" });
	page = await pages.open(readFileSync(server.infoFile, "utf8"));
	await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
}, 120_000);

afterAll(async () => {
	await pages?.close();
	await server?.cleanup();
});

describe.skipIf(!haveChromium)("the model switcher", () => {
	it("the header names the model answering; typing filters a 320-model list, grouped with badges and prices", async () => {
		const button = page.locator(".aib-model-button");
		await button.locator(".aib-model-label", { hasText: "demo-model · OpenAI" }).waitFor({ timeout: WAIT });
		await button.click();
		const picker = page.locator(".aib-model-picker");
		await picker.locator(".aib-model-row").first().waitFor({ timeout: WAIT });
		// 322 chat models (the embedding one is never offered); the first 200 drawn, the rest by typing.
		expect(await picker.locator(".aib-model-row").count()).toBe(200);
		expect(await picker.locator(".aib-note").last().textContent()).toBe("122 more: type to narrow the list.");
		await page.fill(".aib-model-filter", "model-31");
		expect(await picker.locator(".aib-model-row").count()).toBe(11);
		const shots = process.env.SCREENSHOT_DIR;
		if (shots) await page.screenshot({ path: join(shots, "model-switcher.png") });
		await page.fill(".aib-model-filter", "stark 31");
		const rows = picker.locator(".aib-model-row");
		// Every word counts, in any order.
		expect(await rows.locator(".aib-model-name").allTextContents()).toEqual(["Stark model 317"]);
		await page.fill(".aib-model-filter", "model-316");
		expect(await picker.locator(".aib-model-group").allTextContents()).toEqual(["OpenAI: hooli"]);
		const row = picker.locator(".aib-model-row");
		expect(await row.locator(".aib-setup-badge").allTextContents()).toEqual(["can use your notes", "sees images"]);
		// $1.50 and $2.50 per million tokens: a typical answer (3,000 read, 500 written) ≈ $0.006.
		expect(await row.locator(".aib-model-price").textContent()).toMatch(/^≈ \$0\.00(57|58) per answer$/);
		await page.fill(".aib-model-filter", "demo");
		expect(await picker.locator(".aib-model-row.is-current .aib-model-name").textContent()).toBe("Demo model");
	});

	it("a model chosen for this conversation answers the next message, and the usage line names it", async () => {
		await page.locator(".aib-model-row", { hasText: "Demo small (fast)" }).click();
		expect(await page.locator(".aib-model-picker").isVisible()).toBe(false);
		expect(await page.locator(".aib-model-label").textContent()).toBe("Demo small (fast) · OpenAI");
		await send(page, "hello");
		const usage = page.locator(".aib-assistant .aib-usage").last();
		await usage.waitFor({ timeout: WAIT });
		expect(await usage.textContent()).toMatch(/^demo-small · \d+ tokens read · \d+ written · price not known$/);
		// A new conversation goes back to the default.
		await page.click("button[aria-label='New conversation']");
		expect(await page.locator(".aib-model-label").textContent()).toBe("demo-model · OpenAI");
		await send(page, "hello again");
		await page.locator(".aib-assistant .aib-usage").last().waitFor({ timeout: WAIT });
		expect(await page.locator(".aib-assistant .aib-usage").last().textContent()).toMatch(/^demo-model · /);
	});

	it("Think harder sends the next message to the deep model, once", async () => {
		await page.click(".aib-think-harder");
		expect(await page.getAttribute(".aib-think-harder", "aria-pressed")).toBe("true");
		await send(page, "a hard one");
		await page.waitForFunction(() => /^demo-deep · /.test(document.querySelectorAll(".aib-assistant .aib-usage")[document.querySelectorAll(".aib-assistant .aib-usage").length - 1]?.textContent ?? ""), null, { timeout: WAIT });
		expect(await page.getAttribute(".aib-think-harder", "aria-pressed")).toBe("false");
	});

	it("the settings tab's chat model list filters by typing too", async () => {
		await page.evaluate(() => (window as any).harness.openSettings());
		const filter = page.locator(".aib-model-filter-setting").first();
		await filter.waitFor({ timeout: WAIT });
		const select = filter.locator("xpath=..").locator("select");
		const chosen = await select.inputValue();
		expect(await select.locator("option").count()).toBeGreaterThanOrEqual(323);
		await filter.fill("model-31");
		// The default, the 11 models that match, and the one chosen now (kept selected).
		const options = await select.locator("option").allTextContents();
		expect(options.filter((text) => / model 31\d?$/.test(text))).toHaveLength(11);
		expect(options).toHaveLength(chosen ? 13 : 12);
		expect(await select.inputValue()).toBe(chosen);
		const shots = process.env.SCREENSHOT_DIR;
		if (shots) await page.screenshot({ path: join(shots, "settings-model-filter.png") });
	});
});
