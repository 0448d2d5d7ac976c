// What the core needs from the machine (Node's fs, crypto, os, child_process on the desktop).
// The Obsidian adapter (ui/node-host.ts) provides it; tests pass Node's modules directly.

export interface ChildProcessLike {
	readonly pid: number | undefined;
	kill(): void;
	onExit(listener: (code: number | null) => void): void;
	onOutput(listener: (line: string) => void): void;
}

/** What the machine says about a pid: running as this user, gone, or running as another user
 * (kill(pid, 0) answers EPERM: not ours). `command` is its command line where the platform
 * tells (Linux's /proc, `ps` elsewhere), else null. */
export interface ProcessInfo {
	state: "alive" | "gone" | "foreign";
	command: string | null;
}

/** The machine's I/O is asynchronous, so a page can be given a host in another process (the
 * browser test's Node side); the path rules and names are plain values and functions. */
export interface Host {
	platform: string;
	/** The processor, as Node's `process.arch` names it (x64, arm64…). */
	arch: string;
	env: Record<string, string | undefined>;
	homedir(): string;
	join(...parts: string[]): string;
	basename(path: string): string;
	realpath(path: string): Promise<string>;
	sha256Hex(text: string): Promise<string>;
	/** The file's text, or null when it does not exist. */
	readText(path: string): Promise<string | null>;
	/** Whether a file exists at `path` that this user may run. */
	isExecutable(path: string): Promise<boolean>;
	process(pid: number): Promise<ProcessInfo>;
	spawn(command: string, args: string[], cwd: string): ChildProcessLike;
	/** Save what `url` answers (following redirects) at `path`, its folders made as needed;
	 * rejects with a one-sentence reason when it cannot. */
	download(url: string, path: string): Promise<void>;
	/** The SHA-256 of a file's bytes, in hex. */
	fileSha256(path: string): Promise<string>;
	/** The HTTP answer to a WebSocket handshake (status 101 when it would succeed; 0 with the
	 * error's message when nothing answers). */
	probe(url: string, origin: string): Promise<{ status: number; body: string }>;
}

/** Why a WebSocket that never opened failed, in one sentence (a browser socket cannot see it),
 * with the probe's HTTP status (0: nothing accepts connections there). */
export async function diagnoseHandshake(
	host: Host,
	url: string,
	origin: string,
): Promise<{ status: number; message: string }> {
	const { status, body } = await host.probe(url, origin);
	const said = body.trim().split("\n")[0]?.slice(0, 200) ?? "";
	let message: string;
	if (status === 403) {
		message = `The server refused this connection (HTTP 403${said ? `: ${said}` : ""}); add ${origin} to AI_BRIDGE_ALLOWED_ORIGINS if it is yours.`;
	} else if (status === 0) {
		message = `Nothing answers at ${url} (${said || "connection refused"}): the server has stopped.`;
	} else if (status === 101) {
		message = `The connection to ${url} failed; it answers now, so retrying.`;
	} else {
		message = `The server at ${url} answered HTTP ${status}${said ? `: ${said}` : ""}.`;
	}
	return { status, message };
}
