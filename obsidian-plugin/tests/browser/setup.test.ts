// From nothing installed to the first answer, in Chromium, with no data.json (issue 20): the page
// gets a Node-side host (tests/helpers/page-host.ts) on a temporary HOME. First nothing is
// installed: the install card. Then a fake `obsidian-ai-bridge` in ~/.local/bin (not on PATH)
// that starts the real server with no provider; *Check again* makes the plugin find and start it
// by itself; the setup card lists a fake Ollama's models; one is picked and the next message is
// answered; search by meaning is set up with the small model downloaded from a fake hub; the
// introduce-yourself conversation writes the context note once reviewed; when Obsidian quits the
// server stops. One server and one page for the whole file. `make screenshot` saves the two cards into docs/.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, send, testPages, type TestPages } from "../helpers/browser";
import { PYTHON, REPO_ROOT, testHost } from "../helpers/node";
import { exposeHost, type PageHost } from "../helpers/page-host";

const SHOTS = process.env.SCREENSHOT_DIR;
/** Steps that wait for the real server and the model runtime (slow on a busy machine). */
const SLOW = 30_000;

let pages: TestPages;
let root: string;
let home: string;
let vault: string;
let services: ChildProcess;
let servicesDir: string;
let page: Page;
let pageHost: PageHost;

async function until<T>(probe: () => T | null, what: string, ms = 20_000): Promise<T> {
	const end = Date.now() + ms;
	while (Date.now() < end) {
		const value = probe();
		if (value !== null) return value;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	throw new Error(`timed out waiting for ${what}`);
}

async function closedPort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const port = (server.address() as { port: number }).port;
	await new Promise((resolve) => server.close(resolve));
	return port;
}

/** Why the panel is not where the test expected: the connection and what the page started. */
async function explain(error: unknown): Promise<never> {
	const state = await page.evaluate(() => JSON.stringify((window as any).plugin.client.connection));
	throw new Error(`${(error as Error).message}\nconnection: ${state}\nstarted: ${JSON.stringify(pageHost.started)}`);
}

async function screenshot(name: string): Promise<void> {
	await page.screenshot({ path: join(SHOTS ?? root, name) });
}

beforeAll(async () => {
	if (!haveChromium) return;
	root = realpathSync(mkdtempSync(join(tmpdir(), "aib-setup-")));
	home = join(root, "home");
	vault = join(root, "My Vault");
	mkdirSync(home);
	cpSync(join(REPO_ROOT, "examples", "vault"), vault, { recursive: true });
	rmSync(join(vault, "Assistant.md"), { force: true });
	servicesDir = join(root, "services");
	mkdirSync(servicesDir);
	services = spawn(PYTHON, ["-m", "tests.fakes.local_servers", "--dir", servicesDir], { cwd: REPO_ROOT, stdio: "ignore" });
	const portOf = (name: string): string | null => {
		const file = join(servicesDir, `${name}.port`);
		return existsSync(file) ? readFileSync(file, "utf8") || null : null;
	};
	const port = await until(() => portOf("ollama"), "the fake Ollama and hub");
	const hubPort = await until(() => portOf("hub"), "the fake hub");
	pages = await testPages();
	// The machine the plugin sees: a fresh HOME, a PATH without the server, a local Ollama.
	const env = {
		HOME: home,
		PATH: "/usr/bin:/bin",
		LANG: "C.UTF-8",
		OLLAMA_HOST: `127.0.0.1:${port}`,
		LMSTUDIO_HOST: `127.0.0.1:${await closedPort()}`,
		HF_ENDPOINT: `http://127.0.0.1:${hubPort}`,
		AI_BRIDGE_ALLOWED_ORIGINS: JSON.stringify([pages.origin]),
	};
	const real = testHost();
	const host = testHost(
		{
			homedir: () => home,
			// Only files under the temporary root count: this machine's /usr/local/bin may hold uv.
			isExecutable: async (path) => path.startsWith(root) && (await real.isExecutable(path)),
		},
		{ env },
	);
	page = await pages.open(null, {
		vault,
		prepare: async (fresh) => {
			pageHost = await exposeHost(fresh, host);
		},
	});
}, 120_000);

afterAll(async () => {
	await pageHost?.killAll();
	services?.kill();
	await pages?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!haveChromium)("from nothing installed to the first answer", () => {
	it("with nothing installed, the panel shows the install card and no error banner", { timeout: 90_000 }, async () => {
		const card = page.locator(".aib-install-card");
		await card.waitFor({ timeout: SLOW });
		expect(await card.locator(".aib-command").textContent()).toBe("uv tool install obsidian-ai-bridge");
		expect(await page.locator(".aib-disconnected").count()).toBe(0);
		expect(pageHost.started).toEqual([]);
		await screenshot("install-card.png");
	});

	it("installed in ~/.local/bin (not on PATH), Check again finds it and starts the server by itself", { timeout: 60_000 }, async () => {
		const bin = join(home, ".local", "bin");
		mkdirSync(bin, { recursive: true });
		const script = join(bin, "obsidian-ai-bridge");
		writeFileSync(script, `#!/bin/sh\nexec "${join(REPO_ROOT, ".venv", "bin", "obsidian-ai-bridge")}" "$@"\n`);
		chmodSync(script, 0o755);
		await page.click(".aib-install-card button:has-text('Check again')");
		// The status bar says so while the server starts (its first start takes a second or more).
		await page.waitForSelector(".aib-status:has-text('starting')", { timeout: SLOW }).catch(explain);
		// The server's first start imports everything (slow on a busy machine).
		await page.locator(".aib-setup-card").waitFor({ timeout: 50_000 }).catch(explain);
		expect(pageHost.started).toEqual([`${script} serve --vault ${vault}`]);
		expect(await page.locator(".aib-install-card").count()).toBe(0);
		await page.waitForSelector(".aib-status:has-text('connected')", { timeout: SLOW });
	});

	it("the setup card lists the local Ollama's models; one is picked and the next message is answered", { timeout: 90_000 }, async () => {
		const card = page.locator(".aib-setup-card");
		const llama = card.locator(".aib-setup-model", { hasText: "llama3.1:8b" });
		await llama.waitFor({ timeout: SLOW });
		expect(await llama.locator(".aib-setup-badge").textContent()).toBe("uses tools");
		expect(await card.locator(".aib-setup-model", { hasText: "gemma3:1b" }).locator(".aib-setup-badge").textContent()).toBe("no tools");
		// The embedding model is offered for search by meaning, not as a chat model.
		expect(await card.locator(".aib-setup-section", { hasText: "Search by meaning" }).textContent()).toContain("nomic-embed-text:latest");
		expect(await card.textContent()).toContain("Introduce yourself");
		await screenshot("setup-card.png");
		await llama.locator("button:has-text('Use')").click();
		await card.locator(".aib-setup-done", { hasText: "llama3.1:8b answers" }).waitFor({ timeout: SLOW });
		await send(page, "hello there");
		await page.locator(".aib-assistant .aib-body").last().getByText("Ollama says: hello there").waitFor({ timeout: SLOW });
	});

	it("with no embedding model to use, the small model is downloaded once the user agrees", { timeout: 90_000 }, async () => {
		const card = page.locator(".aib-setup-card");
		// Ollama without its embedding model: the card offers the download instead.
		writeFileSync(join(servicesDir, "models.json"), JSON.stringify({ "llama3.1:8b": ["completion", "tools"] }));
		await card.locator("button:has-text('Look again')").click();
		const search = card.locator(".aib-setup-section", { hasText: "Search by meaning" });
		await search.locator("button:has-text('Download')").waitFor({ timeout: SLOW });
		expect(await search.textContent()).toContain("Nothing is downloaded until you agree.");
		const embedderBefore = await page.evaluate(async () => (await (window as any).plugin.client.call("settings/get", {})).embedder);
		expect(embedderBefore).toBeNull();
		await search.locator("button:has-text('Download')").click();
		await card.locator(".aib-setup-done", { hasText: "Search by meaning with model2vec:" }).waitFor({ timeout: SLOW });
		const embedder = await page.evaluate(async () => (await (window as any).plugin.client.call("settings/get", {})).embedder);
		expect(embedder).toMatch(/^model2vec:/);
		await card.locator("button:has-text('Done')").click();
		expect(await page.locator(".aib-setup-card").count()).toBe(0);
	});

	it("'Update what the assistant knows about me' holds the setup conversation; the note is written once reviewed", { timeout: 90_000 }, async () => {
		await page.evaluate(() => (window as any).plugin.commands.find((c: { id: string }) => c.id === "update-about-me").callback());
		await page.locator(".aib-assistant .aib-body").last().getByText("What is this vault for?").waitFor({ timeout: SLOW });
		await send(page, "It is for kites and planning.");
		await page.waitForSelector(".aib-confirm", { timeout: SLOW });
		expect(await page.textContent(".aib-confirm")).toContain("It is for kites and planning.");
		expect(existsSync(join(vault, "Assistant.md"))).toBe(false);
		await page.click(".aib-approve");
		await page.locator(".aib-assistant .aib-body").last().getByText("Thank you, saved.").waitFor({ timeout: SLOW });
		expect(readFileSync(join(vault, "Assistant.md"), "utf8")).toContain("## What this vault is for\n\nIt is for kites and planning.");
	});

	it("when Obsidian quits, the server the plugin started stops", { timeout: 90_000 }, async () => {
		expect(pageHost.running()).toBe(1);
		await page.evaluate(() => window.dispatchEvent(new Event("beforeunload")));
		await until(() => (pageHost.running() === 0 ? true : null), "the server to stop", SLOW).catch((error: Error) => {
			throw new Error(`${error.message}; it printed:\n${pageHost.output.join("\n")}`);
		});
		// Nothing starts another one while Obsidian closes.
		await new Promise((resolve) => setTimeout(resolve, 1000));
		expect(pageHost.started).toHaveLength(1);
		expect(await page.textContent(".aib-status")).toBe("Assistant: disconnected");
	});
});

if (!haveChromium) writeFileSync(1, "Skipping the setup browser test: Chromium is missing.\n");
