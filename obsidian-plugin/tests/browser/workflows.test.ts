// What a daily user does, in headless Chromium against the real server (one server, one page):
// reviewing four close edits and keeping two; a write to a note open in the editor with unsaved
// text; Rewrite selection… with Accept and the editor's undo; the related-notes view following
// the active note; chips; the settings layout; the input while the server is gone.
// `make screenshot` saves the pictures of docs/ from here (SCREENSHOT_DIR).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, send, testPages, WAIT, type TestPages } from "../helpers/browser";
import { demoServer, type DemoServer } from "../helpers/server";

let pages: TestPages;
let server: DemoServer;
let page: Page;
const shots = process.env.SCREENSHOT_DIR;

const PLAN = Array.from({ length: 20 }, (_, i) => `Step ${i + 1}: do thing ${i + 1}.\n`).join("");
const NOTES = ["Welcome.md", "Areas/Cooking/Sourdough.md", "Areas/Cooking/Miso soup.md", "Projects/Kafka pipeline.md", "Reference/Event streaming.md"];

function onDisk(path: string): string {
	return readFileSync(join(server.vault, path), "utf8");
}

async function shot(name: string): Promise<void> {
	if (!shots) return;
	await page.evaluate(() => document.getElementById("notices")!.replaceChildren()); // the earlier steps' notices
	await page.screenshot({ path: join(shots, name) });
}

/** The harness's vault gets the server's copy of a note (so both see the same text). */
async function addNote(path: string, tags: string[] = []): Promise<void> {
	await page.evaluate(([p, text, t]) => (window as any).harness.addNote(p, text, t), [path, onDisk(path), tags] as const);
}

async function openNote(path: string): Promise<void> {
	await page.evaluate((p) => (window as any).harness.openNote(p), path);
}

/** Send, approve the review, and wait for the turn's answer. */
async function sendAndApprove(text: string): Promise<void> {
	const answers = await page.locator(".aib-assistant .aib-usage").count();
	await send(page, text);
	await page.waitForSelector(".aib-confirm .aib-hunk", { timeout: WAIT });
	await page.click(".aib-approve");
	await page.locator(".aib-assistant .aib-usage").nth(answers).waitFor({ timeout: WAIT });
}

beforeAll(async () => {
	if (!haveChromium) return;
	pages = await testPages();
	server = await demoServer({ origins: [pages.origin], delay: 0.05, embedder: true });
	// The server is run by hand here (a test stops and restarts it): with auto-start the plugin
	// would look for the command itself and, on this fake host, offer to install it.
	page = await pages.open(readFileSync(server.infoFile, "utf8"), { data: { autoStart: false } });
	await page.waitForSelector(".aib-status:has-text('connected')", { timeout: WAIT });
	for (const path of NOTES) await addNote(path, path.startsWith("Areas/Cooking") ? ["#cooking"] : []);
	await page.evaluate((text) => (window as any).harness.addNote("Plan.md", text, ["#project"]), PLAN);
	await page.click("button[aria-label='New conversation']"); // the empty state, with the vault loaded
}, 120_000);

afterAll(async () => {
	await page?.close();
	await pages?.close();
	await server?.cleanup();
});

describe.skipIf(!haveChromium)("a daily user in Chromium", () => {
	it("an empty conversation shows what the assistant does and three example prompts from the vault", async () => {
		const examples = page.locator(".aib-example");
		expect(await examples.count()).toBe(3);
		expect(await examples.nth(1).textContent()).toContain("Areas/Cooking");
		expect(await examples.nth(2).textContent()).toContain("#cooking");
	});

	it("@ mentions and the active note are chips above the input, each with a remove button", async () => {
		await openNote("Welcome.md");
		await page.locator(".aib-chip.is-active-note", { hasText: "Welcome" }).waitFor({ timeout: WAIT });
		await page.fill(".aib-input", "@Sourd");
		await page.press(".aib-input", "ArrowDown");
		await page.press(".aib-input", "Enter");
		await page.locator(".aib-chip.is-added", { hasText: "Sourdough" }).waitFor({ timeout: WAIT });
		await page.click(".aib-chip.is-added .aib-chip-remove");
		expect(await page.locator(".aib-chip.is-added").count()).toBe(0);
		await page.click(".aib-chip.is-active-note .aib-chip-remove");
		expect(await page.locator(".aib-chip").count()).toBe(0);
		await page.fill(".aib-input", "");
	});

	it("streams an answer (the panel mid-answer, long words wrap, Send/Stop above the status bar)", async () => {
		await openNote("Projects/Kafka pipeline.md");
		await send(page, "slow please https://example.org/a/very/long/path/that/does/not/break/anywhere/at/all/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
		await page.locator(".aib-assistant .aib-body").last().getByText("word12", { exact: false }).waitFor({ timeout: WAIT });
		const panel = await page.locator(".aib-view").boundingBox();
		const user = await page.locator(".aib-user").last().boundingBox();
		expect(user && panel && user.x + user.width <= panel.x + panel.width + 1).toBe(true);
		const stop = await page.locator(".aib-stop").boundingBox();
		const status = await page.locator("#status-bar").boundingBox();
		expect(stop && status && stop.y + stop.height <= status.y).toBe(true);
		await shot("panel-mid-answer.png");
		await page.click(".aib-stop");
		await page.locator(".aib-note:has-text('Stopped.')").waitFor({ timeout: WAIT });
	});

	it("four close edits are four changes; keeping two writes exactly those two", async () => {
		writeFileSync(join(server.vault, "Plan.md"), PLAN);
		await send(page, "make four edits to the plan");
		await page.waitForSelector(".aib-confirm .aib-hunk", { timeout: WAIT });
		expect(await page.textContent(".modal-title")).toBe("Edit Plan.md: 4 changes");
		expect(await page.locator(".aib-hunk").count()).toBe(4);
		expect(await page.locator(".aib-tool summary").last().textContent()).toBe("Editing Plan.md · waiting for your reviewDetails");
		const boxes = page.locator(".aib-hunk-keep");
		await boxes.nth(1).uncheck();
		await boxes.nth(2).uncheck();
		await shot("review.png");
		await page.click(".aib-approve");
		await page.getByText("The change is done").waitFor({ timeout: WAIT });
		expect(onDisk("Plan.md")).toBe(PLAN.replace("Step 2: do thing 2.", "Step 2: done.").replace("Step 17: do thing 17.", "Step 17: done."));
		const notice = page.locator(".notice", { hasText: "The assistant changed Plan.md." }).last();
		await notice.locator("button:has-text('Undo')").click();
		await page.locator(".notice", { hasText: "Undid the change to Plan.md." }).waitFor({ timeout: WAIT });
		expect(onDisk("Plan.md")).toBe(PLAN);
		// The panel tells the truth: the used Undo is off, the conversation says undone.
		expect(await notice.locator("button.aib-undo").textContent()).toBe("Undone");
		expect(await notice.locator("button.aib-undo").isDisabled()).toBe(true);
		const answer = page.locator(".aib-assistant").last();
		expect(await answer.locator(".aib-tool summary").last().textContent()).toBe("Edited Plan.md · undoneDetails");
		expect(await answer.locator(".aib-undone").textContent()).toBe("You undid this change: Plan.md is back as it was.");
		// The open note went with the message: it is context, not a source the model read.
		expect(await answer.locator(".aib-context-notes").textContent()).toBe("Context: Projects/Kafka pipeline");
		expect(await answer.locator(".aib-sources").count()).toBe(0);
		await shot("undone.png");
	});

	it("unchecking every change and applying is a denial, shown as not applied", async () => {
		writeFileSync(join(server.vault, "Plan.md"), PLAN);
		const answers = await page.locator(".aib-assistant .aib-usage").count();
		await send(page, "make four edits to the plan");
		await page.waitForSelector(".aib-confirm .aib-hunk", { timeout: WAIT });
		for (let i = 0; i < 4; i++) await page.locator(".aib-hunk-keep").nth(i).uncheck();
		await page.click(".aib-approve");
		await page.locator(".aib-assistant .aib-usage").nth(answers).waitFor({ timeout: WAIT });
		expect(await page.locator(".aib-tool summary").last().textContent()).toBe("Editing Plan.md · not appliedDetails");
		expect(await page.locator(".aib-tool-failed").count()).toBe(0);
		expect(onDisk("Plan.md")).toBe(PLAN);
	});

	it("a write to a note open with unsaved typing goes in beside it, or is a conflict that loses nothing", async () => {
		writeFileSync(join(server.vault, "Plan.md"), PLAN);
		await page.evaluate((text) => (window as any).harness.addNote("Plan.md", text), PLAN);
		await openNote("Plan.md");
		const typed = PLAN.replace("Step 10: do thing 10.", "Step 10: do thing 10, typed and not saved.");
		await page.fill("#note", typed);
		await sendAndApprove("edit the plan");
		const merged = typed.replace("Step 2: do thing 2.", "Step 2: do the better thing.").replace("Step 19: do thing 19.", "Step 19: rest.");
		expect(await page.inputValue("#note")).toBe(merged);
		expect(onDisk("Plan.md")).toBe(PLAN); // Obsidian saves the editor itself

		const clash = PLAN.replace("Step 2: do thing 2.", "Step 2: my own words.");
		await page.fill("#note", clash);
		await page.evaluate(() => document.getElementById("notices")!.replaceChildren());
		await sendAndApprove("edit the plan");
		expect(await page.locator(".notice", { hasText: "The assistant changed" }).count()).toBe(0); // no Undo for a write not made
		expect(await page.locator(".aib-tool summary").last().textContent()).toBe("Editing Plan.md · failedDetails");
		expect(await page.locator(".aib-tool-result").last().textContent()).toContain("nothing was written");
		expect(await page.inputValue("#note")).toBe(clash);
		expect(onDisk("Plan.md")).toBe(PLAN);
	});

	it("a note open in reading mode gets the write through vault.process; the server does not write it", async () => {
		writeFileSync(join(server.vault, "Plan.md"), PLAN);
		await page.evaluate((text) => (window as any).harness.addNote("Plan.md", text), PLAN);
		await openNote("Plan.md");
		await page.evaluate(() => ((window as any).harness.markdown.mode = "preview"));
		// Obsidian saves what vault.process changed; here the test plays that part, since the
		// server checks the file on disk reaches the hash the plugin reported.
		const saving = (async () => {
			for (let i = 0; i < 300; i++) {
				const text: string = await page.evaluate(() => (window as any).harness.vault.notes.get("Plan.md").text);
				if (text !== PLAN) return writeFileSync(join(server.vault, "Plan.md"), text);
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
		})();
		await sendAndApprove("edit the plan");
		await saving;
		const edited = PLAN.replace("Step 2: do thing 2.", "Step 2: do the better thing.").replace("Step 19: do thing 19.", "Step 19: rest.");
		expect(await page.evaluate(() => (window as any).harness.vault.notes.get("Plan.md").text)).toBe(edited);
		expect(await page.locator(".aib-tool summary").last().textContent()).toBe("Edited Plan.mdDetails");
		expect(onDisk("Plan.md")).toBe(edited); // saved by the editor's side, confirmed by the server
		await page.evaluate(() => ((window as any).harness.markdown.mode = "source"));
	});

	it("Rewrite selection… streams a preview; Accept is one undo step of the editor", async () => {
		const text = "# Kites\n\nKites fly high above the hill.\n\nThe end.\n";
		await page.evaluate((t) => (window as any).harness.addNote("Ideas/Kites draft.md", t), text);
		await openNote("Ideas/Kites draft.md");
		await page.evaluate(() => (window as any).harness.select("Kites fly high above the hill."));
		await page.evaluate(() => (window as any).harness.run("rewrite-selection"));
		await page.click(".aib-rewrite-quick button:has-text('Shorter')");
		await page.locator(".aib-rewrite .aib-add", { hasText: "KITES FLY HIGH ABOVE THE HILL." }).waitFor({ timeout: WAIT });
		await page.locator(".aib-rewrite-status", { hasText: " tokens read · " }).waitFor({ timeout: WAIT });
		await shot("rewrite.png");
		await page.click(".aib-rewrite-accept");
		expect(await page.inputValue("#note")).toBe(text.replace("Kites fly high above the hill.", "KITES FLY HIGH ABOVE THE HILL."));
		await page.evaluate(() => (window as any).harness.markdown.editor.undo());
		expect(await page.inputValue("#note")).toBe(text);

		await page.evaluate(() => (window as any).harness.select("The end."));
		await page.evaluate(() => (window as any).harness.run("rewrite-selection"));
		await page.fill(".aib-rewrite-instruction", "louder");
		await page.press(".aib-rewrite-instruction", "Enter");
		await page.locator(".aib-rewrite .aib-add", { hasText: "THE END." }).waitFor({ timeout: WAIT });
		await page.click(".aib-rewrite-discard");
		expect(await page.inputValue("#note")).toBe(text);

		await page.evaluate(() => {
			const area = document.getElementById("note") as HTMLTextAreaElement;
			area.setSelectionRange(area.value.length, area.value.length);
			(window as any).harness.run("continue-writing");
		});
		await page.locator(".aib-rewrite .aib-add", { hasText: "carried the kites higher" }).waitFor({ timeout: WAIT });
		await page.locator(".aib-rewrite-accept:not([disabled])").click();
		expect(await page.inputValue("#note")).toBe(`${text}And then the wind carried the kites higher.`);
	});

	it("the related-notes view follows the active note; a result drags as a wikilink", async () => {
		await page.evaluate(() => (window as any).plugin.activateRelated());
		await openNote("Areas/Cooking/Sourdough.md");
		const view = page.locator(".aib-related-view");
		await view.locator(".aib-related-title", { hasText: "Sourdough" }).waitFor({ timeout: WAIT });
		await view.locator(".aib-related-item").first().waitFor({ timeout: WAIT });
		const first = await view.locator(".aib-related-item").allTextContents();
		expect(first.join(" ")).not.toContain("Areas/Cooking/Sourdough.md");
		expect(await view.locator(".aib-related-snippet").count()).toBeGreaterThan(0);
		// Scrolled to the end, the last note sits above the status bar, never under it.
		await page.evaluate(() => {
			const scroller = document.querySelector(".aib-related-view")!;
			scroller.scrollTop = scroller.scrollHeight;
		});
		const last = await view.locator(".aib-related-item").last().boundingBox();
		const status = await page.locator(".status-bar").boundingBox();
		expect(last && status && last.y + last.height <= status.y).toBe(true);
		await shot("related.png");
		await page.evaluate(() => document.body.classList.replace("theme-dark", "theme-light"));
		await shot("related-light.png");
		await page.evaluate(() => document.body.classList.replace("theme-light", "theme-dark"));
		const dragged = await page.evaluate(() => {
			const row = document.querySelector(".aib-related-item")!;
			const data = new DataTransfer();
			row.dispatchEvent(new DragEvent("dragstart", { bubbles: true, dataTransfer: data }));
			return data.getData("text/plain");
		});
		expect(dragged).toMatch(/^\[\[[^\]]+\]\]$/);
		await openNote("Projects/Kafka pipeline.md");
		await view.locator(".aib-related-title", { hasText: "Kafka pipeline" }).waitFor({ timeout: WAIT });
		await page.waitForFunction((before) => {
			const items = [...document.querySelectorAll(".aib-related-item")].map((e) => e.textContent);
			return items.length > 0 && items.join(" ") !== before;
		}, first.join(" "), { timeout: WAIT });
		await page.locator("#sidebar-tabs [data-type='ai-bridge-assistant']").click();
	});

	it("conversations can be searched, renamed and deleted", async () => {
		await page.click("button[aria-label='New conversation']");
		await send(page, "remember the kites");
		await page.getByText("You said: remember the kites").waitFor({ timeout: WAIT });
		await page.click("button[aria-label='Conversations']");
		await page.fill(".aib-list-search", "KITES remember");
		const row = page.locator(".aib-list-item", { hasText: "remember the kites" });
		await row.waitFor({ timeout: WAIT });
		await expect.poll(() => page.locator(".aib-list-item").count(), { timeout: WAIT }).toBe(1);

		await row.locator(".aib-list-rename").click();
		await page.fill(".aib-list-rename-input", "The slow one");
		await page.press(".aib-list-rename-input", "Enter");

		const renamed = page.locator(".aib-list-item", { hasText: "The slow one" });
		await renamed.waitFor({ timeout: WAIT });
		await renamed.locator(".aib-list-delete").click();
		await page.locator(".aib-list-item button.mod-warning").click();

		await page.locator(".aib-list-item", { hasText: "The slow one" }).waitFor({ state: "detached", timeout: WAIT });
		await page.click("button[aria-label='Conversations']");
	});

	it("the settings tab: headings with their settings as siblings, provider and models from lists", async () => {
		await page.evaluate(() => (window as any).harness.openSettings());
		await page.locator(".aib-server-settings .setting-item").first().waitFor({ timeout: WAIT });
		expect(await page.locator(".setting-item-heading .setting-item").count()).toBe(0);
		const headings = await page.locator(".setting-item-heading .setting-item-name").allTextContents();
		expect(headings).toEqual(["Server", "Writes", "Model and keys", "Tool servers", "Chat apps"]);
		const setting = (name: string) =>
			page.locator(".aib-server-settings .setting-item").filter({ has: page.locator(".setting-item-name", { hasText: new RegExp(`^${name}$`) }) });
		expect(await setting("Provider").locator("select").count()).toBe(1);
		const chatModels = await setting("Chat model").locator("select option").allTextContents();
		expect(chatModels).toContain("Demo model");
		expect(chatModels).not.toContain("Demo embeddings"); // embedding models never answer a chat
		const embedders = await setting("Semantic search").locator("select option").allTextContents();
		expect(embedders).toContain("Ollama: nomic-embed-text (local, free)");
		expect(embedders).toContain("openai: Demo embeddings");
		expect(new Set(embedders).size).toBe(embedders.length);
		// The key fields take the row's width; a compatible service's address has its own field.
		const key = await setting("OpenAI API key").locator("input").boundingBox();
		const row = await setting("OpenAI API key").boundingBox();
		expect(key && row && key.width > row.width * 0.6).toBe(true);
		expect(await setting("OpenAI-compatible service").locator("input").count()).toBe(1);
		await shot("settings.png");
		await page.evaluate(() => document.getElementById("settings")!.classList.add("is-hidden"));
	});

	it("while reconnecting a message waits and goes out; with no reconnect under way the input is off and says why", async () => {
		await page.click("button[aria-label='New conversation']");
		await server.stop();
		// Reconnecting is neutral (red is for a failure), and says a message waits.
		await page.locator(".aib-starting", { hasText: "Reconnecting to the assistant" }).waitFor({ timeout: WAIT });
		expect(await page.locator(".aib-disconnected").count()).toBe(0);
		expect(await page.isEnabled(".aib-input")).toBe(true);
		await send(page, "hello again");
		await page.locator(".aib-user.is-waiting").waitFor({ timeout: WAIT });
		await server.start();
		await page.evaluate((info) => (window as any).harness.setInfo(info), readFileSync(server.infoFile, "utf8"));
		await page.evaluate(() => (window as any).plugin.client.reconnectNow());
		await page.getByText("You said: hello again").waitFor({ timeout: WAIT });
		expect(await page.locator(".aib-user.is-waiting").count()).toBe(0);

		await page.evaluate(() => (window as any).plugin.client.stop());
		await page.locator(".aib-disconnected", { hasText: "The assistant was stopped." }).waitFor({ timeout: WAIT });
		expect(await page.isDisabled(".aib-input")).toBe(true);
		expect(await page.isDisabled(".aib-send")).toBe(true);
	});
});
