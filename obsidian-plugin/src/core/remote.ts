// The server on another computer (issue 29): the *Server* setting of this device, the pairing
// text that fills it, the WebSocket address of a remote listener (`wss://HOST:PORT/ws`), and why
// a connection to it failed, in one sentence. The choice is kept per device, outside data.json
// (which syncs with the vault): a remote address comes only from this device's settings, never
// from an info file (core/discovery.ts takes loopback addresses only).
import { NoServerError, type Endpoint } from "./client";
import { REPOSITORY } from "./install";

/** "this-computer": find, start and stop the server here (desktop only); "another-computer": an
 * address and a client key. */
export type ServerMode = "this-computer" | "another-computer";

/** What this device uses to reach the server. */
export interface ServerChoice {
	mode: ServerMode;
	/** `https://HOST:PORT` or `wss://HOST:PORT[/ws]`, as typed or paired. */
	address: string;
	/** A client key (`oab_…`, made by `obsidian-ai-bridge clients add NAME`). */
	key: string;
	/** The SHA-256 of the server's certificate (hex), from the pairing text; shown to compare. */
	fingerprint: string;
}

/** Where this device keeps its choice (Obsidian's localStorage, outside the vault). */
export interface ChoiceStore {
	load(): ServerChoice | null;
	save(choice: ServerChoice): void;
}

/** The scheme of the pairing text (`clients add NAME --pair` prints it, with a QR code). */
export const PAIR_ACTION = "ai-bridge-pair";

/** Commands and placeholders the settings name (code, not UI text). */
export const PAIR_COMMAND = "obsidian-ai-bridge clients add NAME --pair";
export const SETUP_COMMAND = "obsidian-ai-bridge setup";
export const PAIRING_PLACEHOLDER = `obsidian://${PAIR_ACTION}?…`;
export const ADDRESS_PLACEHOLDER = "https://HOST:PORT";
export const KEY_PLACEHOLDER = "oab_…";

/** The README section on reaching the server from a phone or another computer. */
export const REMOTE_HELP_URL = `https://github.com/${REPOSITORY}#from-a-phone-or-another-computer`;

/** The choice a device starts with: this computer on the desktop, another one on a phone. */
export function defaultChoice(mobile: boolean): ServerChoice {
	return { mode: mobile ? "another-computer" : "this-computer", address: "", key: "", fingerprint: "" };
}

/** A stored value read back; anything else than a choice counts as none. */
export function parseServerChoice(value: unknown): ServerChoice | null {
	if (typeof value !== "object" || value === null) return null;
	const { mode, address, key, fingerprint } = value as Record<string, unknown>;
	if (mode !== "this-computer" && mode !== "another-computer") return null;
	if (typeof address !== "string" || typeof key !== "string") return null;
	return { mode, address, key, fingerprint: typeof fingerprint === "string" ? fingerprint : "" };
}

/** What a pairing text gives: the server's address, a client key and its certificate's fingerprint. */
export type Pairing = Pick<ServerChoice, "address" | "key" | "fingerprint">;

/** The fields of a pairing text `obsidian://ai-bridge-pair?address=…&key=…&fingerprint=…` (as
 * pasted, or as Obsidian hands a scanned one to the protocol handler); null when it is none. */
export function parsePairing(text: string): Pairing | null {
	let url: URL;
	try {
		url = new URL(text.trim());
	} catch {
		return null;
	}
	if (url.protocol !== "obsidian:") return null;
	// `obsidian://ai-bridge-pair?…`: the action is the host (or the path, as some parsers read it).
	const action = (url.hostname || url.pathname).replace(/^\/+|\/+$/g, "");
	if (action !== PAIR_ACTION) return null;
	return pairingFromParams(Object.fromEntries(url.searchParams));
}

/** A pairing from its parameters; null when the address or the key is missing or unusable. */
export function pairingFromParams(params: Record<string, string | undefined>): Pairing | null {
	const address = (params.address ?? "").trim();
	const key = (params.key ?? "").trim();
	if (!address || !key || addressError(address) !== null) return null;
	return { address, key, fingerprint: (params.fingerprint ?? "").trim().toLowerCase() };
}

/** Why `address` cannot be used (one sentence), or null. */
export function addressError(address: string): string | null {
	let url: URL;
	try {
		url = new URL(address.trim());
	} catch {
		return "The address must look like https://HOST:PORT.";
	}
	if (!["https:", "wss:", "http:", "ws:"].includes(url.protocol)) return "The address must start with https:// or wss://.";
	if (url.username || url.password) return "The address must not hold a user name or password: the key goes in its own field.";
	return null;
}

/** Whether the connection to `address` is encrypted (https, wss). */
export function isEncrypted(address: string): boolean {
	return /^(https|wss):/i.test(address.trim());
}

/** The WebSocket of the server at `address`: https→wss (http→ws), at `/ws` unless a path is given. */
export function socketUrl(address: string): string {
	const url = new URL(address.trim());
	url.protocol = url.protocol === "https:" || url.protocol === "wss:" ? "wss:" : "ws:";
	if (url.pathname === "" || url.pathname === "/") url.pathname = "/ws";
	url.search = "";
	url.hash = "";
	return url.toString();
}

/** The server's `GET /health` at `address` (what a failed connection is diagnosed with). */
export function healthUrl(address: string): string {
	const url = new URL(address.trim());
	url.protocol = url.protocol === "https:" || url.protocol === "wss:" ? "https:" : "http:";
	url.pathname = "/health";
	url.search = "";
	url.hash = "";
	return url.toString();
}

/** Where to connect for another computer: only this device's settings, never an info file. */
export function remoteEndpoint(choice: ServerChoice): Endpoint {
	if (!choice.address || !choice.key) {
		throw new NoServerError("Set the server's address and client key in the plugin settings (or paste a pairing text).");
	}
	const error = addressError(choice.address);
	if (error !== null) throw new NoServerError(error);
	return { url: socketUrl(choice.address), token: choice.key, remote: true };
}

/** An HTTP GET: its status and body; it throws when nothing answers or TLS fails (requestUrl). */
export type Fetch = (url: string, headers: Record<string, string>) => Promise<{ status: number; text: string }>;

/** Words of the errors Electron, Android and iOS give for a certificate they do not trust. */
const CERTIFICATE_ERROR = /cert|ssl|tls|x509|trust anchor|handshake|self[- ]signed/i;

/** Why a WebSocket to the server at `address` never opened, in one sentence: asked again over
 * HTTPS (`/health` with the key), which tells an untrusted certificate, a refused key, a refused
 * device and a server that does not answer apart. */
export async function diagnoseRemote(fetch: Fetch, address: string, key: string): Promise<string> {
	const url = healthUrl(address);
	const where = new URL(url).host;
	let status: number;
	let said: string;
	try {
		const response = await fetch(url, { Authorization: `Bearer ${key}` });
		status = response.status;
		said = response.text.trim().split("\n")[0]?.slice(0, 200) ?? "";
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		if (CERTIFICATE_ERROR.test(message)) {
			return `This device does not trust the certificate of the server at ${where} (${message.slice(0, 120)}): see ${REMOTE_HELP_URL}`;
		}
		return `Nothing answers at ${where} (${message.slice(0, 120) || "no answer"}): check that the server runs with --remote and that this device can reach it.`;
	}
	if (status === 401) return `The server at ${where} refused the client key: it was revoked or mistyped; make a new one with obsidian-ai-bridge clients add.`;
	if (status === 403) return `The server at ${where} refused this connection (HTTP 403${said ? `: ${said}` : ""}).`;
	if (status === 429) return `The server at ${where} refuses this device for a minute after too many failed attempts.`;
	if (status === 200) return `The connection to ${where} failed; it answers now, so retrying.`;
	return `The server at ${where} answered HTTP ${status}${said ? `: ${said}` : ""}.`;
}

/** What a client key of `scope` may do, in the words a pairing shows. */
export function scopeWords(scope: string): string {
	switch (scope) {
		case "read":
			return "search and read your notes";
		case "chat":
			return "search and read your notes, and chat with the assistant";
		case "write":
			return "search and read your notes, chat with the assistant, and change notes (each change reviewed here first)";
		default:
			return "everything, the server's settings too";
	}
}

/** "Connected to HOST as NAME", once a paired device's connection answered. */
export function connectedWords(address: string, name: string): string {
	let host = address;
	try {
		host = new URL(address).host;
	} catch {
		// An address the settings would refuse never connects.
	}
	return `Connected to ${host} as ${name}`;
}

/** Whether a connection failure is a certificate this device does not trust (diagnoseRemote's). */
export function untrustedCertificate(reason: string): boolean {
	return reason.startsWith("This device does not trust the certificate");
}

/** A SHA-256 fingerprint in groups of four, so that it wraps on a phone's screen. */
export function groupedFingerprint(fingerprint: string): string {
	return (fingerprint.toLowerCase().match(/.{1,4}/g) ?? []).join(" ");
}
