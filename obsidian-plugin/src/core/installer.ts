// The install card's *Install* (issue 39): the plugin installs its server itself. With a uv on
// this computer it runs `uv tool install <source>`; without one it first fetches uv's release
// archive for this platform (core/uv-release.ts), checks its SHA-256 before anything runs, and
// unpacks it in the plugin's folder. Nothing runs before the click; every line the programs
// print is kept for the card's *Details*.
import type { Timers } from "./client";
import { findUv } from "./command-search";
import type { Failure } from "./connector";
import type { Host } from "./host";
import { SERVER_PROGRAM } from "./install";
import { parseChecksum, uvArchive, uvTarget, type UvArchive } from "./uv-release";

/** How long `uv tool install` may take (it may download a Python and every dependency). */
export const INSTALL_MS = 20 * 60_000;

/** What *Install* will do, known before the click (only files are looked at). */
export interface InstallPlan {
	/** The installed uv to use, or null when uv's archive is fetched first. */
	uv: string | null;
	/** uv's archive for this platform (null with a uv installed, or for a platform uv has no build for). */
	archive: UvArchive | null;
	/** What `uv tool install` installs: the release's wheel URL, or the registry name. */
	source: string;
}

export async function installPlan(host: Host, source: string): Promise<InstallPlan> {
	const uv = await findUv(host);
	const target = uv === null ? uvTarget(host.platform, host.arch) : null;
	return { uv, archive: target === null ? null : uvArchive(target, host.env), source };
}

/** The host part of a URL, as the card names where a download comes from. */
export function hostOf(url: string): string {
	try {
		return new URL(url).host;
	} catch {
		return url;
	}
}

/** The card's list of what is downloaded, from where, one line each. */
export function planLines(plan: InstallPlan): string[] {
	const lines: string[] = [];
	if (plan.uv === null && plan.archive) {
		lines.push(
			`uv ${plan.archive.version}, the installer (about 20 MB), from ${hostOf(plan.archive.url)}/astral-sh/uv; checked against its SHA-256 and kept in this plugin's folder`,
		);
	}
	const server = plan.source.includes("/") ? `${hostOf(plan.source)} (this plugin's release)` : "pypi.org";
	lines.push(`the assistant's server (${SERVER_PROGRAM}), from ${server}`);
	lines.push("the packages it needs from pypi.org, and a Python if this computer has none uv can use");
	return lines;
}

export type InstallPhase = "idle" | "running" | "failed" | "done";

export interface InstallState {
	phase: InstallPhase;
	/** The progress line: the step, or the last line a program printed. */
	step: string;
	/** Everything printed, for *Details*. */
	log: string[];
	failure: Failure | null;
}

/** One *Install*, from the click to its end; the card listens to its state. */
export class Installation {
	state: InstallState = { phase: "idle", step: "", log: [], failure: null };
	private readonly listeners = new Set<() => void>();

	constructor(
		private readonly host: Host,
		/** The plugin's folder: uv's archive is kept in `<folder>/uv/<version>/`. */
		private readonly folder: string,
		/** Where `uv tool install` runs (the vault's folder: one that exists). */
		private readonly cwd: string,
		private readonly timers: Pick<Timers, "setTimeout">,
	) {}

	subscribe(listener: () => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	private set(change: Partial<InstallState>): void {
		this.state = { ...this.state, ...change };
		for (const listener of this.listeners) listener();
	}

	private step(step: string): void {
		this.set({ step, log: [...this.state.log, step] });
	}

	private output(line: string): void {
		this.set({ step: line.trim(), log: [...this.state.log, line] });
	}

	/** Run the install (once at a time); true when the server's command is installed. */
	async run(plan: InstallPlan): Promise<boolean> {
		if (this.state.phase === "running") return false;
		this.set({ phase: "running", step: "", log: [], failure: null });
		let failure: Failure | null;
		try {
			failure = await this.install(plan);
		} catch (error) {
			failure = { message: `The install stopped: ${(error as Error).message}`, details: "" };
		}
		const details = failure?.details || this.state.log.join("\n");
		if (failure) this.set({ phase: "failed", failure: { message: failure.message, details } });
		else this.set({ phase: "done", step: "The assistant's server is installed; starting it…" });
		return failure === null;
	}

	private async install(plan: InstallPlan): Promise<Failure | null> {
		let uv = plan.uv;
		if (uv === null) {
			if (plan.archive === null) {
				return {
					message: `uv has no build for this computer (${this.host.platform} ${this.host.arch}): install uv by hand, then Check again.`,
					details: "",
				};
			}
			const fetched = await this.fetchUv(plan.archive);
			if (typeof fetched !== "string") return fetched;
			uv = fetched;
		}
		this.step(`Installing the assistant's server with uv tool install ${plan.source}`);
		const code = await this.runStreaming([uv, "tool", "install", plan.source], this.cwd);
		if (code === 0) return null;
		return {
			message: code === null
				? "uv did not finish installing the assistant's server within 20 minutes (see Details): Install again, or use the command below."
				: "uv could not install the assistant's server (see Details): check the connection, then Install again.",
			details: "",
		};
	}

	/** Download, check and unpack uv's archive: the path of its `uv`, or what failed. */
	private async fetchUv(archive: UvArchive): Promise<string | Failure> {
		const dir = this.host.join(this.folder, "uv", archive.version);
		const file = this.host.join(dir, archive.name);
		this.step(`Downloading uv ${archive.version} from ${hostOf(archive.url)}…`);
		try {
			await this.host.download(archive.url, file);
		} catch (error) {
			return { message: `Could not download uv from ${hostOf(archive.url)}: ${(error as Error).message} Check the connection, then Install again.`, details: "" };
		}
		let expected = archive.sha256;
		if (expected === null) {
			try {
				await this.host.download(`${archive.url}.sha256`, `${file}.sha256`);
				expected = parseChecksum((await this.host.readText(`${file}.sha256`)) ?? "");
			} catch (error) {
				return { message: `Could not download uv's checksum: ${(error as Error).message}`, details: "" };
			}
		}
		const actual = await this.host.fileSha256(file);
		if (expected === null || actual !== expected) {
			this.step(`SHA-256 of ${archive.name}: ${actual}, expected ${expected ?? "none"}`);
			return {
				message: "The downloaded uv does not match its checksum, so nothing was run: Install again later, or use the command below.",
				details: "",
			};
		}
		this.step(`Checked uv's SHA-256 (${actual.slice(0, 12)}…); unpacking it`);
		const code = await this.runStreaming(["tar", "-xf", file, "-C", dir], dir);
		const uv = this.host.join(dir, ...archive.uv);
		if (code !== 0 || !(await this.host.isExecutable(uv))) {
			return { message: "uv's archive could not be unpacked (see Details): Install again, or use the command below.", details: "" };
		}
		return uv;
	}

	/** Run `argv` in `cwd`, each line it prints shown as it comes: its exit code
	 * (null when it could not start or ran past INSTALL_MS). */
	private runStreaming(argv: string[], cwd: string): Promise<number | null> {
		const [program, ...args] = argv;
		const child = this.host.spawn(program ?? "", args, cwd);
		child.onOutput((line) => this.output(line));
		return new Promise((resolve) => {
			let done = false;
			const finish = (code: number | null): void => {
				if (done) return;
				done = true;
				resolve(code);
			};
			child.onExit(finish);
			this.timers.setTimeout(() => {
				if (done) return;
				child.kill();
				finish(null);
			}, INSTALL_MS);
		});
	}
}
