// Small DOM helpers shared by the views.

/** The data-action of the button (or other element) an event came from. */
export function actionOf(event: Event): string | null {
	const el = event.target instanceof Element ? event.target.closest<HTMLElement>("[data-action]") : null;
	return el?.dataset.action ?? null;
}
