// The page the browser test opens: the real plugin (src/main.ts) with the obsidian shim, a
// workspace with a right sidebar, and a host: by default a fake one whose info file is the demo
// server's (or absent); with `?node-host`, the test's Node side (tests/helpers/page-host.ts,
// through Playwright's exposeFunction), so the plugin finds, starts and stops a real server.
import { FileSystemAdapter, Workspace } from "./obsidian-shim";
import type { ChildProcessLike, Host } from "../../src/core/host";
import AssistantPlugin from "../../src/main";
import type { HostCall, HostEvent } from "../helpers/page-host";

const query = new URLSearchParams(window.location.search);
const info = query.get("info");
const vaultPath = query.get("vault") ?? "/home/user/My Vault";
/** The plugin's data.json (`?data=<json>`); none by default. */
const data = query.get("data");

declare global {
	interface Window {
		aibHost?: HostCall;
		aibHostEvent?: (event: HostEvent) => void;
	}
}

const posixJoin = (...parts: string[]): string => parts.join("/").replace(/\/+/g, "/");
const basename = (path: string): string => path.split("/").pop() ?? "";

function fakeHost(): Host {
	return {
		platform: "linux",
		env: {},
		homedir: () => "/home/user",
		join: posixJoin,
		basename,
		realpath: async (path) => path,
		sha256Hex: async () => "0123456789abcdef",
		readText: async () => info,
		isExecutable: async () => false,
		process: async () => ({ state: "alive", command: null }),
		spawn: () => {
			throw new Error("not in the browser test");
		},
		probe: async (url) => ({ status: 0, body: `nothing answers at ${url}` }),
	};
}

/** The Node side's host: every call goes to the test process; a child's output and exit come
 * back as events. */
async function nodeSideHost(call: HostCall): Promise<Host> {
	const machine = (await call({ op: "info" })) as { platform: string; env: Record<string, string>; home: string };
	const children = new Map<number, { output: ((line: string) => void)[]; exit: ((code: number | null) => void)[] }>();
	window.aibHostEvent = (event) => {
		const child = children.get(event.child);
		if (event.kind === "output") child?.output.forEach((l) => l(event.line));
		else child?.exit.forEach((e) => e(event.code));
	};
	let nextChild = 1;
	return {
		platform: machine.platform,
		env: machine.env,
		homedir: () => machine.home,
		join: posixJoin,
		basename,
		realpath: async (path) => (await call({ op: "realpath", path })) as string,
		sha256Hex: async (text) => (await call({ op: "sha256Hex", text })) as string,
		readText: async (path) => (await call({ op: "readText", path })) as string | null,
		isExecutable: async (path) => (await call({ op: "isExecutable", path })) as boolean,
		process: async (pid) => (await call({ op: "process", pid })) as Awaited<ReturnType<Host["process"]>>,
		probe: async (url, origin) => (await call({ op: "probe", url, origin })) as { status: number; body: string },
		spawn: (command, args, cwd): ChildProcessLike => {
			const id = nextChild++;
			const listeners = { output: [] as ((line: string) => void)[], exit: [] as ((code: number | null) => void)[] };
			children.set(id, listeners);
			const child = {
				pid: undefined as number | undefined,
				kill: () => void call({ op: "kill", child: id }),
				onExit: (listener: (code: number | null) => void) => listeners.exit.push(listener),
				onOutput: (listener: (line: string) => void) => listeners.output.push(listener),
			};
			void call({ op: "spawn", child: id, command, args, cwd }).then((pid) => (child.pid = pid as number));
			return child;
		},
	};
}

class BrowserPlugin extends AssistantPlugin {
	override loadData(): Promise<unknown> {
		return Promise.resolve(data === null ? null : JSON.parse(data));
	}

	protected override createHost(): Promise<Host | null> {
		return window.aibHost ? nodeSideHost(window.aibHost) : Promise.resolve(fakeHost());
	}
}

const app: Record<string, unknown> = {};
app.workspace = new Workspace(app, document.getElementById("sidebar")!);
app.vault = { adapter: new FileSystemAdapter(vaultPath), getAllLoadedFiles: () => [] };
app.metadataCache = {};
const plugin = new BrowserPlugin(app as never, { id: "ai-bridge-assistant", version: "0.1.0" } as never);
(window as unknown as { plugin: AssistantPlugin }).plugin = plugin;
void plugin.onload().then(async () => {
	await plugin.activateView();
	document.body.dataset.ready = "true";
});
