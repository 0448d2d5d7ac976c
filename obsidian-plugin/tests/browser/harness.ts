// The page the browser test opens: the real plugin (src/main.ts) with the obsidian shim, a
// workspace with a right sidebar, and a host whose info file is the demo server's (or absent).
import { FileSystemAdapter, Workspace } from "./obsidian-shim";
import type { Host } from "../../src/core/host";
import AssistantPlugin from "../../src/main";

const query = new URLSearchParams(window.location.search);
const info = query.get("info");

function fakeHost(): Host {
	return {
		platform: "linux",
		env: {},
		homedir: () => "/home/user",
		join: (...parts) => parts.join("/").replace(/\/+/g, "/"),
		basename: (path) => path.split("/").pop() ?? "",
		realpath: (path) => path,
		sha256Hex: () => "0123456789abcdef",
		readText: () => info,
		isAlive: () => true,
		spawn: () => {
			throw new Error("not in the browser test");
		},
		probe: async (url) => ({ status: 0, body: `nothing answers at ${url}` }),
	};
}

class BrowserPlugin extends AssistantPlugin {
	protected override createHost(): Promise<Host | null> {
		return Promise.resolve(fakeHost());
	}
}

const app: Record<string, unknown> = {};
app.workspace = new Workspace(app, document.getElementById("sidebar")!);
app.vault = { adapter: new FileSystemAdapter("/home/user/My Vault"), getAllLoadedFiles: () => [] };
app.metadataCache = {};
const plugin = new BrowserPlugin(app as never, { id: "ai-bridge-assistant", version: "0.1.0" } as never);
(window as unknown as { plugin: AssistantPlugin }).plugin = plugin;
void plugin.onload().then(async () => {
	await plugin.activateView();
	document.body.dataset.ready = "true";
});
