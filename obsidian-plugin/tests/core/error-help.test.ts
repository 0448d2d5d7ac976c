// An error's way out (issue 39): one plain sentence, buttons that lead to the fix, and the
// terminal command only as the last line of Details.
import { describe, expect, it } from "vitest";
import { errorHelp, refusedKey } from "../../src/core/error-help";
import { ErrorCode } from "../../src/core/protocol";
import { RpcError } from "../../src/core/rpc";

const provider = (code: string, message: string, retryable = false): RpcError =>
	new RpcError({ code: ErrorCode.providerError, message, data: { code, retryable, retryAfter: null } });

describe("errorHelp", () => {
	it("sends a refused key to the setup card, the command last behind Details", () => {
		const error = provider("auth_error", "OpenAI refused the key: run `obsidian-ai-bridge setup` or open the setup card.");
		const help = errorHelp(error, false);
		expect(refusedKey(error)).toBe(true);
		expect(help.actions).toEqual(["open-setup", "choose-model"]);
		expect(help.message).not.toContain("`");
		expect(help.details.split("\n")).toEqual([error.message, "In a terminal: obsidian-ai-bridge setup"]);
	});

	it("offers Retry for a local runtime that does not answer, and the connection for a remote one", () => {
		expect(errorHelp(provider("network_error", "connection refused", true), true).actions[0]).toBe("retry");
		const remote = errorHelp(provider("network_error", "connection refused", true), false);
		expect(remote).toEqual({ message: "connection refused", actions: ["retry"], details: "" });
	});

	it("offers another model for one that is not downloaded, and a free one or the settings for a budget reached", () => {
		const missing = errorHelp(provider("invalid_request", "model 'x' not found; download it with `ollama pull x`"), true);
		expect(missing.message).toBe("The model x is not on this computer: choose another model, or download it in the setup card.");
		expect(missing.details.split("\n").pop()).toBe("In a terminal: ollama pull x");
		const budget = errorHelp(new RpcError({ code: ErrorCode.budgetExceeded, message: "The daily budget of $1.00 is used up." }), false);
		expect(budget.actions).toEqual(["choose-model", "settings"]);
	});

	it("keeps any other error's sentence, with no button unless retrying may help", () => {
		expect(errorHelp(new Error("Disconnected."), false)).toEqual({ message: "Disconnected.", actions: [], details: "" });
		expect(errorHelp(provider("overloaded", "Overloaded.", true), false).actions).toEqual(["retry"]);
	});
});
