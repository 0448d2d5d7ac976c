// The server proves it knows the token before the plugin reveals it (docs/protocol.md,
// "Server proof"): the plugin opens the socket with a fresh random nonce, and the server's first
// frame is `$/serverProof {proof}`, proof = base64url(HMAC-SHA256(key = token, message = nonce))
// over the UTF-8 bytes of both strings, unpadded. Web Crypto, present in Obsidian and in Node.

export const PROOF_METHOD = "$/serverProof";
/** How long the plugin waits for the proof after the socket opens. */
export const PROOF_TIMEOUT_MS = 2000;

export function base64url(bytes: Uint8Array): string {
	let binary = "";
	for (const byte of bytes) binary += String.fromCharCode(byte);
	return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** 32 random bytes, base64url: a nonce for one connection. */
export function newNonce(): string {
	return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The URL with `nonce` set as a query parameter (other parameters kept). */
export function withNonce(url: string, nonce: string): string {
	const parsed = new URL(url);
	parsed.searchParams.set("nonce", nonce);
	return parsed.toString();
}

/** The proof a server that knows `token` sends for `nonce`. */
export async function serverProof(token: string, nonce: string): Promise<string> {
	const encoder = new TextEncoder();
	const key = await crypto.subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false, [
		"sign",
	]);
	return base64url(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(nonce))));
}

/** Whether `proof` is the right one, compared in constant time. */
export async function proofMatches(token: string, nonce: string, proof: unknown): Promise<boolean> {
	if (typeof proof !== "string") return false;
	const expected = await serverProof(token, nonce);
	if (proof.length !== expected.length) return false;
	let diff = 0;
	for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ proof.charCodeAt(i);
	return diff === 0;
}
