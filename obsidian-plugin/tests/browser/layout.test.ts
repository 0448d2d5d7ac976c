// The panel's layout at a phone's width (390 px) and at the desktop sidebar's narrowest width,
// light and dark (issue 39): the model header, an error with its buttons, the indexing line and
// the last answer's cost line all fit, nothing runs off the panel, and the cost line is whole
// above the input; the settings tab's and the setup card's buttons keep their words on one line,
// and the last related note is whole above the status bar. `make screenshot` saves docs/layout-*.png.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, send, testPages, WAIT, type TestPages } from "../helpers/browser";
import { demoServer, type DemoServer } from "../helpers/server";

let pages: TestPages;
let server: DemoServer;
let embedded: DemoServer;

/** The sidebar's narrowest width on the desktop (Obsidian lets it shrink to about this). */
const NARROWEST = 260;

beforeAll(async () => {
	if (!haveChromium) return;
	pages = await testPages();
	[server, embedded] = await Promise.all([demoServer({ origins: [pages.origin] }), demoServer({ origins: [pages.origin], embedder: true })]);
}, 120_000);

afterAll(async () => {
	await pages?.close();
	await server?.cleanup();
	await embedded?.cleanup();
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

/** A fresh page at `layout`'s width, connected. */
async function openAt(demo: DemoServer, layout: (typeof layouts)[number], theme: "dark" | "light"): Promise<Page> {
	const page = await pages.open(readFileSync(demo.infoFile, "utf8"), { theme });
	if (layout.phone) await page.setViewportSize({ width: 390, height: 844 });
	else await page.evaluate((width) => ((document.querySelector(".mod-right-split") as HTMLElement).style.width = `${width}px`), NARROWEST);
	await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
	return page;
}

/** Buttons (by their text) whose words wrap onto a second line. */
async function wrapped(page: Page, selector: string): Promise<string[]> {
	return page.evaluate((sel) => {
		return Array.from(document.querySelectorAll<HTMLElement>(sel))
			.filter((button) => button.offsetParent !== null)
			.filter((button) => {
				const line = parseFloat(getComputedStyle(button).lineHeight) || parseFloat(getComputedStyle(button).fontSize) * 1.5;
				const range = document.createRange();
				range.selectNodeContents(button);
				return range.getBoundingClientRect().height > line * 1.5 || button.scrollWidth > button.clientWidth + 1;
			})
			.map((button) => button.textContent ?? "");
	}, selector);
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

	for (const layout of layouts) {
		for (const theme of ["dark", "light"] as const) {
			const where = layout.phone ? "a phone's 390 px" : `the sidebar's narrowest ${NARROWEST} px`;
			it(`at ${where}, ${theme}: Save key and the setup card's buttons keep one line`, async () => {
				const page = await openAt(server, layout, theme);
				await page.evaluate(() => (window as any).harness.openSettings());
				await page.locator(".aib-server-settings .setting-item button", { hasText: "Save key" }).first().waitFor({ timeout: WAIT });
				expect(await page.locator("button", { hasText: "Save key" }).count()).toBeGreaterThan(0);
				expect(await wrapped(page, ".aib-server-settings button")).toEqual([]);
				await page.locator(".aib-server-settings .setting-item button", { hasText: "Save key" }).first().scrollIntoViewIfNeeded();
				await shot(page, `layout-${layout.name}-${theme}-settings.png`);
				await page.evaluate(() => document.getElementById("settings")!.classList.add("is-hidden"));
				await page.evaluate(() => (window as any).plugin.openSetup());
				const card = page.locator(".aib-setup-card");
				await card.locator("button", { hasText: "Look again" }).waitFor({ timeout: WAIT });
				expect(await wrapped(page, ".aib-setup-card button")).toEqual([]);
				await shot(page, `layout-${layout.name}-${theme}-setup.png`);
				await page.close();
			});

			it(`at ${where}, ${theme}: the last related note is whole above the status bar`, async () => {
				const page = await openAt(embedded, layout, theme);
				for (const path of ["Welcome.md", "Areas/Cooking/Sourdough.md", "Areas/Cooking/Miso soup.md", "Projects/Kafka pipeline.md"]) {
					const text = readFileSync(join(embedded.vault, path), "utf8");
					await page.evaluate(([p, t]) => (window as any).harness.addNote(p, t, []), [path, text] as const);
				}
				await page.evaluate(() => (window as any).plugin.activateRelated());
				await page.evaluate(() => (window as any).harness.openNote("Areas/Cooking/Sourdough.md"));
				const items = page.locator(".aib-related-view .aib-related-item");
				await items.first().waitFor({ timeout: WAIT });
				await page.evaluate(() => {
					const scroller = document.querySelector(".aib-related-view")!;
					scroller.scrollTop = scroller.scrollHeight;
				});
				const last = await items.last().boundingBox();
				const status = await page.locator(".status-bar").boundingBox();
				expect(last && status && last.y + last.height <= status.y).toBe(true);
				await shot(page, `layout-${layout.name}-${theme}-related.png`);
				await page.close();
			});
		}
	}
});
