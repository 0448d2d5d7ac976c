// What the core needs from the machine (Node's fs, crypto, os, child_process on the desktop).
// The Obsidian adapter (ui/node-host.ts) provides it; tests pass Node's modules directly.

export interface ChildProcessLike {
	readonly pid: number | undefined;
	kill(): void;
	onExit(listener: (code: number | null) => void): void;
	onOutput(listener: (line: string) => void): void;
}

export interface Host {
	platform: string;
	env: Record<string, string | undefined>;
	homedir(): string;
	join(...parts: string[]): string;
	basename(path: string): string;
	realpath(path: string): string;
	sha256Hex(text: string): string;
	/** The file's text, or null when it does not exist. */
	readText(path: string): string | null;
	/** Whether a process with this pid exists. */
	isAlive(pid: number): boolean;
	spawn(command: string, args: string[], cwd: string): ChildProcessLike;
	/** The HTTP answer to a WebSocket handshake (status 101 when it would succeed; 0 with the
	 * error's message when nothing answers). */
	probe(url: string, origin: string): Promise<{ status: number; body: string }>;
}

/** Why a WebSocket that never opened failed, in one sentence (a browser socket cannot see it). */
export async function diagnoseHandshake(host: Host, url: string, origin: string): Promise<string> {
	const { status, body } = await host.probe(url, origin);
	const said = body.trim().split("\n")[0]?.slice(0, 200) ?? "";
	if (status === 403) {
		return `The server refused this connection (HTTP 403${said ? `: ${said}` : ""}); add ${origin} to AI_BRIDGE_ALLOWED_ORIGINS if it is yours.`;
	}
	if (status === 0) return `Nothing answers at ${url} (${said || "connection refused"}): the server has stopped.`;
	if (status === 101) return `The connection to ${url} failed; it answers now, so retrying.`;
	return `The server at ${url} answered HTTP ${status}${said ? `: ${said}` : ""}.`;
}
