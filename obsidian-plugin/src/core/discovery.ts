// Finding the server of a vault: the info file's location (docs/protocol.md, "Finding the
// server"), computed exactly as the Python side does, and whether the file is stale.
import { NoServerError, type Endpoint } from "./client";
import type { Host } from "./host";

const APP = "obsidian-ai-bridge";

/** `<slug>-<hash>`: the vault's folder in the server's state directory. */
export function vaultKey(host: Host, vaultPath: string): string {
	const abs = host.realpath(vaultPath);
	const hash = host.sha256Hex(abs).slice(0, 12);
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

export function infoFilePath(host: Host, vaultPath: string): string {
	return host.join(stateDir(host), "vaults", vaultKey(host, vaultPath), "server.json");
}

export interface InfoRecord extends Endpoint {
	pid: number;
	protocolVersion: number;
}

/** The info file's record; NoServerError (one sentence) when missing, unreadable or stale. */
export function readInfoFile(host: Host, path: string): InfoRecord {
	const text = host.readText(path);
	if (text === null) throw new NoServerError("No server is running for this vault.");
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		throw new NoServerError(`The server info file ${path} is unreadable: restart the server.`);
	}
	const record = raw as Partial<InfoRecord>;
	if (typeof record.url !== "string" || typeof record.token !== "string" || typeof record.pid !== "number") {
		throw new NoServerError(`The server info file ${path} is unreadable: restart the server.`);
	}
	if (!host.isAlive(record.pid)) {
		throw new NoServerError("The server for this vault has stopped (its info file is stale).");
	}
	return { url: record.url, token: record.token, pid: record.pid, protocolVersion: record.protocolVersion ?? 1 };
}
