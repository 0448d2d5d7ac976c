// Every error in the panel has a way out (issue 39): a refused or missing key, a local runtime
// that does not answer, a model that is not there, a budget reached. Each gets one plain sentence,
// the buttons that lead to the fix, and, behind *Details*, the server's own words with the
// terminal command as the last line.
import { ErrorCode } from "./protocol";
import { RpcError } from "./rpc";

/** The buttons an error may offer: *Open setup*, *Settings*, *Retry*, *Choose another model*. */
export type ErrorAction = "open-setup" | "settings" | "retry" | "choose-model";

export const ACTION_LABELS: Record<ErrorAction, string> = {
	"open-setup": "Open setup",
	settings: "Settings",
	retry: "Retry",
	"choose-model": "Choose another model",
};

export interface ErrorHelp {
	/** One sentence, with no terminal command in it. */
	message: string;
	actions: ErrorAction[];
	/** The server's message and, last, the command for a terminal ("" when there is none). */
	details: string;
}

/** The provider's error kind (-32010's data.code), or null. */
function providerCode(error: RpcError): string | null {
	const data = error.data as { code?: unknown } | null | undefined;
	return error.code === ErrorCode.providerError && typeof data?.code === "string" ? data.code : null;
}

/** Whether `error` is the provider refusing the API key. */
export function refusedKey(error: Error): boolean {
	return error instanceof RpcError && providerCode(error) === "auth_error";
}

function details(said: string, command: string | null): string {
	return command ? `${said}\nIn a terminal: ${command}` : said;
}

/** What the panel shows for `error`; `local`: the model answering runs on this computer. */
export function errorHelp(error: Error, local: boolean): ErrorHelp {
	const said = error.message;
	if (!(error instanceof RpcError)) return { message: said, actions: [], details: "" };
	const kind = providerCode(error);
	const pull = /`ollama pull ([^`]+)`/.exec(said);
	if (error.code === ErrorCode.budgetExceeded) {
		return {
			message: "The assistant's spending limit is reached: choose a model that runs on this computer (free), or raise the budget in the settings.",
			actions: ["choose-model", "settings"],
			details: details(said, "obsidian-ai-bridge usage"),
		};
	}
	if (kind === "auth_error") {
		return {
			message: "The model provider refused the API key: give a new key in the setup card, or choose another model.",
			actions: ["open-setup", "choose-model"],
			details: details(said, "obsidian-ai-bridge setup"),
		};
	}
	if (pull || (kind === "invalid_request" && /model/i.test(said) && /not (found|exist|listed)|does not (list|exist)|unknown model/i.test(said))) {
		return {
			message: pull ? `The model ${pull[1] ?? ""} is not on this computer: choose another model, or download it in the setup card.` : "The model chosen is not available: choose another model.",
			actions: ["choose-model", "open-setup"],
			details: details(said, pull ? `ollama pull ${pull[1] ?? ""}` : null),
		};
	}
	if ((kind === "network_error" || kind === "timeout") && local) {
		return {
			message: "The model runtime on this computer does not answer: start it (Ollama or LM Studio), then Retry.",
			actions: ["retry", "choose-model", "open-setup"],
			details: details(said, "ollama serve"),
		};
	}
	if (error.code === ErrorCode.invalidParams && /model/i.test(said)) {
		return { message: said, actions: ["choose-model"], details: "" };
	}
	if (/`obsidian-ai-bridge setup`/.test(said)) {
		// A key the server has none of (or not for this address): the setup card gives one.
		return {
			message: "The model needs an API key the assistant does not have: give one in the setup card.",
			actions: ["open-setup", "settings"],
			details: details(said, "obsidian-ai-bridge setup"),
		};
	}
	return { message: said, actions: error.retryable ? ["retry"] : [], details: "" };
}
