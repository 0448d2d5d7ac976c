// The method map over the generated wire types: method name → params type → result type.
import type {
	ClientNotifications,
	Methods,
	ServerNotifications,
	ServerRequests,
} from "./protocol.gen";

export type * from "./protocol.gen";
export { ErrorCode, PROTOCOL_VERSION, PROVIDER_NAMES } from "./protocol.gen";

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];

export type NotificationName = keyof ServerNotifications;
export type NotificationParams<N extends NotificationName> = ServerNotifications[N]["params"];
export type ClientNotificationName = keyof ClientNotifications;

export type ServerRequestName = keyof ServerRequests;
export type ServerRequestParams<R extends ServerRequestName> = ServerRequests[R]["params"];
export type ServerRequestResult<R extends ServerRequestName> = ServerRequests[R]["result"];
