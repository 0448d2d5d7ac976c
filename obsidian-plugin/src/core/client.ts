// The bridge client: one WebSocket to the server, initialize, calls matched by id, notifications
// routed by requestId, cancellation, tool/confirm answers, heartbeat and reconnect with backoff.
// It knows nothing of Obsidian: the socket, the timers and server discovery are passed in.
// Before the token is sent, the server proves it knows it (core/proof.ts).
import { Backoff } from "./backoff";
import { keyProtocols } from "./key-protocol";
import { newNonce, PROOF_METHOD, PROOF_TIMEOUT_MS, proofMatches, withNonce } from "./proof";
import {
	CloseCode,
	ErrorCode,
	PROTOCOL_VERSION,
	type CallerInfo,
	type HealthResult,
	type InitializeResult,
	type MethodName,
	type NotificationName,
	type NotificationParams,
	type ParamsOf,
	type ResultOf,
	type ServerRequestName,
	type ServerRequestParams,
	type ServerRequestResult,
} from "./protocol";
import { RpcCodec, RpcError, type IncomingEvent } from "./rpc";

export interface SocketLike {
	readonly readyState: number;
	send(data: string): void;
	close(code?: number, reason?: string): void;
	onopen: ((event: Event) => void) | null;
	onmessage: ((event: MessageEvent) => void) | null;
	onclose: ((event: CloseEvent) => void) | null;
	onerror: ((event: Event) => void) | null;
}

export interface Endpoint {
	url: string;
	token: string;
	/** A server on another computer (core/remote.ts): `token` is a client key, and TLS, not the
	 * server proof, says who answers (the server keeps only a hash of the key: it cannot prove it). */
	remote?: boolean;
}

export type ConnectionState =
	| { status: "connecting" }
	/** `done` of `total`: the indexing under way (health's index; total 0 when idle or while the
	 * vault is listed). `chat`: the server has a model provider (else the setup card). */
	| { status: "connected"; vault: string; notes: number; pending: number; done: number; total: number; chat: boolean }
	| { status: "disconnected"; reason: string; retryInMs: number | null };

/** A server notification: its method names its params (the generated ServerNotifications). */
export type Notification = { [M in NotificationName]: { method: M; params: NotificationParams<M> } }[NotificationName];

/** How a client answers the server's requests (tool/confirm, note/apply): per method, a handler
 * from its params to its result; a method without one is answered with an error. */
export type ServerRequestHandlers = {
	[R in ServerRequestName]?: (params: ServerRequestParams<R>) => Promise<ServerRequestResult<R>>;
};

export interface Timers {
	setTimeout(callback: () => void, ms: number): number;
	clearTimeout(handle: number): void;
	now(): number;
}

export interface ClientOptions {
	/** `protocols`: the key as a subprotocol, for a server on another computer (key-protocol.ts). */
	socket: (url: string, protocols?: string[]) => SocketLike;
	/** Where the server is now (re-read before every attempt: a restart changes url and token). */
	endpoint: () => Promise<Endpoint>;
	client: { name: string; version: string };
	timers: Timers;
	/** Why a connection that never opened failed (a 403 on the handshake, say), or null. */
	diagnose?: (endpoint: Endpoint) => Promise<string | null>;
	onState?: (state: ConnectionState) => void;
	/** Notifications that belong to no running request (budget/warning, index/progress). */
	onNotification?: (notification: Notification) => void;
	/** Server requests (tool/confirm): the result to send back; a throw answers an error. */
	onServerRequest?: ServerRequestHandlers;
	/** The server at this endpoint did not prove it knows the token: not this vault's server. */
	onImpostor?: (endpoint: Endpoint) => void;
	backoff?: Backoff;
	heartbeatMs?: number;
}

export interface CallOptions {
	signal?: AbortSignal;
	onNotification?: (notification: Notification) => void;
}

/** Raised for calls made while the server cannot be reached; the message says why. */
export class DisconnectedError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "DisconnectedError";
	}
}

/** An endpoint source throws this when there is no server to connect to (yet). */
export class NoServerError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "NoServerError";
	}
}

interface Pending {
	resolve: (value: unknown) => void;
	reject: (error: Error) => void;
	onNotification?: (notification: Notification) => void;
}

const OPEN = 1;

export class BridgeClient {
	/** Who this connection is (initialize's caller: a client key's name and scope), once connected. */
	caller: CallerInfo | null = null;
	private codec = new RpcCodec();
	private socket: SocketLike | null = null;
	private pending = new Map<number, Pending>();
	private state: ConnectionState = { status: "disconnected", reason: "Not started.", retryInMs: null };
	private stopped = true;
	private retryTimer: number | null = null;
	private heartbeatTimer: number | null = null;
	private lastBeat = 0;
	private readonly backoff: Backoff;
	private readonly heartbeatMs: number;

	constructor(private readonly options: ClientOptions) {
		this.backoff = options.backoff ?? new Backoff();
		this.heartbeatMs = options.heartbeatMs ?? 15_000;
	}

	get connection(): ConnectionState {
		return this.state;
	}

	/** Connect now and keep reconnecting until stop(). */
	start(): void {
		if (!this.stopped) return;
		this.stopped = false;
		void this.connect();
	}

	/** Close the connection for good; running calls fail. */
	stop(): void {
		this.stopped = true;
		this.clearTimers();
		this.drop("The assistant was stopped.");
		this.socket?.close(CloseCode.normal, "client stopping");
		this.socket = null;
		this.setState({ status: "disconnected", reason: "The assistant was stopped.", retryInMs: null });
	}

	/** Try to connect at once (a "Retry" button, or after starting a server). */
	reconnectNow(): void {
		if (this.stopped) return;
		if (this.retryTimer !== null) this.options.timers.clearTimeout(this.retryTimer);
		this.retryTimer = null;
		this.backoff.reset();
		if (this.state.status !== "connected") void this.connect();
	}

	/** Call a method; notifications carrying this request's id go to `onNotification`. */
	call<M extends MethodName>(
		method: M,
		params: ParamsOf<M>,
		options: CallOptions = {},
	): Promise<ResultOf<M>> {
		const socket = this.socket;
		if (this.state.status !== "connected" || socket === null) {
			const reason = this.state.status === "disconnected" ? this.state.reason : "Still connecting to the server.";
			return Promise.reject(new DisconnectedError(reason));
		}
		return this.send(socket, method, params, options);
	}

	private send<M extends MethodName>(
		socket: SocketLike,
		method: M,
		params: ParamsOf<M>,
		options: CallOptions,
	): Promise<ResultOf<M>> {
		const { id, frame } = this.codec.request(method, params);
		const signal = options.signal;
		if (signal?.aborted) {
			return Promise.reject(new RpcError({ code: ErrorCode.cancelled, message: "Request cancelled." }));
		}
		return new Promise<ResultOf<M>>((resolve, reject) => {
			const onAbort = (): void => {
				if (this.pending.has(id) && socket.readyState === OPEN) socket.send(this.codec.cancel(id));
			};
			const settle = <T>(done: (value: T) => void) => (value: T): void => {
				signal?.removeEventListener("abort", onAbort);
				done(value);
			};
			this.pending.set(id, {
				// The one place a decoded result meets its method's type.
				resolve: settle((value: unknown) => resolve(value as ResultOf<M>)),
				reject: settle(reject),
				onNotification: options.onNotification,
			});
			signal?.addEventListener("abort", onAbort, { once: true });
			socket.send(frame);
		});
	}

	private async connect(): Promise<void> {
		if (this.stopped) return;
		this.setState({ status: "connecting" });
		let endpoint: Endpoint;
		try {
			endpoint = await this.options.endpoint();
		} catch (error) {
			this.retryLater(messageOf(error));
			return;
		}
		if (this.stopped) return;
		const nonce = newNonce();
		let opened = false;
		let proven = endpoint.remote === true;
		let failure: string | null = null;
		let proofTimer: number | null = null;
		let socket: SocketLike;
		try {
			socket = endpoint.remote
				? this.options.socket(endpoint.url, keyProtocols(endpoint.token))
				: this.options.socket(withNonce(endpoint.url, nonce));
		} catch (error) {
			this.retryLater(`Cannot open ${endpoint.url}: ${messageOf(error)}`);
			return;
		}
		this.socket = socket;
		const refuse = (why: string): void => {
			failure = why;
			this.options.onImpostor?.(endpoint);
			socket.close(CloseCode.serverUnproven, "server proof failed");
		};
		socket.onmessage = (event) => {
			if (typeof event.data !== "string") return;
			if (proven) {
				this.receive(socket, this.codec.decode(event.data));
				return;
			}
			if (failure !== null) return;
			// The first frame must be the proof; nothing is sent before it is checked.
			const first = this.codec.decode(event.data);
			if (proofTimer !== null) this.options.timers.clearTimeout(proofTimer);
			proofTimer = null;
			const proof = first.kind === "notification" && first.method === PROOF_METHOD ? first.params.proof : null;
			failure = "checking";
			void proofMatches(endpoint.token, nonce, proof)
				.catch(() => false)
				.then((ok) => {
					if (this.socket !== socket) return;
					if (!ok) {
						refuse(`The server at ${endpoint.url} could not prove it is this vault's server: the plugin did not send it the token.`);
						return;
					}
					failure = null;
					proven = true;
					void this.initialize(socket, endpoint);
				});
		};
		socket.onopen = () => {
			opened = true;
			if (proven) {
				void this.initialize(socket, endpoint);
				return;
			}
			proofTimer = this.options.timers.setTimeout(() => {
				proofTimer = null;
				refuse(`The server at ${endpoint.url} did not prove it is this vault's server within 2 s: the plugin did not send it the token.`);
			}, PROOF_TIMEOUT_MS);
		};
		socket.onerror = () => undefined;
		socket.onclose = (event) => {
			if (proofTimer !== null) this.options.timers.clearTimeout(proofTimer);
			proofTimer = null;
			if (this.socket !== socket) return;
			this.socket = null;
			this.stopHeartbeat();
			const refused = failure !== null && failure !== "checking" ? failure : null;
			void this.closed(event.code, event.reason, opened, endpoint, refused);
		};
	}

	private async initialize(socket: SocketLike, endpoint: Endpoint): Promise<void> {
		try {
			const result: InitializeResult = await this.send(
				socket,
				"initialize",
				{ token: endpoint.token, protocolVersion: PROTOCOL_VERSION, client: this.options.client },
				{},
			);
			this.backoff.reset();
			this.caller = result.caller ?? null;
			this.setState({
				status: "connected",
				vault: result.vault.name,
				notes: result.vault.noteCount,
				pending: 0,
				done: 0,
				total: 0,
				chat: result.capabilities.chat,
			});
			this.startHeartbeat(socket);
			// The index may still be building: the status bar shows how many notes are left.
			this.send(socket, "health", {}, {})
				.then((health) => this.updateIndex(health))
				.catch(() => undefined);
		} catch (error) {
			if (error instanceof RpcError && error.code === ErrorCode.unauthorized) {
				socket.close(CloseCode.unauthorized, "wrong token");
				return;
			}
			socket.close(CloseCode.protocolError, "initialize failed");
		}
	}

	private async closed(
		code: number,
		reason: string,
		opened: boolean,
		endpoint: Endpoint,
		refused: string | null,
	): Promise<void> {
		let why = refused ?? closeReason(code, reason, endpoint.remote === true);
		if (!opened) {
			const diagnosis = await this.options.diagnose?.(endpoint).catch(() => null);
			why = diagnosis ?? `The server at ${endpoint.url} does not answer: it may have stopped.`;
		}
		this.drop(why);
		if (!this.stopped) this.retryLater(why);
	}

	private drop(reason: string): void {
		const calls = [...this.pending.values()];
		this.pending.clear();
		for (const call of calls) call.reject(new DisconnectedError(reason));
	}

	private retryLater(reason: string): void {
		if (this.stopped) return;
		const wait = this.backoff.next();
		this.setState({ status: "disconnected", reason, retryInMs: wait });
		this.retryTimer = this.options.timers.setTimeout(() => {
			this.retryTimer = null;
			void this.connect();
		}, wait);
	}

	private receive(socket: SocketLike, event: IncomingEvent): void {
		switch (event.kind) {
			case "result":
				this.pending.get(event.id)?.resolve(event.result);
				this.pending.delete(event.id);
				return;
			case "error":
				if (event.id === null) return;
				this.pending.get(event.id)?.reject(event.error);
				this.pending.delete(event.id);
				return;
			case "notification": {
				const requestId = event.params.requestId;
				const owner = typeof requestId === "number" ? this.pending.get(requestId) : undefined;
				// The server's frames follow its schema (the generated types): read as such here.
				const notification = { method: event.method, params: event.params as unknown } as Notification;
				if (owner?.onNotification) owner.onNotification(notification);
				else this.options.onNotification?.(notification);
				return;
			}
			case "request":
				void this.answer(socket, event.id, event.method, event.params);
				return;
			case "invalid":
				return;
		}
	}

	private async answer(
		socket: SocketLike,
		id: string | number,
		method: string,
		params: unknown,
	): Promise<void> {
		const handlers = this.options.onServerRequest ?? {};
		let frame: string;
		try {
			if (!handles(handlers, method)) throw new Error(`This client does not handle ${method}.`);
			// The server's params are trusted to match the method, as its notifications' are.
			frame = this.codec.reply(id, await respond(handlers, method, params as ServerRequestParams<typeof method>));
		} catch (error) {
			// An RpcError keeps its code (note/apply's -32022 conflict); anything else is -32603.
			frame = this.codec.replyError(id, error instanceof RpcError ? error.code : -32603, messageOf(error));
		}
		if (socket.readyState === OPEN) socket.send(frame);
	}

	private startHeartbeat(socket: SocketLike): void {
		this.lastBeat = this.options.timers.now();
		const beat = (): void => {
			const now = this.options.timers.now();
			const slept = now - this.lastBeat > this.heartbeatMs * 3;
			this.lastBeat = now;
			if (slept) {
				// The machine slept: the socket may be dead without knowing it. Start over.
				socket.close(CloseCode.heartbeatLost, "resumed from sleep");
				return;
			}
			const deadline = this.options.timers.setTimeout(() => socket.close(CloseCode.heartbeatLost, "heartbeat lost"), this.heartbeatMs);
			this.send(socket, "health", {}, {})
				.then((health) => this.updateIndex(health))
				.catch(() => undefined)
				.finally(() => this.options.timers.clearTimeout(deadline));
			this.heartbeatTimer = this.options.timers.setTimeout(beat, this.heartbeatMs);
		};
		this.heartbeatTimer = this.options.timers.setTimeout(beat, this.heartbeatMs);
	}

	/** Ask the server for its index now (the status bar follows a first index build). */
	async refreshStatus(): Promise<void> {
		if (this.state.status !== "connected") return;
		this.updateIndex(await this.call("health", {}));
	}

	private updateIndex(health: HealthResult): void {
		if (this.state.status !== "connected") return;
		const { notes, pending, done = 0, total = 0 } = health.index;
		this.setState({ ...this.state, notes, pending, done, total, chat: health.provider !== null });
	}

	private stopHeartbeat(): void {
		if (this.heartbeatTimer !== null) this.options.timers.clearTimeout(this.heartbeatTimer);
		this.heartbeatTimer = null;
	}

	private clearTimers(): void {
		this.stopHeartbeat();
		if (this.retryTimer !== null) this.options.timers.clearTimeout(this.retryTimer);
		this.retryTimer = null;
	}

	private setState(state: ConnectionState): void {
		this.state = state;
		this.options.onState?.(state);
	}
}

/** What a close code means to the user (docs/protocol.md, "Limits and close codes"). */
export function closeReason(code: number, reason: string, remote = false): string {
	switch (code) {
		case CloseCode.unauthorized:
			return remote
				? "The server refused the client key: it was revoked or mistyped; make a new one with obsidian-ai-bridge clients add."
				: "The server refused the token: it was restarted or another server runs for this vault.";
		case CloseCode.initTimeout:
			return "The server closed the connection: initialize came too late.";
		case CloseCode.notReading:
			return "The server closed the connection: replies were not read in time.";
		case CloseCode.goingAway:
			return "The server stopped.";
		case CloseCode.messageTooBig:
			return "The server closed the connection: a message was too large.";
		case CloseCode.heartbeatLost:
			return reason === "resumed from sleep" ? "Reconnecting after sleep." : "The server stopped answering.";
		default:
			return "The connection to the server was lost.";
	}
}

export function messageOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** Whether `handlers` answers `method` (its own key: "toString" from a server is no method). */
function handles(handlers: ServerRequestHandlers, method: string): method is ServerRequestName {
	return Object.prototype.hasOwnProperty.call(handlers, method);
}

/** `method`'s handler run on `params`: its result is the method's (ServerRequestResult). */
async function respond<R extends ServerRequestName>(
	handlers: ServerRequestHandlers,
	method: R,
	params: ServerRequestParams<R>,
): Promise<ServerRequestResult<R>> {
	const handler = handlers[method];
	if (!handler) throw new Error(`This client does not handle ${method}.`);
	return handler(params);
}
