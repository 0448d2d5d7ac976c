import { describe, expect, it } from "vitest";
import { describeMcpServer, mcpServerFrom, splitArgs } from "../../src/core/mcp-servers";

describe("MCP servers in the settings tab", () => {
	it("splits a command line on spaces, keeping quoted words whole", () => {
		expect(splitArgs(`npx -y "@scope/server x" '--dir=/a b'`)).toEqual(["npx", "-y", "@scope/server x", "--dir=/a b"]);
		expect(splitArgs("   ")).toEqual([]);
	});

	it("turns a command line into a stdio server and a URL into an HTTP one", () => {
		expect(mcpServerFrom(" github ", "npx -y @modelcontextprotocol/server-github")).toEqual({
			name: "github",
			server: { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"] },
		});
		expect(mcpServerFrom("tracker", "http://127.0.0.1:9000/mcp")).toEqual({
			name: "tracker",
			server: { url: "http://127.0.0.1:9000/mcp" },
		});
	});

	it("refuses a name the server would refuse, and an empty target", () => {
		expect(mcpServerFrom("My Server", "x")).toMatch(/lowercase/);
		expect(mcpServerFrom("a".repeat(21), "x")).toMatch(/1 to 20/);
		expect(mcpServerFrom("ok", "  ")).toMatch(/command/);
	});

	it("describes a server by what runs, the names of its secrets and its approval", () => {
		const base = { name: "gh", command: "npx", args: ["-y", "srv"], env: { TOKEN: "ghp_…xy" }, url: null, headers: {} };
		expect(describeMcpServer({ ...base, permission: "ask" })).toBe("npx -y srv (env: TOKEN); asks before each call.");
		expect(describeMcpServer({ ...base, command: null, args: [], env: {}, url: "http://h/mcp", headers: { Authorization: "Bear…" }, permission: "allow" })).toBe(
			"http://h/mcp (headers: Authorization); runs without asking.",
		);
	});
});
