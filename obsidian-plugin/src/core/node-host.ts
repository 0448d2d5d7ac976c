// The core's Host made of Node's modules, passed in by the caller: the Obsidian adapter loads
// them only on the desktop (ui/node-host.ts); tests pass them directly.
import type { ChildProcessLike, Host } from "./host";

export interface NodeModules {
	fs: typeof import("fs");
	crypto: typeof import("crypto");
	os: typeof import("os");
	path: typeof import("path");
	childProcess: typeof import("child_process");
	http: typeof import("http");
	process: NodeJS.Process;
}

export function nodeHost(modules: NodeModules): Host {
	const { fs, crypto, os, path, childProcess, http, process } = modules;
	return {
		platform: process.platform,
		env: process.env,
		homedir: () => os.homedir(),
		join: (...parts) => path.join(...parts),
		basename: (p) => path.basename(p),
		realpath: (p) => fs.realpathSync(p),
		sha256Hex: (text) => crypto.createHash("sha256").update(text, "utf8").digest("hex"),
		readText: (p) => {
			try {
				return fs.readFileSync(p, "utf8");
			} catch {
				return null;
			}
		},
		isAlive: (pid) => {
			try {
				process.kill(pid, 0);
				return true;
			} catch (error) {
				return (error as { code?: string }).code === "EPERM";
			}
		},
		spawn: (command, args, cwd): ChildProcessLike => {
			const child = childProcess.spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
			const lines: ((line: string) => void)[] = [];
			const exits: ((code: number | null) => void)[] = [];
			const forward = (chunk: Buffer): void => {
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
					response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
					response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
				});
				request.on("timeout", () => request.destroy(new Error("timed out")));
				request.on("error", (error) => resolve({ status: 0, body: error.message }));
			}),
	};
}
