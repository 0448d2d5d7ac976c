// The method map over the generated wire types: method name → params type → result type.
import type {
	ClientNotifications,
	Methods,
	ServerNotifications,
	ServerRequests,
} from "./protocol.gen";

export type * from "./protocol.gen";
export { PROVIDER_NAMES } from "./protocol.gen";

export const PROTOCOL_VERSION = 1;

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];

export type NotificationName = keyof ServerNotifications;
export type NotificationParams<N extends NotificationName> = ServerNotifications[N]["params"];
export type ClientNotificationName = keyof ClientNotifications;

export type ServerRequestName = keyof ServerRequests;
export type ServerRequestParams<R extends ServerRequestName> = ServerRequests[R]["params"];
export type ServerRequestResult<R extends ServerRequestName> = ServerRequests[R]["result"];

/** Error codes of docs/protocol.md that the client acts on. */
export const ErrorCode = {
	invalidParams: -32602,
	wrongToken: -32001,
	providerFailed: -32010,
	noProvider: -32011,
	budgetExceeded: -32012,
	notFound: -32020,
	conflict: -32022,
	cancelled: -32800,
} as const;
