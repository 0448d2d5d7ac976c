// The method map over the generated wire types: method name → params type → result type.
import type {
	ClientNotifications,
	Methods,
	ServerNotifications,
	ServerRequests,
} from "./protocol.gen";
import { PROVIDER_NAMES, PROVIDER_PROFILES } from "./protocol.gen";

export type * from "./protocol.gen";
export { CloseCode, ErrorCode, PROTOCOL_VERSION, PROVIDER_NAMES, PROVIDER_PROFILES } from "./protocol.gen";

/** A provider's name, as the server's profiles list them. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];
/** The providers that take an API key (their profile names a key variable). */
export type KeyedProvider = {
	[K in ProviderName]: (typeof PROVIDER_PROFILES)[K]["keyVariable"] extends null ? never : K;
}[ProviderName];
export const KEYED_PROVIDERS: readonly KeyedProvider[] = PROVIDER_NAMES.filter(
	(name): name is KeyedProvider => PROVIDER_PROFILES[name].keyVariable !== null,
);

/** Whether a base URL may point a provider at another server that speaks its API without its
 * key (OpenAI's API, which LM Studio, vLLM and hosted gateways speak): a keyed provider that
 * needs its key only at its own origin. */
export function speaksCompatible(name: ProviderName): boolean {
	const profile = PROVIDER_PROFILES[name];
	return profile.keyVariable !== null && !profile.needsKey;
}

/** How the plugin names a provider in its lists: the profile's label, "or compatible" for one
 * that other servers speak. */
export function providerLabel(name: ProviderName): string {
	const label = PROVIDER_PROFILES[name].label;
	return speaksCompatible(name) ? `${label} or compatible` : label;
}

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];

export type NotificationName = keyof ServerNotifications;
export type NotificationParams<N extends NotificationName> = ServerNotifications[N]["params"];
export type ClientNotificationName = keyof ClientNotifications;

export type ServerRequestName = keyof ServerRequests;
export type ServerRequestParams<R extends ServerRequestName> = ServerRequests[R]["params"];
export type ServerRequestResult<R extends ServerRequestName> = ServerRequests[R]["result"];
