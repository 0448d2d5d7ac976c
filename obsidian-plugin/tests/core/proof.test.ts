// The server proof (issue 21): the plugin's HMAC matches the Python server's, byte for byte, and
// the client sends nothing, the token least of all, before a right proof arrives within 2 s.
import { execFileSync } from "node:child_process";
import { describe, expect, it, vi } from "vitest";
import { BridgeClient, type Endpoint } from "../../src/core/client";
import { base64url, newNonce, proofMatches, serverProof, withNonce } from "../../src/core/proof";
import { FakeSocket, ManualClock, settle } from "../helpers/fakes";
import { PYTHON } from "../helpers/node";

// Computed with Python's hmac, hashlib and base64.urlsafe_b64encode(...).rstrip(b"=").
const TOKEN = "tok-Ünï-🙂";
const NONCE = "q8Jd_abc-XYZ0123456789abcdefghijklmnopqrstu";
const VECTOR = "EAlyHrcQEIj3Z2SYqrICfLVhxRbJY-nWeBvxocmlHyo";

describe("server proof", () => {
	it("is base64url(HMAC-SHA256(token, nonce)) over UTF-8, unpadded, as Python computes it", async () => {
		expect(await serverProof(TOKEN, NONCE)).toBe(VECTOR);
		const nonce = newNonce();
		const code =
			"import base64, hmac, sys; print(base64.urlsafe_b64encode(hmac.digest(sys.argv[1].encode(), sys.argv[2].encode(), 'sha256')).rstrip(b'=').decode())";
		expect(await serverProof("another token", nonce)).toBe(execFileSync(PYTHON, ["-c", code, "another token", nonce], { encoding: "utf8" }).trim());
		expect(await proofMatches(TOKEN, NONCE, VECTOR)).toBe(true);
		expect(await proofMatches(TOKEN, NONCE, VECTOR.slice(0, -1) + "x")).toBe(false);
		expect(await proofMatches(TOKEN, NONCE, 42)).toBe(false);
	});

	it("nonces are 32 random bytes in base64url, set as the URL's nonce parameter", () => {
		expect(base64url(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8");
		const a = newNonce();
		expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(newNonce()).not.toBe(a);
		expect(withNonce("ws://127.0.0.1:4000", a)).toBe(`ws://127.0.0.1:4000/?nonce=${a}`);
	});
});

const ENDPOINT: Endpoint = { url: "ws://127.0.0.1:4000", token: "secret-token" };

function connect() {
	const clock = new ManualClock();
	const sockets: FakeSocket[] = [];
	const impostors: string[] = [];
	const client = new BridgeClient({
		socket: (url) => {
			const socket = new FakeSocket(url);
			sockets.push(socket);
			return socket;
		},
		endpoint: () => Promise.resolve(ENDPOINT),
		client: { name: "test", version: "0" },
		timers: clock,
		onImpostor: (endpoint) => impostors.push(endpoint.url),
	});
	client.start();
	return { client, clock, sockets, impostors };
}

function nonceOf(socket: FakeSocket): string {
	return new URL(socket.url).searchParams.get("nonce") ?? "";
}

describe("the client checks the proof before it sends the token", () => {
	it("sends initialize only after the right proof", async () => {
		const { client, sockets } = connect();
		await settle();
		const socket = sockets[0]!;
		socket.open();
		expect(socket.sent).toEqual([]);
		socket.receive({ method: "$/serverProof", params: { proof: await serverProof(ENDPOINT.token, nonceOf(socket)) } });
		await vi.waitFor(() => expect(socket.last("initialize").params.token).toBe("secret-token"));
		client.stop();
	});

	it("closes on a wrong proof, on another first frame, or on no proof within 2 s, with the token unsent", async () => {
		for (const first of [
			{ method: "$/serverProof", params: { proof: "AAAA" } },
			{ method: "$/serverProof", params: {} },
			{ id: 1, result: { protocolVersion: 1 } },
			null,
		]) {
			const { client, clock, sockets, impostors } = connect();
			await settle();
			const socket = sockets[0]!;
			socket.open();
			if (first === null) clock.advance(2000);
			else socket.receive(first);
			await vi.waitFor(() => expect(socket.closedWith).toBe(4403));
			expect(socket.sent).toEqual([]);
			expect(impostors).toEqual([ENDPOINT.url]);
			const state = client.connection;
			expect(state.status).toBe("disconnected");
			if (state.status === "disconnected") expect(state.reason).toMatch(/prove it is this vault's server/);
			client.stop();
		}
	});

	it("each connection gets a fresh nonce, and a proof for an old nonce is refused", async () => {
		const { client, clock, sockets } = connect();
		await settle();
		const first = sockets[0]!;
		first.open();
		const old = await serverProof(ENDPOINT.token, nonceOf(first));
		first.serverClose(1001);
		await settle();
		clock.advance(60_000);
		await settle();
		const second = sockets[1]!;
		expect(nonceOf(second)).not.toBe(nonceOf(first));
		second.open();
		second.receive({ method: "$/serverProof", params: { proof: old } });
		await vi.waitFor(() => expect(second.closedWith).toBe(4403));
		client.stop();
	});
});
