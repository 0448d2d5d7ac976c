// Small DOM helpers shared by the views.

/** The data-action of the button (or other element) an event came from. */
export function actionOf(event: Event): string | null {
	const el = event.target instanceof Element ? event.target.closest<HTMLElement>("[data-action]") : null;
	return el?.dataset.action ?? null;
}

/** `text` into `el`, its web addresses as links (a reason that points to the README). */
export function appendLinked(el: HTMLElement, text: string): void {
	const parts = text.split(/(https:\/\/[^\s)]+[^\s).,;:])/);
	parts.forEach((part, index) => {
		if (index % 2 === 1) el.createEl("a", { text: part, href: part, cls: "external-link" });
		else if (part) el.appendText(part);
	});
}
