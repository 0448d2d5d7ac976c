// The panel's model switcher (issue 39): under the header, a filter field, the scope (this
// conversation or the default for new ones) and the models grouped by provider, each with its
// badges and price per answer. Choosing one closes it; Escape or the header button closes it too.
import { Component } from "obsidian";
import { filterModels, groupModels, type PickerModel } from "../core/model-picker";

export type PickScope = "conversation" | "default";

/** At most this many rows are drawn; typing narrows the rest. */
const MAX_ROWS = 200;

export class ModelPicker extends Component {
	readonly el: HTMLElement;
	private readonly listEl: HTMLElement;
	private readonly filterEl: HTMLInputElement;
	private models: PickerModel[] = [];
	private scope: PickScope = "conversation";
	private current: string | null = null;

	constructor(
		parent: HTMLElement,
		private readonly onPick: (model: PickerModel, scope: PickScope) => void,
	) {
		super();
		this.el = parent.createDiv({ cls: "aib-model-picker is-hidden" });
		this.filterEl = this.el.createEl("input", { cls: "aib-model-filter", attr: { type: "search", placeholder: "Type to filter models", "aria-label": "Filter models" } });
		const scopes = this.el.createDiv({ cls: "aib-model-scope" });
		for (const [scope, text] of [["conversation", "This conversation"], ["default", "Default for new conversations"]] as const) {
			const button = scopes.createEl("button", { text, attr: { "data-scope": scope } });
			this.registerDomEvent(button, "click", () => {
				this.scope = scope;
				this.showScope();
			});
		}
		this.listEl = this.el.createDiv({ cls: "aib-model-list" });
		this.registerDomEvent(this.filterEl, "input", () => this.render());
		this.registerDomEvent(this.el, "keydown", (event) => {
			if (event.key === "Escape") this.close();
		});
		this.registerDomEvent(this.listEl, "click", (event) => {
			const row = event.target instanceof Element ? event.target.closest<HTMLElement>(".aib-model-row") : null;
			const model = this.models.find((m) => m.spec === row?.dataset.spec);
			if (!model) return;
			this.close();
			this.onPick(model, this.scope);
		});
	}

	get isOpen(): boolean {
		return !this.el.hasClass("is-hidden");
	}

	/** Show `models` (the one answering now marked), the filter focused. */
	open(models: PickerModel[], current: string | null, message = ""): void {
		this.models = models;
		this.current = current;
		this.filterEl.value = "";
		this.el.removeClass("is-hidden");
		this.showScope();
		this.render(message);
		this.filterEl.focus();
	}

	close(): void {
		this.el.addClass("is-hidden");
	}

	private showScope(): void {
		for (const button of Array.from(this.el.querySelectorAll<HTMLElement>(".aib-model-scope button"))) {
			button.toggleClass("is-active", button.dataset.scope === this.scope);
		}
	}

	private render(message = ""): void {
		this.listEl.empty();
		if (message) this.listEl.createDiv({ cls: "aib-note", text: message });
		const shown = filterModels(this.models, this.filterEl.value);
		if (this.models.length > 0 && shown.length === 0) this.listEl.createDiv({ cls: "aib-note", text: "No model matches." });
		let rows = 0;
		for (const [group, models] of groupModels(shown)) {
			if (rows >= MAX_ROWS) break;
			this.listEl.createDiv({ cls: "aib-model-group", text: group });
			for (const model of models.slice(0, MAX_ROWS - rows)) {
				rows += 1;
				const row = this.listEl.createDiv({ cls: "aib-model-row", attr: { "data-spec": model.spec, tabindex: "0" } });
				row.toggleClass("is-current", model.spec === this.current || model.id === this.current);
				row.createSpan({ cls: "aib-model-name", text: model.label });
				const meta = row.createSpan({ cls: "aib-model-meta" });
				for (const badge of model.badges) meta.createSpan({ cls: "aib-setup-badge", text: badge });
				if (model.price) meta.createSpan({ cls: "aib-model-price", text: model.price });
			}
		}
		if (shown.length > rows) this.listEl.createDiv({ cls: "aib-note", text: `${shown.length - rows} more: type to narrow the list.` });
	}

	override onunload(): void {
		this.el.remove();
	}
}
