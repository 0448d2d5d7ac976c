// The model switcher's list (issue 39): every word typed filters, groups by provider (the vendor
// of a vendor/model id), badges and a price per typical answer; a local model is free.
import { describe, expect, it } from "vitest";
import { answerPrice, filterModels, groupModels, LOCAL_COST, modelHeader, pickerModels } from "../../src/core/model-picker";
import type { ModelInfoModel } from "../../src/core/protocol";

const model = (id: string, more: Partial<ModelInfoModel> = {}): ModelInfoModel => ({
	id,
	displayName: null,
	contextWindow: null,
	maxOutputTokens: null,
	supportsTools: true,
	inputPricePerMtok: null,
	outputPricePerMtok: null,
	...more,
});

describe("the switcher's list", () => {
	it("groups by vendor, badges what a model can do, prices a typical answer, never lists embedders", () => {
		const list = pickerModels("openai", "OpenAI", [model("acme/a", { supportsImages: true, inputPricePerMtok: 1, outputPricePerMtok: 2 }), model("b", { supportsTools: false }), model("text-embedding-3-small")], false, true);
		expect(list.map((m) => [m.group, m.spec, m.badges, m.price])).toEqual([
			["OpenAI: acme", "acme/a", ["can use your notes", "sees images"], "≈ $0.0040 per answer"],
			["OpenAI", "b", ["chat only"], null],
		]);
		expect(groupModels(list).map(([group]) => group)).toEqual(["OpenAI: acme", "OpenAI"]);
		expect(pickerModels("ollama", "Ollama", [model("llama3.1:8b")], true, false)[0]).toMatchObject({ spec: "ollama:llama3.1:8b", price: LOCAL_COST });
		expect(answerPrice({ inputPricePerMtok: 10, outputPricePerMtok: 40 })).toBe("≈ $0.0500 per answer");
	});

	it("filters by every word, in any order and case", () => {
		const models = [{ id: "stark/model-317", label: "Stark model 317" }, { id: "acme/model-31", label: "Acme model 31" }];
		expect(filterModels(models, "31 STARK")).toEqual([models[0]]);
		expect(filterModels(models, "  ")).toEqual(models);
		expect(filterModels(models, "nothing")).toEqual([]);
	});

	it("names the model answering and where it runs", () => {
		expect(modelHeader("llama3.1:8b", "Ollama", true)).toBe("llama3.1:8b · local");
		expect(modelHeader("gpt-4o", "OpenAI", false)).toBe("gpt-4o · OpenAI");
		expect(modelHeader(null, null, false)).toBe("No model yet");
	});
});
