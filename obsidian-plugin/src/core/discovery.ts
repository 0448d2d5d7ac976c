// Finding the server of a vault: the info file's location (docs/protocol.md, "Finding the
// server"), computed exactly as the Python side does, and whether to trust it: a loopback
// ws:// URL and a pid that is alive and a server's (issue 21). The server then proves it knows
// the token before the plugin sends it (core/proof.ts).
import { NoServerError, type Endpoint } from "./client";
import type { Host, ProcessInfo } from "./host";

const APP = "obsidian-ai-bridge";

/** `<slug>-<hash>`: the vault's folder in the server's state directory. */
export async function vaultKey(host: Host, vaultPath: string): Promise<string> {
	const abs = await host.realpath(vaultPath);
	const hash = (await host.sha256Hex(abs)).slice(0, 12);
	const slug = host
		.basename(abs)
		.replace(/[^\p{L}\p{N}_.-]+/gu, "-")
		.replace(/^[-.]+|[-.]+$/g, "");
	return `${Array.from(slug).slice(0, 40).join("") || "vault"}-${hash}`;
}

/** platformdirs' `user_state_dir("obsidian-ai-bridge")`. */
export function stateDir(host: Host): string {
	switch (host.platform) {
		case "darwin":
			return host.join(host.homedir(), "Library", "Application Support", APP);
		case "win32":
			return host.join(host.env.LOCALAPPDATA ?? host.join(host.homedir(), "AppData", "Local"), APP, APP);
		default:
			return host.join(host.env.XDG_STATE_HOME || host.join(host.homedir(), ".local", "state"), APP);
	}
}

export async function infoFilePath(host: Host, vaultPath: string): Promise<string> {
	return host.join(stateDir(host), "vaults", await vaultKey(host, vaultPath), "server.json");
}

export interface InfoRecord extends Endpoint {
	pid: number;
	protocolVersion: number;
}

/** Whether `url` is a ws:// URL on this machine's loopback (127.0.0.0/8, [::1], localhost), with
 * no user name or password: the only kind of address the plugin takes from an info file. */
export function isLoopbackWsUrl(url: string): boolean {
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		return false;
	}
	if (parsed.protocol !== "ws:" || parsed.username || parsed.password) return false;
	const host = parsed.hostname.toLowerCase();
	if (host === "localhost" || host === "[::1]") return true;
	const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
	return octets !== null && octets.slice(1).every((octet) => Number(octet) <= 255);
}

/** Whether a command line is a bridge server's: the installed command, the package run as a
 * module, or a Python interpreter (the server's own process, however it was started). */
export function looksLikeServer(command: string): boolean {
	if (/plugin_bridge|obsidian-ai-bridge/i.test(command)) return true;
	const program = command.trim().split(/\s+/)[0] ?? "";
	const name = program.split(/[\\/]/).pop() ?? "";
	return /^python[\d.]*w?(\.exe)?$/i.test(name);
}

/** Only a pid that is alive, this user's, and (where the platform tells) a server counts. */
export function isOurServer(info: ProcessInfo): boolean {
	return info.state === "alive" && (info.command === null || looksLikeServer(info.command));
}

/** The info file's record; NoServerError (one sentence) when missing, unreadable, stale, or
 * naming an address off this machine. */
export async function readInfoFile(host: Host, path: string): Promise<InfoRecord> {
	const text = await host.readText(path);
	if (text === null) throw new NoServerError("No server is running for this vault.");
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		throw new NoServerError(`The note the server left of its address (${path}) is unreadable: restart the server.`);
	}
	const record = raw as Partial<InfoRecord>;
	if (typeof record.url !== "string" || typeof record.token !== "string" || typeof record.pid !== "number") {
		throw new NoServerError(`The note the server left of its address (${path}) is unreadable: restart the server.`);
	}
	if (!isLoopbackWsUrl(record.url)) {
		throw new NoServerError(
			`The note the server left of its address (${path}) names ${record.url.slice(0, 100)}, which is not a ws:// address on this machine: it was ignored.`,
		);
	}
	if (!isOurServer(await host.process(record.pid))) {
		throw new NoServerError("The server for this vault has stopped (the address it left is stale).");
	}
	return { url: record.url, token: record.token, pid: record.pid, protocolVersion: record.protocolVersion ?? 1 };
}
