// From nothing installed to the first answer, in Chromium, with no data.json (issues 20 and 31):
// the page gets a Node-side host (tests/helpers/page-host.ts) on a temporary HOME. First nothing
// is installed: the install card. Its exact command is run as a user would in a terminal, against
// a local web server that serves the wheel (built as `make release-assets` builds dist/) as the
// plugin's release, offline (UV_OFFLINE=1: uv's cache, warmed by `make setup`, holds every
// dependency); it installs the command in ~/.local/bin (not on PATH); *Check again* makes the
// plugin find and start it by itself; a message sent before any model is set up waits; the setup
// card lists a fake Ollama's models; once one is picked the message is answered; search by meaning is set up with the small model downloaded from a fake hub; the
// introduce-yourself conversation writes the context note once reviewed; when Obsidian quits the
// server stops. One server and one page for the whole file. `make screenshot` saves the two cards into docs/.
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, send, testPages, type TestPages } from "../helpers/browser";
import { PYTHON, REPO_ROOT, testHost } from "../helpers/node";
import { exposeHost, type PageHost } from "../helpers/page-host";
import { splitCommand } from "../../src/core/launcher";
import { PLUGIN_VERSION, REPOSITORY, wheelName } from "../../src/core/install";

const SHOTS = process.env.SCREENSHOT_DIR;
const run = promisify(execFile);
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
let release: Server;
let releaseHost: string;
let dist: string;
let uv: string[];

async function until<T>(probe: () => T | null, what: string, ms = 20_000): Promise<T> {
	const end = Date.now() + ms;
	while (Date.now() < end) {
		const value = probe();
		if (value !== null) return value;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	throw new Error(`timed out waiting for ${what}`);
}

/** uv as the Makefile finds it: on PATH (a pyenv shim resolved to its program, as a shim needs
 * the real HOME), else `python3 -m uv`. */
function findUv(): string[] {
	try {
		const found = execFileSync("sh", ["-c", "command -v uv"], { encoding: "utf8" }).trim();
		if (!found.includes("/shims/")) return [found];
		return [execFileSync("pyenv", ["which", "uv"], { encoding: "utf8" }).trim()];
	} catch {
		return ["python3", "-m", "uv"];
	}
}

/** Run a command line as a user in a terminal would (`env` on top of this one's; "" unsets a
 * variable): its output. Asynchronous: the release's web server runs in this process. */
async function terminal(argv: string[], env: Record<string, string>): Promise<string> {
	const [program, ...args] = argv;
	const merged: Record<string, string | undefined> = { ...process.env, ...env };
	for (const [name, value] of Object.entries(env)) if (value === "") delete merged[name];
	const { stdout } = await run(program ?? "", args, { cwd: root, env: merged, encoding: "utf8" });
	return stdout;
}

/** The release the plugin names: `/OWNER/REPO/releases/download/VERSION/FILE` from `dist`. */
async function releaseServer(): Promise<Server> {
	const prefix = `/${REPOSITORY}/releases/download/${PLUGIN_VERSION}/`;
	const server = createHttpServer((request, response) => {
		const url = request.url ?? "";
		const file = url.startsWith(prefix) ? url.slice(prefix.length) : "";
		if (!file || file.includes("/") || !existsSync(join(dist, file))) {
			response.writeHead(404).end("not found");
			return;
		}
		response.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(join(dist, file)));
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	releaseHost = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
	return server;
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
	// The release's wheel, built as `make release-assets` builds dist/ (never a stale one).
	uv = findUv();
	dist = join(root, "dist");
	await terminal([...uv, "build", "--wheel", "--out-dir", dist, "--python", realpathSync(PYTHON), REPO_ROOT], { UV_OFFLINE: "1" });
	release = await releaseServer();
	// The machine the plugin sees: a fresh HOME, a PATH without the server, a local Ollama, and
	// the release host of this test (the plugin then never asks the package registry).
	const env = {
		AI_BRIDGE_RELEASE_HOST: releaseHost,
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
	release?.close();
	await pages?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!haveChromium)("from nothing installed to the first answer", () => {
	it("with nothing installed, the panel shows the install card and no error banner", { timeout: 90_000 }, async () => {
		const card = page.locator(".aib-install-card");
		await card.waitFor({ timeout: SLOW });
		const wheel = `${releaseHost}/${REPOSITORY}/releases/download/${PLUGIN_VERSION}/${wheelName(PLUGIN_VERSION)}`;
		expect(await card.locator(".aib-install-command").textContent()).toBe(`uv tool install ${wheel}`);
		expect(await card.textContent()).toContain(`pipx install ${wheel}`);
		expect(readdirSync(dist)).toContain(wheelName(PLUGIN_VERSION));
		expect(await page.locator(".aib-disconnected").count()).toBe(0);
		expect(pageHost.started).toEqual([]);
		await screenshot("install-card.png");
	});

	it("the card's exact command, run offline against the local release, installs a working command; Check again starts it", { timeout: 120_000 }, async () => {
		const command = (await page.locator(".aib-install-card .aib-install-command").textContent()) ?? "";
		const [program, ...args] = splitCommand(command);
		expect(program).toBe("uv");
		// A user's terminal: the same HOME, uv's cache (warmed by `make setup`), no network. uv's
		// offline mode refuses every URL it has not cached, loopback too: the wheel is fetched
		// from the local release once (no index, no dependency), as uv would download it.
		const cache = (await terminal([...uv, "cache", "dir"], {})).trim();
		const user = { HOME: home, UV_CACHE_DIR: cache, UV_PYTHON_DOWNLOADS: "never", UV_PYTHON: realpathSync(PYTHON), XDG_DATA_HOME: "", XDG_BIN_HOME: "", UV_TOOL_DIR: "", UV_TOOL_BIN_DIR: "" };
		await terminal([...uv, "pip", "install", "--no-deps", "--target", join(root, "fetched"), "--python", realpathSync(PYTHON), args[args.length - 1] ?? ""], user);
		const started = Date.now();
		await terminal([...uv, ...args], { ...user, UV_OFFLINE: "1" });
		const seconds = (Date.now() - started) / 1000;
		const script = join(home, ".local", "bin", "obsidian-ai-bridge");
		expect((await terminal([script, "--version"], user)).trim()).toBe(`obsidian-ai-bridge ${PLUGIN_VERSION}`);
		writeFileSync(1, `The install card's command installed the release's wheel offline in ${seconds.toFixed(1)} s.\n`);
		await page.click(".aib-install-card button:has-text('Check again')");
		// Neutral while the server starts (its first start takes a second or more), never red.
		await page.waitForSelector(".aib-starting:has-text('Starting the assistant')", { timeout: SLOW }).catch(explain);
		expect(await page.locator(".aib-disconnected").count()).toBe(0);
		await screenshot("starting.png");
		// The server's first start imports everything (slow on a busy machine).
		await page.locator(".aib-setup-card").waitFor({ timeout: 50_000 }).catch(explain);
		expect(pageHost.started).toEqual([`${script} serve --vault ${vault}`]);
		expect(await page.locator(".aib-install-card").count()).toBe(0);
		await page.waitForSelector(".aib-status:has-text('connected')", { timeout: SLOW });
	});

	it("a message sent before a model is set up is answered once one is picked in the setup card", { timeout: 90_000 }, async () => {
		const card = page.locator(".aib-setup-card");
		const llama = card.locator(".aib-setup-model", { hasText: "llama3.1:8b" });
		await llama.waitFor({ timeout: SLOW });
		await send(page, "hello there");
		// The card sits above the input; the message stays in view above it.
		await page.locator(".aib-assistant .aib-waiting-model").last().waitFor({ timeout: SLOW });
		expect(await page.locator(".aib-assistant .aib-error").count()).toBe(0);
		const message = await page.locator(".aib-user").last().boundingBox();
		const cardBox = await card.boundingBox();
		expect(message && cardBox && message.y + message.height <= cardBox.y).toBe(true);
		expect(await llama.locator(".aib-setup-badge").textContent()).toBe("can use your notes");
		expect(await card.locator(".aib-setup-model", { hasText: "gemma3:1b" }).locator(".aib-setup-badge").textContent()).toBe("chat only");
		// The embedding model is offered for search by meaning, not as a chat model.
		expect(await card.locator(".aib-setup-section", { hasText: "Search by meaning" }).textContent()).toContain("nomic-embed-text:latest");
		expect(await card.locator(".aib-setup-model", { hasText: "nomic-embed-text" }).locator("button:has-text('Use')").count()).toBe(1);
		expect(await card.textContent()).toContain("Introduce yourself");
		await screenshot("setup-card.png");
		// A hosted service that speaks OpenAI's API (OpenRouter, a gateway) has an address field;
		// the key and the address take the card's width.
		const baseUrl = card.locator(".aib-setup-base-url");
		expect(await baseUrl.isVisible()).toBe(false);
		await card.locator(".aib-setup-provider").selectOption("openai");
		expect(await baseUrl.isVisible()).toBe(true);
		const key = await card.locator(".aib-setup-key-input").boundingBox();
		const hosted = await card.locator(".aib-setup-hosted").boundingBox();
		expect(key && hosted && key.width >= hosted.width - 1).toBe(true);
		await card.locator(".aib-setup-hosted").scrollIntoViewIfNeeded();
		await screenshot("setup-card-hosted.png");
		await card.locator(".aib-setup-provider").selectOption("anthropic");
		await llama.locator("button:has-text('Use')").click();
		await card.locator(".aib-setup-done", { hasText: "llama3.1:8b answers" }).waitFor({ timeout: SLOW });
		// The message that waited is answered (streamed), in place of "no model yet".
		await page.locator(".aib-assistant .aib-body").last().getByText("Ollama says: hello there").waitFor({ timeout: SLOW });
		expect(await page.locator(".aib-assistant .aib-waiting-model").count()).toBe(0);
		expect(await page.locator(".aib-user").count()).toBe(1);
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
