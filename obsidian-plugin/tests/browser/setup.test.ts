// From nothing installed to the first answer, in Chromium, with no data.json (issues 20, 31 and
// 39): the page gets a Node-side host (tests/helpers/page-host.ts) on a temporary HOME, with no
// server command and no uv. First the install card, which says what *Install* downloads and runs
// nothing. *Install* fetches uv's archive (made from the uv these tests use) from a local web
// server standing in for GitHub's releases, checks its SHA-256, unpacks it in the plugin's folder
// and runs `uv tool install` of the wheel that server serves as the plugin's release (built as
// `make release-assets` builds dist/), offline (UV_OFFLINE=1: uv's cache, warmed by `make setup`,
// holds every dependency); the command lands in ~/.local/bin (not on PATH) and the plugin starts
// it by itself; a message sent before any model is set up waits; the setup
// card lists a fake Ollama's models; once one is picked the message is answered; search by meaning is set up with the small model downloaded from a fake hub; the
// introduce-yourself conversation writes the context note once reviewed; when Obsidian quits the
// server stops. One server and one page for the whole file. `make screenshot` saves the two cards into docs/.
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
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
import { UV_VERSION, uvTarget } from "../../src/core/uv-release";

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
/** The paths the release host was asked for. */
const served: string[] = [];
let uvArchiveName: string;

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

/** uv's release archive for this platform, as uv publishes it (`uv-TARGET/uv` and `uvx` in a
 * tar.gz, and `<hex>  <name>` in `.sha256`), made from the uv these tests use, into `dist`. */
async function uvArchive(): Promise<string> {
	const target = uvTarget(process.platform, process.arch) ?? "";
	const name = `uv-${target}.tar.gz`;
	const staging = join(root, "uv-release");
	mkdirSync(join(staging, `uv-${target}`), { recursive: true });
	const program = realpathSync(uv[0] === "python3" ? execFileSync("python3", ["-c", "import uv; print(uv.find_uv_bin())"], { encoding: "utf8" }).trim() : (uv[0] ?? ""));
	for (const tool of ["uv", "uvx"]) cpSync(join(program, "..", tool), join(staging, `uv-${target}`, tool));
	await run("tar", ["-czf", join(dist, name), "-C", staging, `uv-${target}`]);
	const digest = createHash("sha256").update(readFileSync(join(dist, name))).digest("hex");
	writeFileSync(join(dist, `${name}.sha256`), `${digest}  ${name}\n`);
	return name;
}

/** The releases the plugin names, from `dist`: the plugin's own
 * (`/OWNER/REPO/releases/download/VERSION/FILE`) and uv's (`/astral-sh/uv/releases/…`). */
async function releaseServer(): Promise<Server> {
	const prefixes = [`/${REPOSITORY}/releases/download/${PLUGIN_VERSION}/`, `/astral-sh/uv/releases/download/${UV_VERSION}/`];
	const server = createHttpServer((request, response) => {
		const url = request.url ?? "";
		const prefix = prefixes.find((p) => url.startsWith(p));
		const file = prefix ? url.slice(prefix.length) : "";
		served.push(url);
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
	uvArchiveName = await uvArchive();
	release = await releaseServer();
	// uv's cache (warmed by `make setup`) with the release's wheel fetched once: uv's offline
	// mode refuses every URL it has not cached, loopback too (no index, no dependency).
	const cache = (await terminal([...uv, "cache", "dir"], {})).trim();
	const wheel = `${releaseHost}/${REPOSITORY}/releases/download/${PLUGIN_VERSION}/${wheelName(PLUGIN_VERSION)}`;
	await terminal([...uv, "pip", "install", "--no-deps", "--target", join(root, "fetched"), "--python", realpathSync(PYTHON), wheel], { UV_CACHE_DIR: cache });
	served.length = 0;
	// The machine the plugin sees: a fresh HOME, a PATH without the server or uv, a local
	// Ollama, the release host of this test (the plugin then never asks the package registry),
	// and uv kept offline on this machine's Python.
	const env = {
		UV_OFFLINE: "1",
		UV_CACHE_DIR: cache,
		UV_PYTHON_DOWNLOADS: "never",
		UV_PYTHON: realpathSync(PYTHON),
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
	it("with nothing installed, the panel shows the install card: what Install downloads, from where, and nothing run yet", { timeout: 90_000 }, async () => {
		const card = page.locator(".aib-install-card");
		await card.waitFor({ timeout: SLOW });
		const wheel = `${releaseHost}/${REPOSITORY}/releases/download/${PLUGIN_VERSION}/${wheelName(PLUGIN_VERSION)}`;
		expect(await card.locator(".aib-install-command").textContent()).toBe(`uv tool install ${wheel}`);
		expect(await card.textContent()).toContain(`pipx install ${wheel}`);
		const plan = card.locator(".aib-install-plan li");
		await plan.first().waitFor({ timeout: SLOW });
		const host = new URL(releaseHost).host;
		expect(await plan.allTextContents()).toEqual([
			`uv ${UV_VERSION}, the installer (about 20 MB), from ${host}/astral-sh/uv; checked against its SHA-256 and kept in this plugin's folder`,
			`the assistant's server (obsidian-ai-bridge), from ${host} (this plugin's release)`,
			"the packages it needs from pypi.org, and a Python if this computer has none uv can use",
		]);
		expect(await card.textContent()).toContain("Nothing is downloaded or run until you click Install.");
		expect(readdirSync(dist)).toContain(wheelName(PLUGIN_VERSION));
		expect(await page.locator(".aib-disconnected").count()).toBe(0);
		expect(pageHost.started).toEqual([]);
		expect(served).toEqual([]);
		// The command to paste is whole on one line that scrolls, with Copy beside it.
		const command = await card.locator(".aib-install-command").evaluate((el) => ({ oneLine: el.getBoundingClientRect().height < 2.5 * parseFloat(getComputedStyle(el).fontSize), scrolls: el.scrollWidth > el.clientWidth }));
		expect(command).toEqual({ oneLine: true, scrolls: true });
		await screenshot("install-card.png");
	});

	it("Install fetches uv, checks it, installs the release's wheel offline and starts the server, with no terminal", { timeout: 180_000 }, async () => {
		const card = page.locator(".aib-install-card");
		const started = Date.now();
		await card.locator(".aib-install-button").click();
		await card.locator(".aib-install-step").waitFor({ timeout: SLOW }).catch(explain);
		expect(await card.locator(".aib-install-button").textContent()).toBe("Installing…");
		await screenshot("install-progress.png");
		// The server's first start imports everything (slow on a busy machine).
		await page.locator(".aib-setup-card").waitFor({ timeout: 150_000 }).catch(explain);
		const seconds = (Date.now() - started) / 1000;
		writeFileSync(1, `Install (uv fetched and checked, the release's wheel installed offline, the server started) took ${seconds.toFixed(1)} s.\n`);
		const target = uvTarget(process.platform, process.arch) ?? "";
		const folder = join(vault, ".obsidian", "plugins", "ai-bridge-assistant", "uv", UV_VERSION);
		const wheel = `${releaseHost}/${REPOSITORY}/releases/download/${PLUGIN_VERSION}/${wheelName(PLUGIN_VERSION)}`;
		const script = join(home, ".local", "bin", "obsidian-ai-bridge");
		expect(served).toEqual([`/astral-sh/uv/releases/download/${UV_VERSION}/${uvArchiveName}`, `/astral-sh/uv/releases/download/${UV_VERSION}/${uvArchiveName}.sha256`]);
		expect(pageHost.started).toEqual([
			`tar -xf ${join(folder, uvArchiveName)} -C ${folder}`,
			`${join(folder, `uv-${target}`, "uv")} tool install ${wheel}`,
			`${script} serve --vault ${vault}`,
		]);
		expect((await terminal([script, "--version"], { HOME: home })).trim()).toBe(`obsidian-ai-bridge ${PLUGIN_VERSION}`);
		expect(await page.locator(".aib-install-card").count()).toBe(0);
		expect(await page.locator(".aib-disconnected").count()).toBe(0);
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

	it("Another computer is tried while the server here keeps running, and is saved only once it answers", { timeout: 90_000 }, async () => {
		const nowhere = `https://127.0.0.1:${await closedPort()}`;
		await page.evaluate((address) => (window as any).plugin.setServerChoice({ mode: "another-computer", address, key: `oab_${"k".repeat(43)}`, fingerprint: "" }), nowhere);
		await page.locator(".aib-reason", { hasText: "Nothing answers at" }).waitFor({ timeout: SLOW });
		// The address does not answer: the server here still runs, and nothing was saved.
		expect(pageHost.running()).toBe(1);
		expect(await page.evaluate(() => JSON.stringify(window.localStorage))).not.toContain(nowhere.slice("https://".length));
		await page.evaluate(() => (window as any).plugin.setServerChoice({ mode: "this-computer", address: "", key: "", fingerprint: "" }));
		await page.waitForFunction(() => (window as any).plugin.client.connection.status === "connected", null, { timeout: SLOW });
		expect(pageHost.started).toHaveLength(3);
	});

	it("when Obsidian quits, the server the plugin started stops", { timeout: 90_000 }, async () => {
		expect(pageHost.running()).toBe(1);
		await page.evaluate(() => window.dispatchEvent(new Event("beforeunload")));
		await until(() => (pageHost.running() === 0 ? true : null), "the server to stop", SLOW).catch((error: Error) => {
			throw new Error(`${error.message}; it printed:\n${pageHost.output.join("\n")}`);
		});
		// Nothing starts another one while Obsidian closes.
		await new Promise((resolve) => setTimeout(resolve, 1000));
		expect(pageHost.started).toHaveLength(3);
		expect(await page.textContent(".aib-status")).toBe("Assistant: disconnected");
	});
});

if (!haveChromium) writeFileSync(1, "Skipping the setup browser test: Chromium is missing.\n");
