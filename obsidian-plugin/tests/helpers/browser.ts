// The browser tests' page: the harness bundle (the real plugin with the obsidian shim) served
// with page.html and styles.css on 127.0.0.1, and Debian's Chromium driven by playwright-core.
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import esbuild from "esbuild";
import { chromium, type Browser, type Page } from "playwright-core";
import { REPO_ROOT } from "./node";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);
export const WAIT = 15_000;
const PLUGIN = join(REPO_ROOT, "obsidian-plugin");

async function bundle(): Promise<string> {
	const result = await esbuild.build({
		entryPoints: [join(PLUGIN, "tests", "browser", "harness.ts")],
		bundle: true,
		write: false,
		format: "iife",
		target: "es2021",
		alias: { obsidian: join(PLUGIN, "tests", "browser", "obsidian-shim.ts") },
		// The Node host is never made in the page (the harness passes its own); keep Node out.
		external: ["fs", "crypto", "os", "path", "child_process", "http", "https", "process"],
	});
	return result.outputFiles[0]?.text ?? "";
}

export interface PageOptions {
	theme?: "dark" | "light";
	/** The plugin's data.json (none by default). */
	data?: unknown;
	/** The vault's folder (default /home/user/My Vault). */
	vault?: string;
	/** Obsidian on a phone (`Platform.isMobile`). */
	mobile?: boolean;
	/** Done before the page loads, e.g. exposing a Node-side host (tests/helpers/page-host.ts). */
	prepare?: (page: Page) => Promise<void>;
}

export interface TestPages {
	origin: string;
	browser: Browser;
	/** A page of the harness with the server's info file (or none), ready. */
	open(info: string | null, options?: PageOptions): Promise<Page>;
	close(): Promise<void>;
}

/** The pages' browser; `args`: more Chromium flags (a certificate's pinned key, say); `port`:
 * where the pages are served (their origin known before, for a server's allowed origins). */
export async function testPages(args: string[] = [], port = 0): Promise<TestPages> {
	const script = await bundle();
	const files: Record<string, [string, string]> = {
		"/": [readFileSync(join(PLUGIN, "tests", "browser", "page.html"), "utf8"), "text/html"],
		"/harness.js": [script, "text/javascript"],
		"/styles.css": [readFileSync(join(PLUGIN, "styles.css"), "utf8"), "text/css"],
	};
	const http: Server = createServer((request, response) => {
		const file = files[(request.url ?? "/").split("?")[0] ?? "/"];
		response.writeHead(file ? 200 : 404, { "content-type": file?.[1] ?? "text/plain" });
		response.end(file?.[0] ?? "not found");
	});
	await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
	const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: [
			"--no-sandbox",
			"--disable-gpu",
			"--disable-quic",
			"--no-first-run",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-sync",
			"--font-render-hinting=none",
			...args,
		],
	});
	return {
		origin,
		browser,
		async open(info, options = {}) {
			const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
			await options.prepare?.(page);
			const query = new URLSearchParams();
			if (info !== null) query.set("info", info);
			if (options.theme) query.set("theme", options.theme);
			if (options.data !== undefined) query.set("data", JSON.stringify(options.data));
			if (options.vault) query.set("vault", options.vault);
			if (options.mobile) query.set("mobile", "1");
			await page.goto(`${origin}/?${query.toString()}`);
			await page.waitForSelector("body[data-ready=true]", { timeout: WAIT });
			return page;
		},
		async close() {
			await browser.close();
			http.close();
		},
	};
}

export async function send(page: Page, text: string): Promise<void> {
	await page.fill(".aib-input", text);
	await page.press(".aib-input", "Enter");
}
