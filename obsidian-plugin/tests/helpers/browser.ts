// The browser tests' common parts: the plugin bundled with the obsidian shim (tests/browser),
// served with its page and styles on 127.0.0.1, and Debian's Chromium driven by playwright-core.
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import esbuild from "esbuild";
import { chromium, type Browser, type Page } from "playwright-core";
import { REPO_ROOT } from "./node";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const PLUGIN = join(REPO_ROOT, "obsidian-plugin");
export const haveChromium = existsSync(CHROMIUM);
export const WAIT = 15_000;

async function bundle(): Promise<string> {
	const result = await esbuild.build({
		entryPoints: [join(PLUGIN, "tests", "browser", "harness.ts")],
		bundle: true,
		write: false,
		format: "iife",
		target: "es2021",
		alias: { obsidian: join(PLUGIN, "tests", "browser", "obsidian-shim.ts") },
		// The Node host is never made in the page (the harness passes its own); keep Node out.
		external: ["fs", "crypto", "os", "path", "child_process", "http"],
	});
	return result.outputFiles[0]?.text ?? "";
}

export interface Harness {
	/** The page's origin, to allow on the server. */
	origin: string;
	browser: Browser;
	newPage(): Promise<Page>;
	close(): Promise<void>;
}

/** Serve the harness page and start Chromium. */
export async function startHarness(): Promise<Harness> {
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
	await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
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
		],
	});
	return {
		origin,
		browser,
		newPage: () => browser.newPage({ viewport: { width: 1100, height: 760 } }),
		close: async () => {
			await browser.close();
			http.close();
		},
	};
}

/** Open the harness page (with `query`) and wait until the plugin has loaded. */
export async function openHarness(page: Page, harness: Harness, query: Record<string, string> = {}): Promise<void> {
	const search = new URLSearchParams(query).toString();
	await page.goto(`${harness.origin}/${search ? `?${search}` : ""}`);
	await page.waitForSelector("body[data-ready=true]", { timeout: WAIT });
}

export async function send(page: Page, text: string): Promise<void> {
	await page.fill(".aib-input", text);
	await page.press(".aib-input", "Enter");
}
