// The core's Host on Obsidian desktop: Node's modules, loaded only on the desktop and only when
// the server is on this computer (main.ts asks for it then). On a phone the plugin is a client
// of another computer's server, and no Node module is loaded (tests/core/bundle.test.ts).
import { Platform } from "obsidian";
import type { Host } from "../core/host";
import { nodeHost } from "../core/node-host";

export async function createNodeHost(): Promise<Host | null> {
	if (!Platform.isDesktop) return null;
	const [fs, crypto, os, path, childProcess, http, https, process] = await Promise.all([
		import("fs"),
		import("crypto"),
		import("os"),
		import("path"),
		import("child_process"),
		import("http"),
		import("https"),
		import("process"),
	]);
	return nodeHost({ fs, crypto, os, path, childProcess, http, https, process });
}
