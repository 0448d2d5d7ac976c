// MCP servers whose tools the assistant may call ([mcp.servers.NAME] on the server): the
// settings tab's add form turned into a settings/update change, and one line per server.
import type { McpServerInfo, McpServerParams } from "./protocol";

/** The server's rule for a name: NAME__tool must stay within 64 characters. */
export const MCP_SERVER_NAME = /^[a-z0-9_-]{1,20}$/;

/** Words of a command line: whitespace separates, "double" or 'single' quotes group. */
export function splitArgs(line: string): string[] {
	const words: string[] = [];
	for (const match of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3] ?? "");
	return words;
}

/**
 * The server a user typed: a URL (streamable HTTP) or a command line (stdio, its first word the
 * program). An error sentence instead when the name or the target cannot work.
 */
export function mcpServerFrom(name: string, target: string): { name: string; server: McpServerParams } | string {
	const cleanName = name.trim();
	if (!MCP_SERVER_NAME.test(cleanName)) return "Name the server with 1 to 20 lowercase letters, digits, '-' or '_'.";
	const text = target.trim();
	if (/^https?:\/\//.test(text)) return { name: cleanName, server: { url: text } };
	const [command, ...args] = splitArgs(text);
	if (!command) return "Give the command that starts the server, or its http(s) URL.";
	return { name: cleanName, server: { command, args } };
}

/** One line for the list: what runs, and how its calls are approved. */
export function describeMcpServer(info: McpServerInfo): string {
	const target = info.url ?? [info.command ?? "", ...info.args].join(" ");
	const secrets = Object.keys(info.url ? info.headers : info.env);
	const extra = secrets.length > 0 ? ` (${info.url ? "headers" : "env"}: ${secrets.join(", ")})` : "";
	const approval = { ask: "asks before each call", allow: "runs without asking", deny: "never runs" }[info.permission];
	return `${target}${extra}; ${approval}.`;
}
