// The install card's command (issue 31): one that works before the package is on PyPI, and
// after. The wheel attached to the plugin's own release, named by the plugin's version and the
// `repository` of package.json; the registry name alone once that version is on PyPI.
import packageJson from "../../package.json";

export const SERVER_PROGRAM = "obsidian-ai-bridge";
/** Where releases live; a test points it at a local web server (AI_BRIDGE_RELEASE_HOST). */
export const RELEASE_HOST = "https://github.com";
/** The environment variable that replaces RELEASE_HOST, for tests only: with it set, the
 * plugin never asks the package registry either. */
export const RELEASE_HOST_VARIABLE = "AI_BRIDGE_RELEASE_HOST";

/** `owner/name` from package.json's `repository` (a string or `{ url }`, with or without
 * `https://github.com/`, `git+`, `github:` or `.git`). */
export function repositoryPath(repository: unknown): string {
	const url = typeof repository === "string" ? repository : (repository as { url?: unknown } | null)?.url;
	const raw = typeof url === "string" ? url : "";
	const match = /^(?:git\+)?(?:https?:\/\/github\.com\/|git@github\.com:|github:)?([\w.-]+\/[\w.-]+?)(?:\.git)?\/?$/.exec(raw.trim());
	if (!match?.[1]) throw new Error(`package.json's repository ${JSON.stringify(raw)} does not name a GitHub repository.`);
	return match[1];
}

/** The plugin's version (package.json; `make version` keeps manifest.json the same). */
export const PLUGIN_VERSION: string = (packageJson as { version: string }).version;

/** The plugin's repository (package.json), as `owner/name`. */
export const REPOSITORY = repositoryPath((packageJson as { repository?: unknown }).repository);

/** The wheel's file name, as `uv build` names it. */
export function wheelName(version: string): string {
	return `${SERVER_PROGRAM.replace(/-/g, "_")}-${version}-py3-none-any.whl`;
}

/** The wheel attached to release `version` of `repository`. */
export function wheelUrl(version: string, repository = REPOSITORY, host = RELEASE_HOST): string {
	return `${host.replace(/\/+$/, "")}/${repository}/releases/download/${version}/${wheelName(version)}`;
}

/** What the install card offers: the one command, and the second choice. */
export interface InstallCommands {
	/** What is installed: the release's wheel URL, or the registry name. */
	source: string;
	command: string;
	alternative: string;
}

/** The commands that install from `source`: a wheel's URL, or the registry name. */
export function installCommands(source: string): InstallCommands {
	return { source, command: `uv tool install ${source}`, alternative: `pipx install ${source}` };
}

/** Where the install comes from: the release's wheel, or the name once PyPI has `version`.
 * `env` may point the release host elsewhere (tests); then the registry is never asked. */
export async function installSource(
	env: Record<string, string | undefined>,
	onRegistry: (url: string) => Promise<boolean>,
	version = PLUGIN_VERSION,
): Promise<string> {
	const host = env[RELEASE_HOST_VARIABLE];
	if (host) return wheelUrl(version, REPOSITORY, host);
	try {
		if (await onRegistry(registryUrl(version))) return SERVER_PROGRAM;
	} catch {
		// The registry cannot be asked (offline): the release's wheel works either way.
	}
	return wheelUrl(version);
}

/** PyPI's JSON for one version: it answers 200 once that version is published. */
export function registryUrl(version: string): string {
	return `https://pypi.org/pypi/${SERVER_PROGRAM}/${version}/json`;
}
