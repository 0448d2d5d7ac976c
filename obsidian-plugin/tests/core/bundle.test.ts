import { builtinModules } from "node:module";
import esbuild from "esbuild";
import { describe, expect, it, vi } from "vitest";
import { options } from "../../esbuild.config.mjs";

async function productionBundle(): Promise<string> {
	const result = await esbuild.build({ ...options, write: false, logLevel: "silent" });
	return result.outputFiles?.[0]?.text ?? "";
}

describe("the production bundle", () => {
	it("is CommonJS that reaches obsidian and Node built-ins with require() only", async () => {
		const code = await productionBundle();
		expect(code).not.toMatch(/\bimport\(/);
		const required = new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
		expect([...required].filter((name) => name !== "obsidian" && !builtinModules.includes(name ?? ""))).toEqual([]);
		expect(required.has("obsidian")).toBe(true);
		expect(code).toMatch(/module\.exports/);
	});
});

/** main.js run as Obsidian runs it (CommonJS), with a stand-in `obsidian` module for the platform
 * given: which modules it asks require() for while it loads, starts and connects. */
async function runPlugin(platform: { isMobile: boolean; isDesktop: boolean }, stored: Record<string, string>) {
	const code = await productionBundle();
	const required: string[] = [];
	const sockets: string[] = [];
	class Stub {}
	class Plugin {
		constructor(
			readonly app: unknown,
			readonly manifest: unknown,
		) {}
		loadData = () => Promise.resolve(null);
		saveData = () => Promise.resolve();
		registerView(): void {}
		addStatusBarItem() {
			return { addClass() {}, setText() {}, setAttribute() {}, toggleClass() {} };
		}
		registerDomEvent(): void {}
		addRibbonIcon(): void {}
		addCommand(): void {}
		addSettingTab(): void {}
		register(): void {}
		registerObsidianProtocolHandler(): void {}
	}
	const named: Record<string, unknown> = { Platform: platform, Plugin, requestUrl: () => Promise.reject(new Error("offline")) };
	const obsidian = new Proxy(named, { get: (target, name: string) => (name in target ? target[name] : Stub) });
	const require = (name: string): unknown => {
		required.push(name);
		if (name === "obsidian") return obsidian;
		// A phone has no Node: what a desktop would load is refused here, and recorded.
		throw new Error(`no ${name} here`);
	};
	const window = {
		localStorage: { getItem: (key: string) => stored[key] ?? null, setItem: (key: string, value: string) => (stored[key] = value) },
		setTimeout: (callback: () => void, ms: number) => setTimeout(callback, ms),
		clearTimeout: (handle: number) => clearTimeout(handle),
		location: { origin: "capacitor://localhost" },
	};
	class WebSocket {
		onopen = null;
		onmessage = null;
		onclose = null;
		onerror = null;
		readyState = 0;
		constructor(url: string) {
			sockets.push(url);
		}
		send(): void {}
		close(): void {}
	}
	const module = { exports: {} as Record<string, unknown> };
	new Function("module", "exports", "require", "window", "WebSocket", code)(module, module.exports, require, window, WebSocket);
	const AssistantPlugin = module.exports.default as new (app: unknown, manifest: unknown) => { onload(): Promise<void>; client: { stop(): void } };
	let layoutReady: () => void = () => undefined;
	const app = {
		vault: { adapter: {}, getName: () => "Notes" },
		workspace: { onLayoutReady: (callback: () => void) => (layoutReady = callback), getLeavesOfType: () => [] },
	};
	const plugin = new AssistantPlugin(app, { id: "ai-bridge-assistant", version: "0.1.0" });
	await plugin.onload();
	layoutReady();
	return { required, sockets, plugin };
}

describe("on a phone", () => {
	it("main.js loads, starts and connects to another computer's server without loading any Node module", async () => {
		const choice = { mode: "another-computer", address: "https://192.168.1.20:8443", key: "oab_" + "k".repeat(43), fingerprint: "" };
		const { required, sockets, plugin } = await runPlugin(
			{ isMobile: true, isDesktop: false },
			{ "ai-bridge-assistant:server:Notes": JSON.stringify(choice) },
		);
		await vi.waitFor(() => expect(sockets).toEqual(["wss://192.168.1.20:8443/ws"]));
		expect(new Set(required)).toEqual(new Set(["obsidian"]));
		plugin.client.stop();
	});

	it("a phone ignores a stored This computer (a desktop's choice cannot start a server there)", async () => {
		const choice = { mode: "this-computer", address: "https://h:8443", key: "oab_" + "k".repeat(43), fingerprint: "" };
		const { required, sockets, plugin } = await runPlugin({ isMobile: true, isDesktop: false }, { "ai-bridge-assistant:server:Notes": JSON.stringify(choice) });
		await vi.waitFor(() => expect(sockets).toEqual(["wss://h:8443/ws"]));
		expect(new Set(required)).toEqual(new Set(["obsidian"]));
		plugin.client.stop();
	});

	it("whereas the desktop, with the server on this computer, loads Node's modules (so the check can fail)", async () => {
		const { required, plugin } = await runPlugin({ isMobile: false, isDesktop: true }, {});
		await vi.waitFor(() => expect(required).toContain("child_process"));
		plugin.client.stop();
	});
});
