// The settings tab's "Chat apps" rows: each bot's state as health reports it
// ("running", "starting", "failed: <sentence>"), in words.

const LABELS: Record<string, string> = {
  telegram: "Telegram",
  discord: "Discord",
};

export interface BotRow {
  name: string;
  description: string;
}

export function describeBots(
  bots: Record<string, string> | undefined,
): BotRow[] {
  const rows = Object.entries(bots ?? {}).map(([name, state]) => ({
    name: LABELS[name] ?? name,
    description:
      state === "running"
        ? "Running: allowed users can chat with your vault."
        : state === "starting"
          ? "Starting…"
          : `Not running. ${state.replace(/^failed:\s*/, "")}`,
  }));
  if (rows.length) return rows;
  return [
    {
      name: "No bots",
      description:
        "Run obsidian-ai-bridge setup to chat from Telegram or Discord, then restart the server.",
    },
  ];
}
