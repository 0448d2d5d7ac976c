/** The client key in the remote listener's WebSocket handshake. A browser's WebSocket cannot
 * set `Authorization`, so the key is offered as a subprotocol `oab.key.BASE64URL(KEY)` beside
 * `oab` (which the server selects): the server refuses a keyless upgrade before it takes one
 * of its WebSocket slots (docs/http.md, "Other machines"). */
export const SOCKET_PROTOCOL = "oab";
export const KEY_PROTOCOL_PREFIX = "oab.key.";

export function keyProtocols(key: string): string[] {
	let binary = "";
	for (const byte of new TextEncoder().encode(key)) binary += String.fromCharCode(byte);
	const encoded = btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
	return [SOCKET_PROTOCOL, KEY_PROTOCOL_PREFIX + encoded];
}
