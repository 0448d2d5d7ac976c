// The panel's model switcher (issue 39): the models a conversation may use, grouped by provider,
// with badges ("can use your notes" / "chat only" / "sees images") and a price per answer where
// known; typing filters by every word. The settings tab's long lists use the same filter.
import type { ModelInfoModel } from "./protocol";
import { isEmbeddingModel, toolSupport } from "./words";

/** What an answer is taken to cost: a typical turn reads this much and writes this much. */
export const TYPICAL_READ = 3000;
export const TYPICAL_WRITTEN = 500;
/** The one wording for a model that runs on this computer (chat, rewrite, terminal, phone). */
export const LOCAL_COST = "free, runs on this computer";

export interface PickerModel {
	/** What chat/send's `model` and settings' models take: the id, or `provider:id` for a
	 * provider other than the chat provider. */
	spec: string;
	id: string;
	label: string;
	/** The group it is listed under: the vendor of an `vendor/model` id, else the provider. */
	group: string;
	badges: string[];
	/** "≈ $0.0120 per answer", LOCAL_COST, or null when the price is not known. */
	price: string | null;
	local: boolean;
}

/** The chat models of one provider, as the switcher lists them. */
export function pickerModels(provider: string, providerLabel: string, models: ModelInfoModel[], local: boolean, chatProvider: boolean): PickerModel[] {
	return models
		.filter((model) => !isEmbeddingModel(model))
		.map((model) => {
			const badges = [toolSupport(model.supportsTools)].filter((badge) => badge !== "");
			if (model.supportsImages) badges.push("sees images");
			const vendor = model.id.includes("/") ? model.id.split("/")[0] : null;
			return {
				spec: chatProvider ? model.id : `${provider}:${model.id}`,
				id: model.id,
				label: model.displayName ?? model.id,
				group: vendor ? `${providerLabel}: ${vendor}` : providerLabel,
				badges,
				price: local ? LOCAL_COST : answerPrice(model),
				local,
			};
		});
}

/** The price of a typical answer, where the model's prices are known. */
export function answerPrice(model: Pick<ModelInfoModel, "inputPricePerMtok" | "outputPricePerMtok">): string | null {
	if (typeof model.inputPricePerMtok !== "number" || typeof model.outputPricePerMtok !== "number") return null;
	const usd = (model.inputPricePerMtok * TYPICAL_READ + model.outputPricePerMtok * TYPICAL_WRITTEN) / 1_000_000;
	return `≈ $${usd < 0.1 ? usd.toFixed(4) : usd.toFixed(2)} per answer`;
}

/** The models whose id, name or group hold every word typed (any case, any order). */
export function filterModels<T extends { id: string; label: string; group?: string }>(models: T[], query: string): T[] {
	const words = query.toLowerCase().split(/\s+/).filter(Boolean);
	if (words.length === 0) return models;
	return models.filter((model) => {
		const hay = `${model.id} ${model.label} ${model.group ?? ""}`.toLowerCase();
		return words.every((word) => hay.includes(word));
	});
}

/** The models by group, groups in the order they first appear. */
export function groupModels(models: PickerModel[]): [string, PickerModel[]][] {
	const groups = new Map<string, PickerModel[]>();
	for (const model of models) {
		const list = groups.get(model.group) ?? [];
		list.push(model);
		groups.set(model.group, list);
	}
	return [...groups.entries()];
}

/** The header's words for the model answering: its name and "local" or the provider. */
export function modelHeader(model: string | null, providerLabel: string | null, local: boolean): string {
	if (!model) return "No model yet";
	return `${model} · ${local ? "local" : (providerLabel ?? "provider")}`;
}
