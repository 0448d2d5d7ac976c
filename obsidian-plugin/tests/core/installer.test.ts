// *Install* (issue 39): uv's archive for this platform, checked against its SHA-256 before
// anything runs; with a uv installed, only `uv tool install`; every line kept for Details.
import { describe, expect, it } from "vitest";
import type { ChildProcessLike, Host } from "../../src/core/host";
import { Installation, installPlan, planLines } from "../../src/core/installer";
import { parseChecksum, uvArchive, uvTarget, UV_SHA256, UV_VERSION } from "../../src/core/uv-release";

const WHEEL = "https://github.com/o/r/releases/download/0.1.0/obsidian_ai_bridge-0.1.0-py3-none-any.whl";

/** A machine with files at `files` (path → text); what it ran and downloaded is recorded. */
function machine(files: Record<string, string>, exits: Record<string, number> = {}) {
	const ran: string[] = [];
	const downloaded: string[] = [];
	const host: Host = {
		platform: "linux",
		arch: "x64",
		env: { PATH: "/usr/bin" },
		homedir: () => "/home/u",
		join: (...parts) => parts.join("/").replace(/\/+/g, "/"),
		basename: (p) => p.split("/").pop() ?? "",
		realpath: async (p) => p,
		sha256Hex: async () => "",
		readText: async (p) => files[p] ?? null,
		isExecutable: async (p) => p in files,
		process: async () => ({ state: "gone", command: null }),
		probe: async () => ({ status: 0, body: "" }),
		download: async (url, path) => {
			downloaded.push(url);
			files[path] = "archive";
		},
		fileSha256: async () => files.sha256 ?? "",
		spawn: (command, args): ChildProcessLike => {
			const line = [command, ...args].join(" ");
			ran.push(line);
			if (command === "tar") files["/vault/.obsidian/plugins/p/uv/0.9.10/uv-x86_64-unknown-linux-gnu/uv"] = "uv";
			return {
				pid: 1,
				kill: () => undefined,
				onExit: (listener) => void Promise.resolve().then(() => listener(exits[command.split("/").pop() ?? ""] ?? 0)),
				onOutput: (listener) => listener(`${command.split("/").pop()} says hello`),
			};
		},
	};
	return { host, ran, downloaded };
}

const timers = { setTimeout: () => 0 };

describe("uv's release archive", () => {
	it("is named as uv names it, for each platform the plugin knows, with a pinned SHA-256", () => {
		expect(uvTarget("linux", "x64")).toBe("x86_64-unknown-linux-gnu");
		expect(uvTarget("darwin", "arm64")).toBe("aarch64-apple-darwin");
		expect(uvTarget("win32", "x64")).toBe("x86_64-pc-windows-msvc");
		expect(uvTarget("linux", "ia32")).toBeNull();
		expect(uvTarget("freebsd", "x64")).toBeNull();
		for (const platform of ["linux", "darwin", "win32"]) {
			for (const arch of ["x64", "arm64"]) expect(UV_SHA256[uvTarget(platform, arch) ?? ""]).toMatch(/^[0-9a-f]{64}$/);
		}
		const archive = uvArchive("x86_64-unknown-linux-gnu", {});
		expect(archive.url).toBe(`https://github.com/astral-sh/uv/releases/download/${UV_VERSION}/uv-x86_64-unknown-linux-gnu.tar.gz`);
		expect(archive.sha256).toBe(UV_SHA256["x86_64-unknown-linux-gnu"]);
		expect(archive.uv).toEqual(["uv-x86_64-unknown-linux-gnu", "uv"]);
		expect(uvArchive("x86_64-pc-windows-msvc", {}).name).toBe("uv-x86_64-pc-windows-msvc.zip");
	});

	it("comes from AI_BRIDGE_RELEASE_HOST with its checksum file in place of the pin (tests only)", () => {
		const archive = uvArchive("aarch64-apple-darwin", { AI_BRIDGE_RELEASE_HOST: "http://127.0.0.1:9/" });
		expect(archive.url).toBe(`http://127.0.0.1:9/astral-sh/uv/releases/download/${UV_VERSION}/uv-aarch64-apple-darwin.tar.gz`);
		expect(archive.sha256).toBeNull();
		expect(parseChecksum(`${"AB".repeat(32)}  uv-aarch64-apple-darwin.tar.gz\n`)).toBe("ab".repeat(32));
		expect(parseChecksum("not found")).toBeNull();
	});
});

describe("Install", () => {
	it("with no uv, says it downloads uv from GitHub, and runs nothing until clicked", async () => {
		const { host, ran, downloaded } = machine({});
		const plan = await installPlan(host, WHEEL);
		expect(plan.uv).toBeNull();
		expect(planLines(plan)[0]).toBe(
			`uv ${UV_VERSION}, the installer (about 20 MB), from github.com/astral-sh/uv; checked against its SHA-256 and kept in this plugin's folder`,
		);
		expect(planLines(plan)[1]).toBe("the assistant's server (obsidian-ai-bridge), from github.com (this plugin's release)");
		expect(ran).toEqual([]);
		expect(downloaded).toEqual([]);
	});

	it("fetches uv, checks it, unpacks it in the plugin's folder and installs the wheel with it", async () => {
		const { host, ran } = machine({ sha256: UV_SHA256["x86_64-unknown-linux-gnu"] ?? "" });
		const installation = new Installation(host, "/vault/.obsidian/plugins/p", "/vault", timers);
		expect(await installation.run(await installPlan(host, WHEEL))).toBe(true);
		const dir = "/vault/.obsidian/plugins/p/uv/0.9.10";
		expect(ran).toEqual([`tar -xf ${dir}/uv-x86_64-unknown-linux-gnu.tar.gz -C ${dir}`, `${dir}/uv-x86_64-unknown-linux-gnu/uv tool install ${WHEEL}`]);
		expect(installation.state.phase).toBe("done");
		expect(installation.state.log).toContain("uv says hello");
	});

	it("runs nothing from an archive whose SHA-256 is not the pinned one", async () => {
		const { host, ran } = machine({ sha256: "0".repeat(64) });
		const installation = new Installation(host, "/p", "/vault", timers);
		expect(await installation.run(await installPlan(host, WHEEL))).toBe(false);
		expect(ran).toEqual([]);
		expect(installation.state.failure?.message).toBe(
			"The downloaded uv does not match its checksum, so nothing was run: Install again later, or use the command below.",
		);
		expect(installation.state.failure?.details).toContain(`expected ${UV_SHA256["x86_64-unknown-linux-gnu"]}`);
	});

	it("uses the uv installed on this computer, and says what failed with uv's output behind Details", async () => {
		const { host, ran, downloaded } = machine({ "/usr/bin/uv": "uv" }, { uv: 2 });
		const installation = new Installation(host, "/p", "/vault", timers);
		const plan = await installPlan(host, WHEEL);
		expect(planLines(plan)).toHaveLength(2);
		expect(await installation.run(plan)).toBe(false);
		expect(downloaded).toEqual([]);
		expect(ran).toEqual([`/usr/bin/uv tool install ${WHEEL}`]);
		expect(installation.state.failure?.message).toBe("uv could not install the assistant's server (see Details): check the connection, then Install again.");
		expect(installation.state.failure?.details).toContain("uv says hello");
	});
});
