import { describe, expect, it } from "vitest";
import { describeBots } from "../../src/core/chat-bots";

describe("chat-app bots in the settings tab", () => {
  it("says each configured bot's state in words", () => {
    expect(
      describeBots({
        telegram: "running",
        discord:
          "failed: The bot token was refused (GET /users/@me): paste the token.",
      }),
    ).toEqual([
      {
        name: "Telegram",
        description: "Running: allowed users can chat with your vault.",
      },
      {
        name: "Discord",
        description:
          "Not running. The bot token was refused (GET /users/@me): paste the token.",
      },
    ]);
    expect(describeBots({ telegram: "starting" })).toEqual([
      { name: "Telegram", description: "Starting…" },
    ]);
  });

  it("says how to add one when none is configured (or the server is older)", () => {
    expect(describeBots({})[0]?.description).toMatch(/setup/);
    expect(describeBots(undefined)[0]?.name).toBe("No bots");
  });
});
