// Starting the server as a child process (a configured command with placeholders, or the one
// core/command-search.ts found), and knowing when it is ready (its info file names its pid).
import type { Timers } from "./client";
import type { ChildProcessLike, Host } from "./host";

/** Split a command line into words: spaces separate, quotes group, backslash escapes. */
export function splitCommand(line: string): string[] {
	const words: string[] = [];
	let word = "";
	let quote: string | null = null;
	let started = false;
	for (let i = 0; i < line.length; i++) {
		const ch = line.charAt(i);
		if (quote) {
			if (ch === quote) quote = null;
			else if (ch === "\\" && quote === '"' && i + 1 < line.length) word += line.charAt(++i);
			else word += ch;
		} else if (ch === '"' || ch === "'") {
			quote = ch;
			started = true;
		} else if (ch === "\\" && i + 1 < line.length) {
			word += line.charAt(++i);
			started = true;
		} else if (/\s/.test(ch)) {
			if (started) words.push(word);
			word = "";
			started = false;
		} else {
			word += ch;
			started = true;
		}
	}
	if (quote) throw new Error("The server command has an unclosed quote.");
	if (started) words.push(word);
	return words;
}

/** The command's words with `{vault}` replaced by the vault's folder (one word, spaces and all). */
export function serverArgv(command: string, vaultPath: string): string[] {
	const words = splitCommand(command).map((word) => word.split("{vault}").join(vaultPath));
	if (words.length === 0) throw new Error("The server command is empty.");
	return words;
}

/** The command a user runs by hand: shown when no server command is configured. */
export function suggestedCommand(vaultPath: string): string {
	return `obsidian-ai-bridge serve --vault ${quote(vaultPath)}`;
}

export function quote(word: string): string {
	return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export interface RunningServer {
	process: ChildProcessLike;
	/** The last lines it printed (shown when it fails to start). */
	output: string[];
	exited: Promise<number | null>;
}

/** Start `argv` (a program and its arguments) in the vault's folder. */
export function startServer(host: Host, argv: string[], vaultPath: string): RunningServer {
	const [program, ...args] = argv;
	const child = host.spawn(program ?? "", args, vaultPath);
	const output: string[] = [];
	child.onOutput((line) => {
		output.push(line);
		if (output.length > 20) output.shift();
	});
	const exited = new Promise<number | null>((resolve) => child.onExit(resolve));
	return { process: child, output, exited };
}

/** Run `argv` to its end (at most `timeoutMs`, then it is stopped): its exit code (null when it
 * could not start or was stopped) and the last lines it printed. */
export async function runToEnd(
	host: Host,
	argv: string[],
	cwd: string,
	timers: Pick<Timers, "setTimeout">,
	timeoutMs: number,
): Promise<{ code: number | null; output: string[] }> {
	const run = startServer(host, argv, cwd);
	const timeout = new Promise<null>((resolve) => timers.setTimeout(() => resolve(null), timeoutMs));
	const code = await Promise.race([run.exited, timeout]);
	if (code === null) run.process.kill();
	return { code, output: run.output };
}
