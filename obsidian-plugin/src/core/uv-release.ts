// uv's own release archive for this computer (issue 39): the install card's *Install* fetches it
// when no uv is installed, checks it against the SHA-256 pinned here before anything runs, and
// keeps it in the plugin's folder (never on PATH). With AI_BRIDGE_RELEASE_HOST set (tests only)
// the archive and its checksum (`<url>.sha256`, as uv publishes it) come from that host instead.
import { RELEASE_HOST, RELEASE_HOST_VARIABLE } from "./install";

/** The uv release the plugin fetches. */
export const UV_VERSION = "0.9.10";

/** SHA-256 of each platform's archive of UV_VERSION, as uv's release publishes them. */
export const UV_SHA256: Readonly<Record<string, string>> = {
	"aarch64-apple-darwin": "af171d5a4eb1c502819de32740aa811ff71851b1f5ec2d8bd0dda302ed9554c2",
	"x86_64-apple-darwin": "0e395aad905332bb106f8bb05575ed001de34e9627a4c455a2f6b9475957719e",
	"aarch64-unknown-linux-gnu": "39d80f85f604018281b3e7bf2e1515ab96e8eec5763a2cef9f87d821f66d1758",
	"x86_64-unknown-linux-gnu": "440c4215b171e64061d65d16a23753dd25c29a7f7b1b0446c9e9aed0fa372f27",
	"aarch64-pc-windows-msvc": "6cca85b629d2944f839651e01070dc3de03d238c75a310f28914fcd63ddb9aa6",
	"x86_64-pc-windows-msvc": "bf5a9bb171e90bc612c7acebfb560693d04dba1d1009c297b83da23155218607",
};

/** uv's name for this platform (Node's `process.platform` and `process.arch`), or null when
 * uv publishes no build the plugin knows for it. */
export function uvTarget(platform: string, arch: string): string | null {
	const cpu = arch === "x64" ? "x86_64" : arch === "arm64" ? "aarch64" : null;
	if (cpu === null) return null;
	if (platform === "darwin") return `${cpu}-apple-darwin`;
	if (platform === "linux") return `${cpu}-unknown-linux-gnu`;
	if (platform === "win32") return `${cpu}-pc-windows-msvc`;
	return null;
}

export interface UvArchive {
	target: string;
	version: string;
	/** The archive's file name, as uv's release names it. */
	name: string;
	url: string;
	/** The pinned SHA-256, or null when the test host's `.sha256` file is to be read. */
	sha256: string | null;
	/** Where the programs are inside the archive, relative to the folder it is unpacked in. */
	uv: string[];
}

/** The archive for `target` (from uv's GitHub releases, or the test host). */
export function uvArchive(target: string, env: Record<string, string | undefined>, version = UV_VERSION): UvArchive {
	const windows = target.includes("windows");
	const name = `uv-${target}.${windows ? "zip" : "tar.gz"}`;
	const testHost = env[RELEASE_HOST_VARIABLE];
	const host = (testHost || RELEASE_HOST).replace(/\/+$/, "");
	return {
		target,
		version,
		name,
		url: `${host}/astral-sh/uv/releases/download/${version}/${name}`,
		sha256: testHost ? null : (UV_SHA256[target] ?? null),
		// Windows' zip holds uv.exe at its top; the tar.gz a folder named after the target.
		uv: windows ? ["uv.exe"] : [`uv-${target}`, "uv"],
	};
}

/** The hex digest of a `.sha256` file (`<hex>  <name>`), or null when it holds none. */
export function parseChecksum(text: string): string | null {
	const match = /^\s*([0-9a-fA-F]{64})\b/.exec(text);
	return match?.[1]?.toLowerCase() ?? null;
}
