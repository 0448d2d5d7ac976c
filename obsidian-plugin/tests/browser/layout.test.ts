// The panel's layout at a phone's width (390 px) and at the desktop sidebar's narrowest width,
// light and dark (issue 39): the model header, an error with its buttons, the indexing line and
// the last answer's cost line all fit, nothing runs off the panel, and the cost line is whole
// above the input. `make screenshot` saves docs/layout-*.png.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, send, testPages, WAIT, type TestPages } from "../helpers/browser";
import { demoServer, type DemoServer } from "../helpers/server";

let pages: TestPages;
let server: DemoServer;

/** The sidebar's narrowest width on the desktop (Obsidian lets it shrink to about this). */
const NARROWEST = 260;

beforeAll(async () => {
	if (!haveChromium) return;
	pages = await testPages();
	server = await demoServer({ origins: [pages.origin] });
}, 120_000);

afterAll(async () => {
	await pages?.close();
	await server?.cleanup();
});

/** Elements of the panel whose right edge runs past the panel's, by class. */
async function overflowing(page: Page): Promise<string[]> {
	return page.evaluate(() => {
		const panel = document.querySelector(".aib-view")!.getBoundingClientRect();
		const selectors = [".aib-model-button", ".aib-header button", ".aib-error button", ".aib-error-text", ".aib-usage", ".aib-indexing", ".aib-send", ".aib-think-harder"];
		return selectors.flatMap((selector) =>
			Array.from(document.querySelectorAll(selector))
				.filter((el) => el.getBoundingClientRect().right > panel.right + 1)
				.map(() => selector),
		);
	});
}

async function shot(page: Page, name: string): Promise<void> {
	const dir = process.env.SCREENSHOT_DIR;
	if (dir) await page.screenshot({ path: join(dir, name) });
}

const layouts = [
	{ name: "390", phone: true },
	{ name: "narrow", phone: false },
] as const;

describe.skipIf(!haveChromium)("the panel's layout", () => {
	for (const layout of layouts) {
		for (const theme of ["dark", "light"] as const) {
			it(`at ${layout.phone ? "a phone's 390 px" : `the sidebar's narrowest ${NARROWEST} px`}, ${theme}: everything fits, the cost line whole above the input`, async () => {
				const page = await pages.open(readFileSync(server.infoFile, "utf8"), { theme });
				if (layout.phone) await page.setViewportSize({ width: 390, height: 844 });
				else await page.evaluate((width) => ((document.querySelector(".mod-right-split") as HTMLElement).style.width = `${width}px`), NARROWEST);
				await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
				await page.locator(".aib-model-label").waitFor({ timeout: WAIT });
				await page.evaluate(() =>
					(window as any).plugin.onNotification({ method: "index/progress", params: { phase: "embedding", done: 300, total: 1200, model: "demo-embed" } }),
				);
				expect(await page.locator(".aib-indexing").textContent()).toBe("Preparing search by meaning (25 %); search by words works meanwhile.");
				await send(page, "refused key please");
				await page.locator(".aib-assistant .aib-error").last().waitFor({ timeout: WAIT });
				await send(page, "hello");
				const usage = page.locator(".aib-assistant .aib-usage").last();
				await usage.waitFor({ timeout: WAIT });
				// The last cost line is whole, above the input (not half hidden under it).
				const line = await usage.boundingBox();
				const messages = await page.locator(".aib-messages").boundingBox();
				expect(line && messages && line.y + line.height <= messages.y + messages.height + 1).toBe(true);
				// Buttons keep their words on one line.
				for (const button of await page.locator(".aib-error button").all()) {
					const box = await button.boundingBox();
					expect(box && box.height < 40).toBe(true);
				}
				expect(await overflowing(page)).toEqual([]);
				await shot(page, `layout-${layout.name}-${theme}.png`);
				await page.close();
			});
		}
	}
});
