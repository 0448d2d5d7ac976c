// The settings tab: how to reach the server (this computer's, found and started here; or another
// computer's, by address and client key), and the server's own settings (provider, models per
// purpose, keys) changed over the wire, for the server on this computer only. Keys are sent to the server,
// which checks and stores them; they are never saved in this plugin's data.json.
import {
  Component,
  Notice,
  Platform,
  PluginSettingTab,
  Setting,
  type App,
} from "obsidian";
import type { BridgeClient } from "../core/client";
import {
  KEYED_PROVIDERS,
  PROVIDER_NAMES,
  PROVIDER_PROFILES,
  providerLabel,
  speaksCompatible,
  type ModelInfoModel,
  type ProviderName,
  type RuntimeInfo,
  type SettingsResult,
} from "../core/protocol";
import {
  ADDRESS_PLACEHOLDER,
  addressError,
  groupedFingerprint,
  isEncrypted,
  KEY_PLACEHOLDER,
  PAIR_COMMAND,
  PAIRING_PLACEHOLDER,
  parsePairing,
  SETUP_COMMAND,
  type ServerChoice,
} from "../core/remote";
import { isEmbeddingModel, sameEmbedder } from "../core/words";
import { filterModels } from "../core/model-picker";
import type { Assistant } from "./assistant";
import { describeBots } from "../core/chat-bots";
import { showMcpServers } from "./mcp-servers";

/** Embedders offered besides the ones the server's model list names. */
const KNOWN_EMBEDDERS: Record<string, string> = {
  "ollama:nomic-embed-text": "Ollama: nomic-embed-text (local, free)",
  "openai:text-embedding-3-small": "OpenAI: text-embedding-3-small (paid)",
};

type Purpose = "chat" | "fast" | "deep";

/** An OpenAI-compatible hosted service's address (a URL, not UI text to sentence-case). */
export const SERVICE_EXAMPLE = "https://openrouter.ai/api/v1";
const SERVICE_HINT = `For a hosted service that speaks OpenAI's API (OpenRouter, a company gateway), its address, e.g. ${SERVICE_EXAMPLE}; saved with the OpenAI API key below. Empty: OpenAI itself.`;

/** One settings row: rendered by display(), listed by getSettingDefinitions(). */
interface Row {
  name: string;
  desc?: string;
  render: (setting: Setting) => void;
}

/** Past this many models a list gets a filter field. */
const LONG_LIST = 20;

export class AssistantSettingTab extends PluginSettingTab {
  /** DOM listeners of what display() drew, removed when the tab hides or redraws. */
  private events = new Component();

  constructor(
    app: App,
    private readonly plugin: Assistant,
  ) {
    super(app, plugin);
  }

  override display(): void {
    this.draw();
  }

  override hide(): void {
    this.events.unload();
  }

  private draw(): void {
    const { containerEl } = this;
    this.events.unload();
    this.events = new Component();
    this.events.load();
    containerEl.empty();
    for (const row of this.rows()) {
      const setting = new Setting(containerEl).setName(row.name);
      if (row.desc) setting.setDesc(row.desc);
      row.render(setting);
    }
    // The server's own settings follow their heading as siblings (never inside its row); a
    // server on another computer is set up there (a client key may not change them).
    if (!this.plugin.remote())
      void this.showServerSettings(
        containerEl.createDiv({ cls: "aib-server-settings" }),
      );
  }

  /** The same rows for Obsidian 1.13's settings search (older versions call display()). */
  override getSettingDefinitions(): Row[] {
    return this.rows();
  }

  private rows(): Row[] {
    const settings = this.plugin.settings;
    const save = (): Promise<void> => this.plugin.saveSettings();
    const choice = this.plugin.serverChoice();
    const rows: Row[] = [
      { name: "Server", render: (s) => void s.setHeading() },
      this.serverRow(choice),
    ];
    if (choice.mode === "another-computer")
      rows.push(...this.remoteRows(choice));
    else
      rows.push(
        {
          name: "Start the server",
          desc: "When no server runs for this vault, start it (and stop it with Obsidian).",
          render: (s) =>
            void s.addToggle((toggle) =>
              toggle.setValue(settings.autoStart).onChange(async (value) => {
                settings.autoStart = value;
                await save();
              }),
            ),
        },
        {
          name: "Server command",
          desc: `Leave empty: the plugin finds the installed server by itself. To start it another way, type its command ({vault} stands for this vault's folder), e.g. ${this.plugin.exampleCommand()}`,
          render: (s) =>
            void s.addText((text) =>
              text.setValue(settings.serverCommand).onChange(async (value) => {
                // Typed on this computer: it may run here (a synced one is asked about).
                await this.plugin.setServerCommand(value.trim(), true);
              }),
            ),
        },
      );
    rows.push(
      { name: "Writes", render: (s) => void s.setHeading() },
      {
        name: "Confirm writes",
        desc: "Review every change as a diff, or let the assistant create new notes without asking (changes to existing notes are always reviewed).",
        render: (s) =>
          void s.addDropdown((dropdown) =>
            dropdown
              .addOptions({
                review: "Review every write",
                "allow-create": "Create new notes without asking",
              })
              .setValue(settings.confirmPolicy)
              .onChange(async (value) => {
                settings.confirmPolicy =
                  value === "allow-create" ? "allow-create" : "review";
                await save();
              }),
          ),
      },
      {
        name: "Model and keys",
        desc: this.plugin.remote()
          ? `Set on the computer the server runs on: in its plugin, or with ${SETUP_COMMAND} there.`
          : "Provider, models per purpose and API keys, kept by the server.",
        render: (s) => void s.setHeading(),
      },
    );
    return rows;
  }

  /** *Server*: this computer or another one (on a phone only another one). */
  private serverRow(choice: ServerChoice): Row {
    if (Platform.isMobile) {
      return {
        name: "Server",
        desc: "Another computer: the server runs there (a phone cannot run it), reached by its address and a client key.",
        render: () => undefined,
      };
    }
    return {
      name: "Server",
      desc: "This computer finds, starts and stops the server here; another computer's server is reached by its address and a client key.",
      render: (s) =>
        void s.addDropdown((dropdown) =>
          dropdown
            .addOptions({
              "this-computer": "This computer",
              "another-computer": "Another computer",
            })
            .setValue(choice.mode)
            .onChange((value) => {
              this.plugin.setServerChoice({
                ...choice,
                mode:
                  value === "another-computer"
                    ? "another-computer"
                    : "this-computer",
              });
              this.draw();
            }),
        ),
    };
  }

  /** *Another computer*: a pairing text fills the address and the key, kept on this device only. */
  private remoteRows(choice: ServerChoice): Row[] {
    const update = (changes: Partial<ServerChoice>): void => {
      this.plugin.setServerChoice({
        ...this.plugin.serverChoice(),
        ...changes,
      });
      this.draw();
    };
    const problem = choice.address ? addressError(choice.address) : null;
    const rows: Row[] = [
      {
        name: "Pairing text",
        desc: `Paste what ${PAIR_COMMAND} prints on the server's computer (or scan its QR code with this device): it fills the address and the key.`,
        render: (s) =>
          void s.addText((text) => {
            text.setPlaceholder(PAIRING_PLACEHOLDER);
            this.events.registerDomEvent(text.inputEl, "input", () => {
              const typed = text.getValue().trim();
              if (!typed) return;
              const pairing = parsePairing(typed);
              if (pairing) update(pairing);
              else
                s.setDesc(
                  `This is not a pairing text: it starts with ${PAIRING_PLACEHOLDER.slice(0, -1)} and names an address and a key.`,
                );
            });
          }),
      },
      {
        name: "Address",
        desc:
          problem ??
          (choice.address && !isEncrypted(choice.address)
            ? "Not encrypted: use http:// only through a tunnel that encrypts (Tailscale, WireGuard)."
            : "Where the other computer's server listens, e.g. https://192.168.1.20:8443 (pairing fills it in). Kept on this device only."),
        render: (s) =>
          void s.addText((text) => {
            text.setPlaceholder(ADDRESS_PLACEHOLDER).setValue(choice.address);
            this.events.registerDomEvent(text.inputEl, "change", () =>
              update({ address: text.getValue().trim() }),
            );
          }),
      },
      {
        name: "Client key",
        desc: "The key the other computer made for this device (pairing fills it in). Kept on this device only.",
        render: (s) =>
          void s.addText((text) => {
            text.inputEl.type = "password";
            text.setPlaceholder(KEY_PLACEHOLDER).setValue(choice.key);
            this.events.registerDomEvent(text.inputEl, "change", () =>
              update({ key: text.getValue().trim() }),
            );
          }),
      },
    ];
    if (choice.fingerprint) {
      rows.push({
        name: "Certificate fingerprint",
        desc: `${groupedFingerprint(choice.fingerprint)}: the same as the other computer printed when it paired this device.`,
        render: () => undefined,
      });
    }
    return rows;
  }

  private async showServerSettings(el: HTMLElement): Promise<void> {
    let current: SettingsResult;
    try {
      current = await this.plugin.client.call("settings/get", {});
    } catch (error) {
      el.createDiv({
        cls: "setting-item-description",
        text: `Connect to the server to change the model: ${(error as Error).message}`,
      });
      return;
    }
    let models: ModelInfoModel[] = [];
    try {
      models = (await this.plugin.client.call("models/list", {})).models;
    } catch {
      models = [];
    }
    // Embedding models search by meaning (below); they never answer a chat.
    const chatModels = models.filter((model) => !isEmbeddingModel(model));
    const runtimes = await detectRuntimes(this.plugin.client);
    new Setting(el)
      .setName("Provider")
      .setDesc(`Saved by the server in ${current.configFile}.`)
      .addDropdown((dropdown) =>
        dropdown
          .addOptions({
            "": "None",
            ...Object.fromEntries(
              PROVIDER_NAMES.map((name) => [
                name,
                shownProvider(name, runtimes),
              ]),
            ),
          })
          .setValue(current.provider ?? "")
          .onChange(
            (value) =>
              void this.saveServerSetting(
                { provider: value === "" ? null : value },
                el,
              ),
          ),
      );
    const purposes: [Purpose, string, string][] = [
      ["chat", "Chat model", "Conversations."],
      [
        "fast",
        "Fast model",
        "Small jobs such as titles; the chat model when empty.",
      ],
      [
        "deep",
        "Deep model",
        "For the hardest questions; the chat model when empty.",
      ],
    ];
    for (const [purpose, name, desc] of purposes) {
      const setting = new Setting(el).setName(name).setDesc(desc);
      const value = current.models[purpose] ?? "";
      if (chatModels.length > 0) {
        const listed = chatModels.map((model) => ({ id: model.id, label: model.displayName ?? model.id }));
        let fill: (query: string) => void = () => undefined;
        // A long list (an OpenRouter-sized one) gets the switcher's filter: type to narrow it.
        if (listed.length > LONG_LIST) {
          setting.addText((text) => {
            text.setPlaceholder("Type to filter");
            text.inputEl.addClass("aib-model-filter-setting");
            this.events.registerDomEvent(text.inputEl, "input", () => fill(text.getValue()));
          });
        }
        setting.addDropdown((dropdown) => {
          fill = (query) => {
            const chosen = dropdown.getValue() || value;
            dropdown.selectEl.empty();
            dropdown.addOption("", purpose === "chat" ? "Provider default" : "Same as chat");
            const shown = filterModels(listed, query);
            for (const model of shown) dropdown.addOption(model.id, model.label);
            if (chosen && !shown.some((m) => m.id === chosen)) {
              dropdown.addOption(chosen, listed.find((m) => m.id === chosen)?.label ?? chosen);
            }
            dropdown.setValue(chosen);
          };
          fill("");
          dropdown
            .setValue(value)
            .onChange(
              (id) =>
                void this.saveServerSetting(
                  { models: { [purpose]: id || null } },
                  el,
                ),
            );
        });
      } else {
        setting.addText((text) => {
          text.setValue(value);
          this.events.registerDomEvent(text.inputEl, "change", () => {
            void this.saveServerSetting(
              { models: { [purpose]: text.getValue().trim() || null } },
              el,
              false,
            );
          });
        });
      }
    }
    embedderSetting(
      el,
      current.embedder ?? null,
      current.provider ?? null,
      models,
      runtimes,
      (embedder) => void this.saveServerSetting({ embedder }, el),
    );
    new Setting(el)
      .setName("Keep conversations as notes")
      .setDesc(
        "A vault folder where each conversation is saved as a note after every turn; empty keeps them only in the server's store.",
      )
      .addText((text) => {
        text.setValue(current.conversationsFolder ?? "");
        this.events.registerDomEvent(text.inputEl, "change", () => {
          void this.saveServerSetting(
            { conversationsFolder: text.getValue().trim() || null },
            el,
            false,
          );
        });
      });
    // OpenAI-compatible hosted services (OpenRouter, a company gateway): their address goes
    // with the OpenAI key below (a key goes only where it was sent with).
    let typedUrl = current.provider === "openai" ? (current.baseUrl ?? "") : "";
    new Setting(el)
      .setName("OpenAI-compatible service")
      .setDesc(SERVICE_HINT)
      .setClass("aib-wide-setting")
      .addText((text) => {
        text
          .setPlaceholder(SERVICE_EXAMPLE)
          .setValue(typedUrl)
          .onChange((value) => (typedUrl = value.trim()));
      });
    for (const provider of KEYED_PROVIDERS) {
      const field = `${provider}ApiKey` as const;
      const name = `${PROVIDER_PROFILES[provider].label} API key`;
      const masked = current.keys[provider];
      let typed = "";
      new Setting(el)
        .setName(name)
        .setDesc(
          masked
            ? `Stored by the server: ${masked}`
            : "Not set. It is sent to the server, checked and stored there, never in the vault.",
        )
        .setClass("aib-wide-setting")
        .addText((text) => {
          text.inputEl.type = "password";
          text
            .setPlaceholder("Paste a key")
            .onChange((value) => (typed = value.trim()));
        })
        .addButton((button) =>
          button.setButtonText("Save key").onClick(() => {
            if (!typed) return;
            const service =
              speaksCompatible(provider) && typedUrl
                ? { provider, baseUrl: typedUrl }
                : {};
            void this.saveServerSetting({ ...service, [field]: typed }, el);
          }),
        );
    }
    showMcpServers(el, this.plugin, current.mcpServers, () => {
      el.empty();
      void this.showServerSettings(el);
    });
    const health = await this.plugin.client
      .call("health", {})
      .catch(() => null);
    new Setting(el)
      .setName("Chat apps")
      .setDesc(
        "Bots the server runs so you can chat with your vault from your phone.",
      )
      .setHeading();
    for (const bot of describeBots(health?.bots))
      new Setting(el).setName(bot.name).setDesc(bot.description);
  }

  private async saveServerSetting(
    changes: Record<string, unknown>,
    el: HTMLElement,
    redraw = true,
  ): Promise<void> {
    try {
      await this.plugin.client.call("settings/update", changes);
      new Notice("Saved.");
    } catch (error) {
      new Notice((error as Error).message);
    }
    if (redraw) {
      el.empty();
      await this.showServerSettings(el);
    }
  }
}

/** A provider's name in the list, saying when the server found it running on this machine. */
function shownProvider(name: ProviderName, runtimes: RuntimeInfo[]): string {
  const running = runtimes.some(
    (runtime) => runtime.kind === name && runtime.reachable,
  );
  return running
    ? `${providerLabel(name)} (running here)`
    : providerLabel(name);
}

/** The local runtimes the server finds (runtimes/detect); none when it cannot say. */
async function detectRuntimes(client: BridgeClient): Promise<RuntimeInfo[]> {
  try {
    return (await client.call("runtimes/detect", {})).runtimes;
  } catch {
    return [];
  }
}

/** The embedder picked from a list: words only, the embedding models of a running Ollama, the
 * known ones, and the embedding models the server's provider lists. */
function embedderSetting(
  el: HTMLElement,
  current: string | null,
  provider: string | null,
  models: ModelInfoModel[],
  runtimes: RuntimeInfo[],
  save: (embedder: string | null) => void,
): void {
  const options: Record<string, string> = { "": "None: search by words only" };
  // One entry per model: Ollama's `name` and `name:latest` are the same model.
  const add = (spec: string, label: string, replace = false): void => {
    const same = Object.keys(options).find(
      (key) => key !== "" && sameEmbedder(key, spec),
    );
    if (same === undefined) options[spec] = label;
    else if (replace) options[same] = label;
  };
  if (current) add(current, current);
  for (const runtime of runtimes) {
    if (runtime.kind !== "ollama" || !runtime.reachable) continue;
    for (const model of runtime.models) {
      if (model.embedding)
        add(
          `ollama:${model.id}`,
          `Ollama: ${model.id} (running here, free)`,
          true,
        );
    }
  }
  for (const [spec, label] of Object.entries(KNOWN_EMBEDDERS)) add(spec, label);
  for (const model of models) {
    if (provider && isEmbeddingModel(model))
      add(
        `${provider}:${model.id}`,
        `${provider}: ${model.displayName ?? model.id}`,
        true,
      );
  }
  new Setting(el)
    .setName("Semantic search")
    .setDesc(
      "The embedder for search by meaning and related notes; a local one is free and keeps your notes on this machine.",
    )
    .addDropdown((dropdown) =>
      dropdown
        .addOptions(options)
        .setValue(current ?? "")
        .onChange((value) => save(value === "" ? null : value)),
    );
}
