// The core's Host made of Node's modules, passed in by the caller: the Obsidian adapter loads
// them only on the desktop (ui/node-host.ts); tests pass them directly.
import type { ChildProcessLike, Host, ProcessInfo } from "./host";

export interface NodeModules {
	fs: typeof import("fs");
	crypto: typeof import("crypto");
	os: typeof import("os");
	path: typeof import("path");
	childProcess: typeof import("child_process");
	http: typeof import("http");
	https: typeof import("https");
	/** Node's process, or a stand-in with another environment (tests). */
	process: Pick<typeof import("process"), "platform" | "arch" | "env" | "kill">;
}

/** What a child's output and an HTTP body arrive as (a Node Buffer). */
interface Chunk {
	toString(encoding: "utf8"): string;
}

export function nodeHost(modules: NodeModules): Host {
	const { fs, crypto, os, path, childProcess, http, process } = modules;
	return {
		platform: process.platform,
		arch: process.arch,
		env: process.env,
		homedir: () => os.homedir(),
		join: (...parts) => path.join(...parts),
		basename: (p) => path.basename(p),
		realpath: (p) => fs.promises.realpath(p),
		sha256Hex: (text) => Promise.resolve(crypto.createHash("sha256").update(text, "utf8").digest("hex")),
		readText: async (p) => {
			try {
				return await fs.promises.readFile(p, "utf8");
			} catch {
				return null;
			}
		},
		isExecutable: async (p) => {
			try {
				await fs.promises.access(p, fs.constants.X_OK);
				return (await fs.promises.stat(p)).isFile();
			} catch {
				return false;
			}
		},
		process: async (pid): Promise<ProcessInfo> => {
			try {
				process.kill(pid, 0);
			} catch (error) {
				// EPERM: a process of another user has this pid now; it is not our server.
				return { state: (error as { code?: string }).code === "EPERM" ? "foreign" : "gone", command: null };
			}
			return { state: "alive", command: await commandLine(modules, pid) };
		},
		spawn: (command, args, cwd): ChildProcessLike => {
			const child = childProcess.spawn(command, args, {
				cwd,
				env: process.env,
				stdio: ["ignore", "pipe", "pipe"],
				windowsHide: true,
			});
			const lines: ((line: string) => void)[] = [];
			const exits: ((code: number | null) => void)[] = [];
			const forward = (chunk: Chunk): void => {
				for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) lines.forEach((l) => l(line));
			};
			child.stdout?.on("data", forward);
			child.stderr?.on("data", forward);
			child.on("exit", (code) => exits.forEach((e) => e(code)));
			child.on("error", (error) => {
				lines.forEach((l) => l(error.message));
				exits.forEach((e) => e(null));
			});
			return {
				pid: child.pid,
				kill: () => child.kill("SIGTERM"),
				onExit: (listener) => exits.push(listener),
				onOutput: (listener) => lines.push(listener),
			};
		},
		download: (url, destination) => download(modules, url, destination),
		fileSha256: async (p) => {
			const hash = crypto.createHash("sha256");
			for await (const chunk of fs.createReadStream(p)) hash.update(chunk as Uint8Array);
			return hash.digest("hex");
		},
		probe: (url, origin) =>
			new Promise((resolve) => {
				const request = http.get(url.replace(/^ws/, "http"), {
					headers: {
						Connection: "Upgrade",
						Upgrade: "websocket",
						"Sec-WebSocket-Version": "13",
						"Sec-WebSocket-Key": crypto.randomBytes(16).toString("base64"),
						Origin: origin,
					},
					timeout: 3000,
				});
				request.on("upgrade", (_response, socket) => {
					socket.destroy();
					resolve({ status: 101, body: "" });
				});
				request.on("response", (response) => {
					let body = "";
					response.on("data", (chunk: Chunk) => (body += chunk.toString("utf8")));
					response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
				});
				request.on("timeout", () => request.destroy(new Error("timed out")));
				request.on("error", (error) => resolve({ status: 0, body: error.message }));
			}),
	};
}

/** The most a download may be (uv's archive is about 20 MB) and how long it may take. */
const DOWNLOAD_LIMIT = 200 * 1024 * 1024;
const DOWNLOAD_MS = 10 * 60_000;

/** GET `url` into `destination` (through a temporary file, renamed once whole), following up
 * to five redirects (GitHub's release downloads redirect to its file storage). */
async function download(modules: NodeModules, url: string, destination: string, redirects = 5): Promise<void> {
	const { fs, path, http, https } = modules;
	await fs.promises.mkdir(path.dirname(destination), { recursive: true });
	const partial = `${destination}.part`;
	const next = await new Promise<string | null>((resolve, reject) => {
		const get = url.startsWith("https:") ? https.get : http.get;
		const request = get(url, { timeout: 30_000 }, (response) => {
			const status = response.statusCode ?? 0;
			const location = response.headers.location;
			if (status >= 300 && status < 400 && location) {
				response.resume();
				resolve(new URL(location, url).toString());
				return;
			}
			if (status !== 200) {
				response.resume();
				reject(new Error(`${new URL(url).host} answered HTTP ${status} for ${url}.`));
				return;
			}
			let size = 0;
			const began = Date.now();
			const file = fs.createWriteStream(partial);
			response.on("data", (chunk: Uint8Array) => {
				size += chunk.length;
				if (size > DOWNLOAD_LIMIT) request.destroy(new Error("the file is larger than expected"));
				else if (Date.now() - began > DOWNLOAD_MS) request.destroy(new Error("the download took more than ten minutes"));
			});
			response.pipe(file);
			file.on("finish", () => resolve(null));
			response.on("error", (error) => {
				file.destroy();
				reject(error);
			});
		});
		request.on("timeout", () => request.destroy(new Error("nothing came for 30 seconds")));
		request.on("error", (error) => reject(new Error(`Could not download ${url}: ${error.message}.`)));
	});
	if (next === null) {
		await fs.promises.rename(partial, destination);
		return;
	}
	if (redirects <= 0) throw new Error(`Too many redirects downloading ${url}.`);
	await download(modules, next, destination, redirects - 1);
}

/** The command line of a running pid: /proc on Linux, `ps` on macOS and other Unixes, the image
 * name from `tasklist` on Windows; null when the platform does not say. */
async function commandLine(modules: NodeModules, pid: number): Promise<string | null> {
	const { fs, childProcess, process } = modules;
	const run = (file: string, args: string[]): Promise<string | null> =>
		new Promise((resolve) => {
			childProcess.execFile(file, args, { timeout: 2000, windowsHide: true }, (error, stdout) =>
				resolve(error ? null : stdout.trim() || null),
			);
		});
	if (process.platform === "linux") {
		try {
			const raw = await fs.promises.readFile(`/proc/${pid}/cmdline`, "utf8");
			return raw.split("\0").filter(Boolean).join(" ") || null;
		} catch {
			return null;
		}
	}
	if (process.platform === "win32") {
		const row = await run("tasklist", ["/FI", `PID eq ${pid}`, "/FO", "CSV", "/NH"]);
		return /^"([^"]+)"/.exec(row ?? "")?.[1] ?? null;
	}
	return run("ps", ["-p", String(pid), "-o", "command="]);
}
