// The server on another computer (issue 29): the pairing text, the remote listener's WebSocket
// address, the migration of the former manual setting, the connection with a client key (no
// server proof: TLS says who answers), and why a connection failed, an untrusted certificate
// first, diagnosed against a real TLS server with a self-signed certificate.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BridgeClient, NoServerError } from "../../src/core/client";
import { CloseCode } from "../../src/core/protocol";
import {
	addressError,
	defaultChoice,
	diagnoseRemote,
	healthUrl,
	pairingFromParams,
	parsePairing,
	parseServerChoice,
	remoteEndpoint,
	REMOTE_HELP_URL,
	socketUrl,
	type Fetch,
} from "../../src/core/remote";
import { legacyManualServer, loadSettings } from "../../src/core/settings";
import { FakeSocket, ManualClock, settle } from "../helpers/fakes";

const KEY = "oab_" + "k".repeat(43);
const FINGERPRINT = "ab".repeat(32);
const PAIRING = `obsidian://ai-bridge-pair?address=${encodeURIComponent("https://192.168.1.20:8443")}&key=${KEY}&fingerprint=${FINGERPRINT}`;

describe("the pairing text", () => {
	it("gives the address, the key and the fingerprint", () => {
		expect(parsePairing(`  ${PAIRING}\n`)).toEqual({ address: "https://192.168.1.20:8443", key: KEY, fingerprint: FINGERPRINT });
		// As Obsidian hands a scanned link to the protocol handler: its parameters.
		expect(pairingFromParams({ action: "ai-bridge-pair", address: "https://mac.tail1234.ts.net:8443", key: KEY })).toEqual({
			address: "https://mac.tail1234.ts.net:8443",
			key: KEY,
			fingerprint: "",
		});
	});

	it("is refused when it is another link, or lacks a usable address or key", () => {
		expect(parsePairing("https://192.168.1.20:8443")).toBeNull();
		expect(parsePairing("obsidian://open?vault=Notes")).toBeNull();
		expect(parsePairing(`obsidian://ai-bridge-pair?address=${encodeURIComponent("https://h:1")}`)).toBeNull();
		expect(parsePairing(`obsidian://ai-bridge-pair?address=ftp%3A%2F%2Fh&key=${KEY}`)).toBeNull();
		expect(parsePairing("not a link at all")).toBeNull();
	});
});

describe("the address of another computer", () => {
	it("is the remote listener's WebSocket at /ws, https becoming wss", () => {
		expect(socketUrl("https://192.168.1.20:8443")).toBe("wss://192.168.1.20:8443/ws");
		expect(socketUrl("https://192.168.1.20:8443/")).toBe("wss://192.168.1.20:8443/ws");
		expect(socketUrl("wss://mac.local:8443/ws")).toBe("wss://mac.local:8443/ws");
		expect(socketUrl("http://100.64.0.2:8443?x=1#y")).toBe("ws://100.64.0.2:8443/ws");
		expect(healthUrl("wss://mac.local:8443/ws")).toBe("https://mac.local:8443/health");
	});

	it("must be a web address without credentials", () => {
		expect(addressError("https://h:1")).toBeNull();
		expect(addressError("mac.local:8443")).toMatch(/https:\/\//);
		expect(addressError("ftp://h:1")).toMatch(/https:\/\/ or wss:\/\//);
		expect(addressError("https://me:pw@h:1")).toMatch(/user name or password/);
	});

	it("comes only from this device's choice, and needs both address and key", () => {
		const choice = { mode: "another-computer" as const, address: "https://h:8443", key: KEY, fingerprint: "" };
		expect(remoteEndpoint(choice)).toEqual({ url: "wss://h:8443/ws", token: KEY, remote: true });
		expect(() => remoteEndpoint({ ...choice, key: "" })).toThrow(NoServerError);
		expect(() => remoteEndpoint({ ...choice, address: "h:1" })).toThrow(NoServerError);
	});

	it("is kept as a choice per device: read back strictly, another computer by default on a phone", () => {
		expect(defaultChoice(true).mode).toBe("another-computer");
		expect(defaultChoice(false).mode).toBe("this-computer");
		expect(parseServerChoice({ mode: "another-computer", address: "https://h:1", key: KEY })).toEqual({
			mode: "another-computer",
			address: "https://h:1",
			key: KEY,
			fingerprint: "",
		});
		expect(parseServerChoice({ mode: "manual", address: "", key: "" })).toBeNull();
		expect(parseServerChoice("x")).toBeNull();
	});

	it("takes over the former Manual address and token, which leave data.json", () => {
		const saved = { discovery: "manual", url: " ws://127.0.0.1:8765 ", token: "tok", sendContext: false };
		expect(legacyManualServer(saved)).toEqual({ address: "ws://127.0.0.1:8765", key: "tok", fingerprint: "" });
		expect(legacyManualServer({ discovery: "auto", url: "ws://x", token: "t" })).toBeNull();
		expect(legacyManualServer({ discovery: "manual", url: "", token: "t" })).toBeNull();
		const settings = loadSettings(saved);
		expect(settings).not.toHaveProperty("token");
		expect(settings.sendContext).toBe(false);
	});
});

describe("a connection with a client key", () => {
	function connect() {
		const sockets: FakeSocket[] = [];
		const states: string[] = [];
		const client = new BridgeClient({
			socket: (url, protocols) => {
				const socket = new FakeSocket(url, protocols);
				sockets.push(socket);
				return socket;
			},
			endpoint: () => Promise.resolve({ url: "wss://h:8443/ws", token: KEY, remote: true }),
			client: { name: "test", version: "0" },
			timers: new ManualClock(),
			onState: (state) => states.push(state.status === "disconnected" ? state.reason : state.status),
		});
		client.start();
		return { client, sockets, states };
	}

	it("sends no nonce and initializes at once with the key (TLS, not the proof, says who answers)", async () => {
		const { client, sockets } = connect();
		await settle();
		const socket = sockets[0]!;
		expect(socket.url).toBe("wss://h:8443/ws");
		// The key in the handshake too (a browser sets no Authorization): base64url, beside "oab".
		const [selected, offered] = socket.protocols ?? [];
		expect(selected).toBe("oab");
		expect(Buffer.from(offered!.replace("oab.key.", ""), "base64url").toString()).toBe(KEY);
		socket.open();
		await vi.waitFor(() => expect(socket.last("initialize").params.token).toBe(KEY));
		client.stop();
	});

	it("says a refused key is revoked or mistyped, not that the server restarted", async () => {
		const { client, sockets, states } = connect();
		await settle();
		sockets[0]!.open();
		sockets[0]!.serverClose(CloseCode.unauthorized, "wrong token");
		await settle();
		expect(states.at(-1)).toBe(
			"The server refused the client key: it was revoked or mistyped; make a new one with obsidian-ai-bridge clients add.",
		);
		client.stop();
	});
});

describe("why the server on another computer does not answer", () => {
	let dir: string;
	let server: Server;
	let address: string;
	/** Node's https client, trusting only the system's authorities, as a phone does. */
	const nodeFetch: Fetch = (url, headers) =>
		new Promise((resolve, reject) => {
			const req = request(url, { headers, timeout: 3000 }, (response) => {
				let text = "";
				response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
				response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
			});
			req.on("error", reject);
			req.end();
		});

	beforeAll(async () => {
		dir = mkdtempSync(join(tmpdir(), "aib-remote-"));
		execFileSync(
			"openssl",
			["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
				"-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
			{ stdio: "ignore" },
		);
		server = createServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (req, res) => {
			res.writeHead(req.headers.authorization === `Bearer ${KEY}` ? 200 : 401).end("{}");
		});
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
		address = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});

	afterAll(() => {
		server?.close();
		rmSync(dir, { recursive: true, force: true });
	});

	it("an untrusted (self-signed) certificate: one sentence with the README's section", async () => {
		const message = await diagnoseRemote(nodeFetch, address, KEY);
		expect(message).toMatch(/^This device does not trust the certificate of the server at 127\.0\.0\.1:\d+ \(self[- ]signed certificate\): see /);
		expect(message.endsWith(REMOTE_HELP_URL)).toBe(true);
		expect(REMOTE_HELP_URL).toMatch(/#from-a-phone-or-another-computer$/);
	});

	it("the phones' own words for it too (Android, iOS, Electron)", async () => {
		for (const said of [
			"java.security.cert.CertPathValidatorException: Trust anchor for certification path not found.",
			"The certificate for this server is invalid.",
			"net::ERR_CERT_AUTHORITY_INVALID",
		]) {
			expect(await diagnoseRemote(() => Promise.reject(new Error(said)), address, KEY)).toContain(REMOTE_HELP_URL);
		}
	});

	it("a refused key, a refused device, and nothing answering", async () => {
		const trusting: Fetch = (url, headers) => nodeFetchTrusting(url, headers);
		expect(await diagnoseRemote(trusting, address, KEY)).toMatch(/answers now, so retrying/);
		expect(await diagnoseRemote(trusting, address, "oab_wrong")).toMatch(/refused the client key/);
		expect(await diagnoseRemote(() => Promise.resolve({ status: 429, text: "" }), address, KEY)).toMatch(/too many failed attempts/);
		const closed = await diagnoseRemote(nodeFetch, "https://127.0.0.1:1", KEY);
		expect(closed).toMatch(/^Nothing answers at 127\.0\.0\.1:1 \(.*ECONNREFUSED.*\): check that the server runs with --remote/);
	});

	/** The same server with its certificate trusted (as one from Tailscale is). */
	function nodeFetchTrusting(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
		return new Promise((resolve, reject) => {
			const req = request(url, { headers, ca: readFileSync(join(dir, "cert.pem")) }, (response) => {
				response.resume();
				response.on("end", () => resolve({ status: response.statusCode ?? 0, text: "" }));
			});
			req.on("error", reject);
			req.end();
		});
	}
});
