// The settings tab's "MCP servers" section: list the servers whose tools the assistant may call
// (as NAME__tool, each call approved like a write), add one, remove one; kept by the server.
import { Notice, Setting } from "obsidian";
import { describeMcpServer, mcpServerFrom } from "../core/mcp-servers";
import type { McpServerInfo, SettingsUpdateParams } from "../core/protocol";
import type { Assistant } from "./assistant";

export function showMcpServers(el: HTMLElement, plugin: Assistant, servers: McpServerInfo[], redraw: () => void): void {
	new Setting(el)
		.setName("Tool servers")
		.setDesc("Programs that give the assistant more tools. It asks you before each use, as before a write. Their passwords and options live in the server's settings file.")
		.setHeading();
	const save = async (changes: SettingsUpdateParams["mcpServers"]): Promise<void> => {
		try {
			await plugin.client.call("settings/update", { mcpServers: changes });
			new Notice("Saved.");
			redraw();
		} catch (error) {
			new Notice((error as Error).message);
		}
	};
	for (const server of servers) {
		new Setting(el)
			.setName(server.name)
			.setDesc(describeMcpServer(server))
			.addButton((button) => button.setButtonText("Remove").onClick(() => void save({ [server.name]: null })));
	}
	let name = "";
	let target = "";
	new Setting(el)
		.setName("Add a server")
		.setDesc("A short name, then the command that starts the server or its web address.")
		.addText((text) => text.setPlaceholder("Name").onChange((value) => (name = value)))
		.addText((text) => text.setPlaceholder("Command or URL").onChange((value) => (target = value)))
		.addButton((button) =>
			button.setButtonText("Add").onClick(() => {
				const parsed = mcpServerFrom(name, target);
				if (typeof parsed === "string") new Notice(parsed);
				else void save({ [parsed.name]: parsed.server });
			}),
		);
}
