// The core's Host on Obsidian desktop: Node's modules, loaded only on the desktop (the plugin
// is desktop-only; the guard keeps that explicit).
import { Platform } from "obsidian";
import type { Host } from "../core/host";
import { nodeHost } from "../core/node-host";

export async function createNodeHost(): Promise<Host | null> {
	if (!Platform.isDesktop) return null;
	const [fs, crypto, os, path, childProcess, http] = await Promise.all([
		import("fs"),
		import("crypto"),
		import("os"),
		import("path"),
		import("child_process"),
		import("http"),
	]);
	return nodeHost({ fs, crypto, os, path, childProcess, http, process });
}
