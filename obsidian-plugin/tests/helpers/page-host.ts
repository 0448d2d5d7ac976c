// The Node side of the browser page's host (tests/browser/harness.ts): the page calls
// `window.aibHost(call)` (Playwright's exposeFunction) and this runs it on a real Host, so the
// plugin in Chromium finds, starts and stops real processes; a child's output and exit go back
// to the page as events.
import type { Page } from "playwright-core";
import type { ChildProcessLike, Host } from "../../src/core/host";

export type HostCallArgs =
	| { op: "info" }
	| { op: "realpath"; path: string }
	| { op: "sha256Hex"; text: string }
	| { op: "readText"; path: string }
	| { op: "isExecutable"; path: string }
	| { op: "process"; pid: number }
	| { op: "probe"; url: string; origin: string }
	| { op: "download"; url: string; path: string }
	| { op: "fileSha256"; path: string }
	| { op: "spawn"; child: number; command: string; args: string[]; cwd: string }
	| { op: "kill"; child: number };
export type HostCall = (call: HostCallArgs) => Promise<unknown>;
export type HostEvent = { child: number; kind: "output"; line: string } | { child: number; kind: "exit"; code: number | null };

export interface PageHost {
	/** What the page started, as "command args…" lines. */
	started: string[];
	/** How many of them still run. */
	running(): number;
	/** The last lines they printed. */
	output: string[];
	/** Stop every process the page started (the plugin would on Obsidian's quit). */
	killAll(): Promise<void>;
}

/** Give `page` (before it loads) the Node host `host`. */
export async function exposeHost(page: Page, host: Host): Promise<PageHost> {
	const children = new Map<number, { child: ChildProcessLike; exited: Promise<void> }>();
	let alive = 0;
	const started: string[] = [];
	const output: string[] = [];
	const send = (event: HostEvent): void => {
		void page.evaluate((e) => window.aibHostEvent?.(e), event).catch(() => undefined);
	};
	await page.exposeFunction("aibHost", async (call: HostCallArgs): Promise<unknown> => {
		switch (call.op) {
			case "info":
				return { platform: host.platform, arch: host.arch, env: host.env, home: host.homedir() };
			case "realpath":
				return host.realpath(call.path);
			case "sha256Hex":
				return host.sha256Hex(call.text);
			case "readText":
				return host.readText(call.path);
			case "isExecutable":
				return host.isExecutable(call.path);
			case "process":
				return host.process(call.pid);
			case "probe":
				return host.probe(call.url, call.origin);
			case "download":
				return host.download(call.url, call.path).then(() => null);
			case "fileSha256":
				return host.fileSha256(call.path);
			case "spawn": {
				started.push([call.command, ...call.args].join(" "));
				const child = host.spawn(call.command, call.args, call.cwd);
				alive++;
				const exited = new Promise<void>((resolve) =>
					child.onExit(() => {
						alive--;
						resolve();
					}),
				);
				children.set(call.child, { child, exited });
				child.onOutput((line) => {
					output.push(line);
					if (output.length > 40) output.shift();
					send({ child: call.child, kind: "output", line });
				});
				child.onExit((code) => send({ child: call.child, kind: "exit", code }));
				return child.pid ?? null;
			}
			case "kill":
				children.get(call.child)?.child.kill();
				return null;
		}
	});
	return {
		started,
		output,
		running: () => alive,
		killAll: async () => {
			for (const { child, exited } of children.values()) {
				child.kill();
				await exited;
			}
		},
	};
}
