// The plugin on a phone (issue 29), in headless Chromium: `Platform.isMobile`, no Node module
// (every require() of the page is recorded, and refused), against `serve --remote`'s listener
// (the real one: TLS with the data folder's self-signed certificate, `/ws`, client keys only) of
// the demo server. A pasted pairing text fills the settings; the plugin connects with a `write`
// key, gets a streamed answer, reviews a write that the server makes and undoes it. Chromium trusts the
// certificate by its pinned key (as a phone trusts a Tailscale one); a second browser without
// the pin stands for a phone that does not, and the panel says so with the README's section.
// `make screenshot` saves docs/settings-remote.png and docs/panel-remote.png (SCREENSHOT_DIR).
import { execFileSync } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { request } from "node:https";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REMOTE_HELP_URL } from "../../src/core/remote";
import { haveChromium, send, testPages, WAIT, type TestPages } from "../helpers/browser";
import { PYTHON, REPO_ROOT } from "../helpers/node";
import { demoServer, type DemoServer } from "../helpers/server";

const KEY = `oab_${"p".repeat(43)}`;
let server: DemoServer;
let pinned: TestPages;
let unpinned: TestPages;
let address: string;
let fingerprint: string;

async function freePort(): Promise<number> {
	const probe = createServer();
	await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
	const port = (probe.address() as AddressInfo).port;
	await new Promise((resolve) => probe.close(resolve));
	return port;
}

/** Obsidian's requestUrl on a phone: its own TLS check, with the system's authorities (and the
 * server's certificate, on a phone that trusts it). */
function phoneRequest(trusted: boolean, url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
	if (!url.startsWith("https://127.0.0.1:")) return Promise.reject(new Error(`no network in the browser test (${url})`));
	const ca = trusted ? readFileSync(server.remote().cert) : undefined;
	return new Promise((resolve, reject) => {
		const req = request(url, { headers, timeout: 3000, ca }, (response) => {
			let text = "";
			response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
			response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
		});
		req.on("error", (error) => reject(new Error(error.message)));
		req.end();
	});
}

/** A phone's page: every require() the plugin makes is recorded (and fails: there is no Node). */
async function openPhone(pages: TestPages): Promise<Page> {
	const trusted = pages === pinned;
	return pages.open(null, {
		mobile: true,
		prepare: async (page) => {
			await page.exposeFunction("aibRequestUrl", (url: string, headers: Record<string, string>) => phoneRequest(trusted, url, headers));
			await page.addInitScript(() => {
				const w = window as unknown as { required: string[]; require: (name: string) => never };
				w.required = [];
				w.require = (name: string) => {
					w.required.push(name);
					throw new Error(`no Node module on a phone: ${name}`);
				};
			});
		},
	});
}

async function connected(page: Page): Promise<void> {
	await page.waitForFunction(() => (window as any).plugin.client.connection.status === "connected", null, { timeout: WAIT });
}

function pairingText(): string {
	return `obsidian://ai-bridge-pair?address=${encodeURIComponent(address)}&key=${KEY}&fingerprint=${fingerprint}`;
}

async function shot(page: Page, name: string): Promise<void> {
	const dir = process.env.SCREENSHOT_DIR;
	if (dir) await page.screenshot({ path: join(dir, name) });
}

beforeAll(async () => {
	if (!haveChromium) return;
	const port = await freePort();
	// The pinned browser's pages are served at a port chosen now: the server allows both origins.
	const pinnedPort = await freePort();
	unpinned = await testPages();
	server = await demoServer({ origins: [unpinned.origin, `http://127.0.0.1:${pinnedPort}`], remote: `127.0.0.1:${port}`, delay: 0.03 });
	// A `write` key for the phone, as `clients add phone --scope write --key …` stores it.
	const add = "import sys; from pathlib import Path; from plugin_bridge.app.clients import ClientKeys; ClientKeys(Path(sys.argv[1])).add('phone', 'write', key=sys.argv[2])";
	execFileSync(PYTHON, ["-c", add, server.dataDir, KEY], { cwd: REPO_ROOT });
	const remote = server.remote();
	address = remote.url;
	const certificate = new X509Certificate(readFileSync(remote.cert));
	fingerprint = certificate.fingerprint256.replace(/:/g, "").toLowerCase();
	const spki = createHash("sha256").update(certificate.publicKey.export({ type: "spki", format: "der" })).digest("base64");
	pinned = await testPages([`--ignore-certificate-errors-spki-list=${spki}`], pinnedPort);
}, 120_000);

afterAll(async () => {
	await pinned?.close();
	await unpinned?.close();
	await server?.cleanup();
});

describe.skipIf(!haveChromium)("the plugin on a phone, against another computer's server", () => {
	it("pairs by a pasted text, connects with the key, streams an answer and reviews a write the server makes, loading no Node module", async () => {
		const page = await openPhone(pinned);
		// No address yet: the panel offers to pair, with the one command to run on the computer.
		const pair = page.locator(".aib-pair-card");
		await pair.waitFor({ timeout: WAIT });
		expect(await pair.locator(".aib-command").textContent()).toBe("obsidian-ai-bridge clients add phone --pair");
		expect(await page.locator(".aib-starting progress").count()).toBe(0); // no bar moving forever
		await page.setViewportSize({ width: 390, height: 844 });
		await shot(page, "phone-pair-card.png");
		await page.setViewportSize({ width: 1280, height: 800 });

		await page.evaluate(() => (window as any).harness.openSettings());
		const setting = (name: string) =>
			page.locator("#settings .setting-item").filter({ has: page.locator(".setting-item-name", { hasText: new RegExp(`^${name}$`) }) });
		// A phone has only Another computer: no choice, no server command, no server settings.
		expect(await setting("Server").locator("select").count()).toBe(0);
		expect(await setting("Server command").count()).toBe(0);
		await setting("Pairing text").locator("input").fill(pairingText());
		await setting("Certificate fingerprint").waitFor({ timeout: WAIT });
		expect(await setting("Address").locator("input").inputValue()).toBe(address);
		expect(await setting("Client key").locator("input").getAttribute("type")).toBe("password");
		expect(await setting("Client key").locator("input").inputValue()).toBe(KEY);
		expect((await setting("Certificate fingerprint").textContent())?.replace(/ /g, "")).toContain(fingerprint);
		expect(await page.locator(".aib-server-settings").count()).toBe(0);
		expect(await page.locator(".setting-item-heading .setting-item-name").allTextContents()).toEqual(["Server", "Writes", "Model and keys"]);
		// Kept on this device (localStorage), never in data.json (which syncs with the vault).
		const stored = await page.evaluate(() => ({ data: JSON.stringify((window as any).plugin.data ?? null), local: JSON.stringify(window.localStorage) }));
		expect(stored.data).not.toContain(KEY);
		expect(stored.local).toContain(KEY);
		await connected(page);
		await shot(page, "settings-remote.png");
		await page.evaluate(() => document.getElementById("settings")!.classList.add("is-hidden"));

		await send(page, "hello");
		const answer = page.locator(".aib-assistant .aib-body").last();
		await answer.getByText("You said: hello").waitFor({ timeout: WAIT });
		await page.locator(".aib-assistant .aib-usage").last().waitFor({ timeout: WAIT });

		await send(page, "write a note about kites");
		await page.waitForSelector(".aib-confirm .aib-hunk", { timeout: WAIT });
		expect(await page.textContent(".modal-title")).toBe("Create Ideas/Kites.md");
		await shot(page, "panel-remote.png");
		await page.click(".aib-approve");
		await page.getByText("The change is done").waitFor({ timeout: WAIT });
		// The server wrote it (note/apply goes only to its own computer's plugin); the phone's
		// copy of the vault gets it by sync, not from the plugin.
		expect(readFileSync(join(server.vault, "Ideas", "Kites.md"), "utf8")).toBe("# Kites\n\nKites fly.\n");
		expect(await page.evaluate(() => (window as any).harness.vault.getFileByPath("Ideas/Kites.md"))).toBeNull();
		// Undo of its own write, over the same connection (note/undo with the write key).
		await page.locator(".notice", { hasText: "The assistant changed Ideas/Kites.md." }).last().locator("button:has-text('Undo')").click();
		await page.locator(".notice", { hasText: "Undid the change to Ideas/Kites.md." }).waitFor({ timeout: WAIT });
		expect(existsSync(join(server.vault, "Ideas", "Kites.md"))).toBe(false);
		// No setup card for a server on another computer.
		expect(await page.locator(".aib-setup").count()).toBe(0);
		expect(await page.evaluate(() => (window as any).required)).toEqual([]);
		await page.close();
	});

	it("a pairing text pasted in the panel's card connects, and the panel says as whom and what the key may do", async () => {
		const page = await openPhone(pinned);
		const pair = page.locator(".aib-pair-card");
		await pair.waitFor({ timeout: WAIT });
		await pair.locator(".aib-pair-input").fill("not a pairing");
		await pair.locator("button:has-text('Connect')").click();
		expect(await pair.locator(".aib-pair-message").textContent()).toContain("This is not a pairing text");
		await pair.locator(".aib-pair-input").fill(pairingText());
		await pair.locator("button:has-text('Connect')").click();
		const paired = page.locator(".aib-paired-card");
		await paired.waitFor({ timeout: WAIT });
		expect(await paired.locator(".aib-card-title").textContent()).toBe(`Connected to ${new URL(address).host} as phone`);
		expect(await paired.textContent()).toContain("This device may search and read your notes, chat with the assistant, and change notes (each change reviewed here first).");
		await page.setViewportSize({ width: 390, height: 844 });
		await shot(page, "phone-paired.png");
		await paired.locator("button:has-text('Start')").click();
		expect(await page.locator(".aib-paired-card").count()).toBe(0);
		expect(await page.evaluate(() => (window as any).required)).toEqual([]);
		await page.close();
	});

	it("a pairing link (a scanned QR code) is used once the user agrees", async () => {
		const page = await openPhone(pinned);
		await page.evaluate((link) => (window as any).harness.openLink(link), pairingText());
		await page.getByText("Connect to the server on another computer?").waitFor({ timeout: WAIT });
		expect(await page.textContent(".modal-content pre")).toBe(address);
		await page.locator(".modal").getByRole("button", { name: "Connect" }).click();
		await connected(page);
		expect(await page.evaluate(() => (window as any).required)).toEqual([]);
		await page.close();
	});

	it("the former Manual address and token become this device's Another computer and leave data.json", async () => {
		const page = await pinned.open(null, { mobile: true, data: { discovery: "manual", url: address, token: KEY, sendContext: false } });
		await connected(page);
		const saved = await page.evaluate(() => JSON.stringify((window as any).plugin.data));
		expect(JSON.parse(saved)).toMatchObject({ sendContext: false });
		expect(saved).not.toContain(KEY);
		expect(await page.evaluate(() => JSON.stringify(window.localStorage))).toContain(KEY);
		await page.close();
	});

	it("on the desktop, Another computer hides the server's start and its settings", async () => {
		const page = await pinned.open(null);
		await page.evaluate(() => (window as any).harness.openSettings());
		const setting = (name: string) =>
			page.locator("#settings .setting-item").filter({ has: page.locator(".setting-item-name", { hasText: new RegExp(`^${name}$`) }) });
		expect(await setting("Server").locator("select").inputValue()).toBe("this-computer");
		expect(await setting("Server command").count()).toBe(1);
		await setting("Server").locator("select").selectOption("another-computer");
		await setting("Pairing text").waitFor({ timeout: WAIT });
		expect(await setting("Server command").count()).toBe(0);
		expect(await setting("Start the server").count()).toBe(0);
		expect(await page.locator(".aib-server-settings").count()).toBe(0);
		await setting("Address").locator("input").fill(address);
		await setting("Address").locator("input").dispatchEvent("change");
		await setting("Client key").locator("input").fill(KEY);
		await setting("Client key").locator("input").dispatchEvent("change");
		await connected(page);
		await page.close();
	});

	it("a certificate this device does not trust: one sentence, with a link to the README's section", async () => {
		const page = await openPhone(unpinned);
		await page.evaluate((link) => (window as any).harness.openLink(link), pairingText());
		await page.locator(".modal").getByRole("button", { name: "Connect" }).click();
		const reason = page.locator(".aib-reason");
		await reason.getByText("This device does not trust the certificate of the server at").waitFor({ timeout: WAIT });
		expect(await reason.locator("a").getAttribute("href")).toBe(REMOTE_HELP_URL);
		// Its fingerprint, in groups that wrap on a phone's screen, to compare with the computer's.
		const shown = page.locator(".aib-certificate .aib-fingerprint");
		expect((await shown.textContent())?.replace(/ /g, "")).toBe(fingerprint);
		await page.setViewportSize({ width: 390, height: 844 });
		const box = await shown.boundingBox();
		expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
		await shot(page, "phone-untrusted-certificate.png");
		expect(await page.evaluate(() => (window as any).required)).toEqual([]);
		await page.close();
	});
});
