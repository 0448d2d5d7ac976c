/* Generated from docs/protocol.schema.json by scripts/gen-types.mjs: do not edit. */

/**
 * JSON-RPC 2.0 over WebSocket text frames, protocolVersion 1. Generated from plugin_bridge/wire/*models.py: do not edit; see docs/protocol.md.
 */
export interface ObsidianAiBridgeProtocol {
	methods: Methods;
	clientNotifications: ClientNotifications;
	serverNotifications: ServerNotifications;
	serverRequests: ServerRequests;
	toolArguments: ToolArguments;
}
export interface Methods {
	/**
	 * The write log, newest first: who wrote which note when, with hashes (never contents).
	 */
	"audit/list": {
		params: AuditListParams;
		result: AuditListResult;
	};
	/**
	 * Forget a conversation's messages (its id stays valid).
	 */
	"chat/clear": {
		params: ChatClearParams;
		result: EmptyResult;
	};
	/**
	 * Send a user message; the model may call vault tools; notifications stream the turn.
	 */
	"chat/send": {
		params: ChatSendParams;
		result: ChatSendResult;
	};
	/**
	 * A new key (or ``key`` imported), saved durably before the answer; shown once.
	 */
	"clients/add": {
		params: ClientsAddParams;
		result: ClientsAddResult;
	};
	/**
	 * The client keys: name, scope, created, last used (never a key).
	 */
	"clients/list": {
		params: Empty;
		result: ClientsListResult;
	};
	/**
	 * Remove a key: it stops working at its next request, on open connections too.
	 */
	"clients/revoke": {
		params: ClientsRevokeParams;
		result: EmptyResult;
	};
	/**
	 * Have the model write a note for the prompt and save it under folder (never overwriting).
	 */
	"command/createNote": {
		params: CreateNoteParams;
		result: NoteWriteResult;
	};
	/**
	 * Rewrite ``text`` as instructed (or, with no text, write what goes at the cursor),
	 */
	"command/rewrite": {
		params: RewriteParams;
		result: RewriteResult;
	};
	/**
	 * Search, then stream a summary of the top notes citing them (chat/delta notifications).
	 */
	"command/searchSummarize": {
		params: SearchSummarizeParams;
		result: SearchSummarizeResult;
	};
	/**
	 * Delete a stored conversation and its messages for good.
	 */
	"conversations/delete": {
		params: ConversationIdParams;
		result: EmptyResult;
	};
	/**
	 * Save a conversation as a Markdown note in the vault (a new note, never overwriting).
	 */
	"conversations/export": {
		params: ConversationsExportParams;
		result: NoteWriteResult;
	};
	/**
	 * One stored conversation with its whole transcript, tool calls and results included.
	 */
	"conversations/get": {
		params: ConversationIdParams;
		result: ConversationResult;
	};
	/**
	 * Stored conversations, newest first, a page at a time; with a query, only those whose
	 */
	"conversations/list": {
		params: ConversationsListParams;
		result: ConversationsListResult;
	};
	/**
	 * Give a stored conversation a title of the user's choosing.
	 */
	"conversations/rename": {
		params: ConversationsRenameParams;
		result: EmptyResult;
	};
	/**
	 * Download a model2vec model from the Hugging Face hub (HF_ENDPOINT honoured) into the
	 */
	"embedder/download": {
		params: EmbedderDownloadParams;
		result: EmbedderDownloadResult;
	};
	/**
	 * Server status: version, provider and model, index size and progress, the tool formats
	 */
	health: {
		params: Empty;
		result: HealthResult;
	};
	/**
	 * Approve the paid embedding that index/progress (phase confirm) announced.
	 */
	"index/confirmEmbedding": {
		params: Empty;
		result: ConfirmEmbeddingResult;
	};
	/**
	 * Authenticate with the info file's token or a client key; must be the first request of a
	 */
	initialize: {
		params: InitializeParams;
		result: InitializeResult;
	};
	/**
	 * Models a configured provider serves (``provider``, default the chat provider), with
	 */
	"models/list": {
		params: ModelsListParams;
		result: ModelsListResult;
	};
	/**
	 * Add text at the end of a note, on a new line; earlier bytes are kept as they are.
	 */
	"note/append": {
		params: NoteAppendParams;
		result: NoteWriteResult;
	};
	/**
	 * Create a note atomically; an existing one only with overwrite.
	 */
	"note/create": {
		params: NoteCreateParams;
		result: NoteWriteResult;
	};
	/**
	 * Search-and-replace edits, each old text occurring exactly once, applied in order.
	 */
	"note/edit": {
		params: NoteEditParams;
		result: NoteWriteResult;
	};
	/**
	 * A note's text (or the part under ``heading``) and the sha256 of its bytes; a PDF's text
	 */
	"note/read": {
		params: NoteReadParams;
		result: NoteReadResult;
	};
	/**
	 * Restore the note as it was before its last write (-32022 if it changed since).
	 */
	"note/undo": {
		params: NoteUndoParams;
		result: NoteUndoResult;
	};
	/**
	 * The custom prompts (notes in the prompts folder), by name; edits show at once.
	 */
	"prompts/list": {
		params: Empty;
		result: PromptsListResult;
	};
	/**
	 * Ollama and LM Studio on this machine (OLLAMA_HOST / LMSTUDIO_HOST), probed at once, with
	 */
	"runtimes/detect": {
		params: Empty;
		result: RuntimesDetectResult;
	};
	/**
	 * The settings in effect; API keys masked (they are write-only).
	 */
	"settings/get": {
		params: Empty;
		result: SettingsResult;
	};
	/**
	 * Change some settings: checked (a new key with one cheap provider call), saved to the
	 */
	"settings/update": {
		params: SettingsUpdateParams;
		result: SettingsResult;
	};
	/**
	 * Run the calls with the app's tools (see :meth:`Tools.run`).
	 */
	"tools/execute": {
		params: ToolsExecuteParams;
		result: ToolsExecuteResult;
	};
	/**
	 * The vault tools the caller may run, in the given provider's tool format.
	 */
	"tools/list": {
		params: ToolsListParams;
		result: ToolsListResult;
	};
	/**
	 * Spending of today and this month (local time), per model; unknown prices never count as
	 */
	"usage/summary": {
		params: Empty;
		result: UsageSummaryResult;
	};
	/**
	 * The indexed notes a page at a time, in path order (see vault/lexical/listing.py).
	 */
	"vault/list": {
		params: VaultListParams;
		result: VaultListResult;
	};
	/**
	 * The notes closest in meaning to one note, with whether they already link.
	 */
	"vault/related": {
		params: RelatedParams;
		result: RelatedResult;
	};
	/**
	 * Lexical, semantic or hybrid search (answers from what is indexed and embedded so far;
	 */
	"vault/search": {
		params: SearchParams;
		result: SearchResult;
	};
}
export interface AuditListParams {
	limit?: number;
}
export interface AuditListResult {
	/**
	 * Newest first.
	 */
	entries: AuditEntry[];
}
export interface AuditEntry {
	time: string;
	path: string;
	action: string;
	oldHash: string | null;
	newHash: string | null;
	origin: string;
}
export interface ChatClearParams {
	conversationId: string;
}
/**
 * An empty object.
 */
export type EmptyResult = Record<string, never>;
export interface ChatSendParams {
	/**
	 * Run this custom prompt (prompts/list); text is added after it.
	 */
	promptId?: string | null;
	/**
	 * A turn of the setup conversation (Introduce yourself): the assistant asks about the vault and the user, and may call complete_setup to write the context note (reviewed with tool/confirm). Empty text starts it.
	 */
	setup?: boolean;
	/**
	 * The message; may be empty only with promptId or setup.
	 */
	text?: string;
	/**
	 * Omit to start a new conversation.
	 */
	conversationId?: string | null;
	/**
	 * deep: this turn uses the deep model, when one is configured.
	 */
	purpose?: "chat" | "deep";
	/**
	 * What the user is looking at or @-mentioned, sent with this message only.
	 *
	 * @maxItems 20
	 */
	context?: (NoteContext | FolderContext | TagContext)[];
	/**
	 * Run this turn on this model (a models/list id of the chat provider, or provider:model): the panel's model switcher; null: the purpose's model.
	 */
	model?: string | null;
}
export interface NoteContext {
	/**
	 * Vault-relative path of the note, or of an image (png, jpg, gif, webp) or PDF, sent as itself to a model that can see it.
	 */
	note: string;
	/**
	 * The selected text; the whole note when absent.
	 */
	selection?: string | null;
}
export interface FolderContext {
	/**
	 * A vault folder: its notes are listed.
	 */
	folder: string;
}
export interface TagContext {
	/**
	 * A tag: its notes are listed.
	 */
	tag: string;
}
export interface ChatSendResult {
	conversationId: string;
	text: string;
	/**
	 * end_turn, max_tokens, stop_sequence, max_tool_iterations or refusal.
	 */
	stopReason: string;
	usage: UsageModel;
	/**
	 * Null when the model's price is unknown.
	 */
	costUsd: number | null;
	/**
	 * Notes the model was given (context) or read during the turn, in order.
	 */
	sources?: string[];
	/**
	 * One sentence each: what of the message was not sent (images to a model that cannot see them, images past the limit of 8).
	 */
	warnings?: string[];
	/**
	 * The model that answered this turn.
	 */
	model?: string;
	/**
	 * Its provider's name (empty for a scripted one).
	 */
	provider?: string;
}
export interface UsageModel {
	inputTokens: number;
	outputTokens: number;
	cacheReadTokens: number;
	cacheWriteTokens: number;
}
export interface ClientsAddParams {
	/**
	 * Letters, digits, '.', '_' or '-', starting with a letter or digit.
	 */
	name: string;
	scope?: "read" | "chat" | "write";
	/**
	 * Import this token instead of making a new key.
	 */
	key?: string | null;
}
export interface ClientsAddResult {
	name: string;
	scope: "read" | "chat" | "write";
	/**
	 * The key, shown once: it is kept nowhere but in the client.
	 */
	key: string;
}
/**
 * No params (or an empty object).
 */
export type Empty = Record<string, never>;
export interface ClientsListResult {
	clients: ClientKeyModel[];
}
/**
 * One client key, without the key (only its hash is kept).
 */
export interface ClientKeyModel {
	name: string;
	scope: "read" | "chat" | "write";
	/**
	 * When it was added, in seconds since the epoch.
	 */
	created: number;
	/**
	 * Null when it was never used.
	 */
	lastUsed: number | null;
}
export interface ClientsRevokeParams {
	name: string;
}
export interface CreateNoteParams {
	prompt: string;
	/**
	 * Vault-relative folder; '' = root.
	 */
	folder?: string;
}
export interface NoteWriteResult {
	path: string;
	hash: string;
}
export interface RewriteParams {
	/**
	 * The selection to rewrite; empty: write new text at the cursor.
	 */
	text: string;
	/**
	 * What to do: "shorter", "fix grammar"…
	 */
	instruction: string;
	/**
	 * Text before the selection or cursor (context).
	 */
	before?: string | null;
	/**
	 * Text after the selection or cursor (context).
	 */
	after?: string | null;
}
export interface RewriteResult {
	/**
	 * The new text (the chat/delta notifications concatenated).
	 */
	text: string;
	usage: UsageModel;
	/**
	 * Null when the model's price is unknown.
	 */
	costUsd: number | null;
}
export interface SearchSummarizeParams {
	query: string;
	/**
	 * How many top notes to read.
	 */
	limit?: number;
}
export interface SearchSummarizeResult {
	summary: string;
	/**
	 * Paths of the notes given to the model and cited.
	 */
	sources: string[];
}
export interface ConversationIdParams {
	id: string;
}
export interface ConversationsExportParams {
	id: string;
	/**
	 * Vault folder of the new note; the title names it (never overwriting).
	 */
	folder?: string;
}
export interface ConversationResult {
	id: string;
	/**
	 * The first words of the opening question, or as renamed.
	 */
	title: string;
	/**
	 * ISO 8601, UTC.
	 */
	createdAt: string;
	/**
	 * ISO 8601, UTC: when its last turn completed.
	 */
	updatedAt: string;
	model: string | null;
	/**
	 * Where it came from: owner (the panel, the CLI), key:NAME (a client key), telegram:USER_ID or discord:USER_ID (a chat-app bot's user).
	 */
	origin?: string;
	/**
	 * The whole transcript, oldest first.
	 */
	messages: StoredMessage[];
}
export interface StoredMessage {
	role: "user" | "assistant";
	/**
	 * Blocks: {type: text, text} | {type: tool_use, id, name, arguments} | {type: tool_result, toolCallId, content, isError}.
	 */
	content: {
		[k: string]: unknown;
	}[];
}
export interface ConversationsListParams {
	limit?: number;
	/**
	 * nextCursor of the previous page; omit for the first.
	 */
	cursor?: string | null;
	/**
	 * Only conversations whose title or messages contain these words (any case).
	 */
	query?: string | null;
}
export interface ConversationsListResult {
	/**
	 * Newest first.
	 */
	conversations: ConversationSummary[];
	nextCursor: string | null;
}
export interface ConversationSummary {
	id: string;
	/**
	 * The first words of the opening question, or as renamed.
	 */
	title: string;
	/**
	 * ISO 8601, UTC.
	 */
	createdAt: string;
	/**
	 * ISO 8601, UTC: when its last turn completed.
	 */
	updatedAt: string;
	model: string | null;
	/**
	 * Where it came from: owner (the panel, the CLI), key:NAME (a client key), telegram:USER_ID or discord:USER_ID (a chat-app bot's user).
	 */
	origin?: string;
}
export interface ConversationsRenameParams {
	id: string;
	title: string;
}
export interface EmbedderDownloadParams {
	/**
	 * A model2vec model on the Hugging Face hub (owner/name).
	 */
	model?: string;
}
export interface EmbedderDownloadResult {
	/**
	 * The embedder now in use: model2vec:<folder>.
	 */
	embedder: string;
}
export interface HealthResult {
	status: "ok";
	version: string;
	/**
	 * anthropic, openai, ollama, or null without one.
	 */
	provider: string | null;
	model: string | null;
	index: IndexStatus;
	recommendedModels: {
		[k: string]: string[];
	};
	/**
	 * Every format tools/list and GET /api/local-llm/tools accept.
	 */
	supportedFormats: ("anthropic" | "openai" | "ollama" | "lmstudio" | "vllm")[];
	/**
	 * The tools a conversation's model is offered.
	 */
	toolCount: number;
	/**
	 * The MCP servers whose tools the model may call ([mcp.servers.NAME]).
	 */
	mcpServers: McpServerStatus[];
	/**
	 * Each configured chat-app bot ([telegram], [discord]): running, starting, or 'failed: ' and one sentence saying why.
	 */
	bots?: {
		[k: string]: string;
	};
}
export interface IndexStatus {
	/**
	 * Notes in the search index.
	 */
	notes: number;
	/**
	 * Files waiting to be indexed (at least 1 until the first scan has listed the vault); 0: the index is complete.
	 */
	pending: number;
	/**
	 * Files indexed so far of total.
	 */
	done?: number;
	/**
	 * Files the indexing under way covers (a scan's new, changed and deleted files, plus changes queued meanwhile); 0 when idle and while the vault is being listed.
	 */
	total?: number;
	/**
	 * null: lexical search only.
	 */
	embedder?: EmbedderStatus | null;
	/**
	 * PDFs not indexed: encrypted, damaged or over the size limit (pdf_max_mb).
	 */
	unreadablePdfs?: number;
}
export interface EmbedderStatus {
	/**
	 * The configured embedder, e.g. ollama:nomic-embed-text.
	 */
	model: string;
	/**
	 * Chunks with a vector of that model.
	 */
	chunksEmbedded: number;
	/**
	 * Semantic and hybrid search answer (else lexical).
	 */
	ready: boolean;
	/**
	 * The embedding job's phase, as in index/progress.
	 */
	phase: string;
}
export interface McpServerStatus {
	name: string;
	state: "running" | "starting" | "failed";
	/**
	 * How many of its tools the model is offered now.
	 */
	tools: number;
	/**
	 * Why it last failed; null while it runs.
	 */
	error?: string | null;
}
export interface ConfirmEmbeddingResult {
	/**
	 * True when a paid embed was waiting and now runs.
	 */
	waiting: boolean;
}
export interface InitializeParams {
	/**
	 * The token from the info file.
	 */
	token: string;
	/**
	 * Protocol version the client speaks (1).
	 */
	protocolVersion: number;
	client: ClientInfo;
}
export interface ClientInfo {
	/**
	 * Client name: ai-bridge-assistant for the Obsidian plugin (its manifest id).
	 */
	name: string;
	version: string;
}
export interface InitializeResult {
	protocolVersion: number;
	server: ServerInfo;
	capabilities: Capabilities;
	vault: VaultInfo;
	/**
	 * Who this connection is (a phone's pairing says so).
	 */
	caller?: CallerInfo | null;
}
export interface ServerInfo {
	name: string;
	version: string;
}
export interface Capabilities {
	/**
	 * The methods this caller may call: every one for the info file's token, those of its scope for a client key.
	 */
	methods: string[];
	/**
	 * A model provider is configured (chat and commands work).
	 */
	chat: boolean;
}
export interface VaultInfo {
	name: string;
	noteCount: number;
	/**
	 * null: lexical search only.
	 */
	embedder?: EmbedderStatus | null;
}
export interface CallerInfo {
	/**
	 * The client key's name; 'owner' with the info file's token.
	 */
	name: string;
	/**
	 * What it may do: read (search and read notes), chat (also converse), write (also write notes, each reviewed), owner (everything, settings too).
	 */
	scope: "read" | "chat" | "write" | "owner";
}
export interface ModelsListParams {
	/**
	 * Ask the provider now instead of the 24 h cache.
	 */
	refresh?: boolean;
	/**
	 * Whose models: any configured provider; default the chat provider's.
	 */
	provider?: ("anthropic" | "openai" | "ollama") | null;
}
export interface ModelsListResult {
	models: ModelInfoModel[];
	/**
	 * Asked now, from the 24 h cache, or the built-in list (provider unreachable).
	 */
	source: "api" | "cache" | "catalog";
}
export interface ModelInfoModel {
	id: string;
	displayName: string | null;
	contextWindow: number | null;
	maxOutputTokens: number | null;
	supportsTools: boolean | null;
	/**
	 * The model accepts images (context images are sent); null: unknown.
	 */
	supportsImages?: boolean | null;
	/**
	 * An embedding model (by its capabilities or name): never offered for chat, only as an embedder.
	 */
	embedding?: boolean | null;
	/**
	 * USD; null when unknown, never 0.
	 */
	inputPricePerMtok: number | null;
	/**
	 * USD; null when unknown, never 0.
	 */
	outputPricePerMtok: number | null;
}
export interface NoteAppendParams {
	/**
	 * Vault-relative .md path.
	 */
	path: string;
	text: string;
	/**
	 * The sha256 the note had when read: the write fails with -32022 if it changed.
	 */
	expectedHash?: string | null;
}
export interface NoteCreateParams {
	/**
	 * Vault-relative .md path.
	 */
	path: string;
	content: string;
	overwrite?: boolean;
	/**
	 * The sha256 the note had when read: the write fails with -32022 if it changed.
	 */
	expectedHash?: string | null;
}
export interface NoteEditParams {
	/**
	 * Vault-relative .md path.
	 */
	path: string;
	/**
	 * @minItems 1
	 * @maxItems 100
	 */
	edits: [NoteEditModel, ...NoteEditModel[]];
	/**
	 * The sha256 the note had when read.
	 */
	expectedHash: string;
}
export interface NoteEditModel {
	/**
	 * Must occur exactly once in the note.
	 */
	oldText: string;
	newText: string;
}
export interface NoteReadParams {
	/**
	 * Vault-relative path, e.g. Projects/Kafka.md or Papers/x.pdf.
	 */
	path: string;
	/**
	 * A PDF's pages to read, 1-based and inclusive: "3-5", "4" or "7-" (to the end); default all.
	 */
	pages?: string | null;
	/**
	 * Read only the part under this heading (a heading path from vault/search, e.g. 'Setup > Linux', or its last heading): its heading line, text and subheadings. Error -32602 naming some of the note's headings when it has none such.
	 */
	heading?: string | null;
}
export interface NoteReadResult {
	path: string;
	/**
	 * The note's text; a PDF's text, each page after a '--- page N of M ---' line.
	 */
	content: string;
	/**
	 * sha256 hex of the file bytes.
	 */
	hash: string;
	/**
	 * Some bytes were not UTF-8 and read as U+FFFD; only note/create with overwrite may write the note.
	 */
	lossy?: boolean;
	/**
	 * A PDF's number of pages; null for notes.
	 */
	pageCount?: number | null;
	/**
	 * With heading: the note's heading path that was read.
	 */
	heading?: string | null;
}
export interface NoteUndoParams {
	/**
	 * Vault-relative .md path.
	 */
	path: string;
	/**
	 * The conversation whose turn made the write: its next turn tells the model the change was undone.
	 */
	conversationId?: string | null;
}
export interface NoteUndoResult {
	path: string;
	/**
	 * The note's sha256 after the undo; empty when it was removed.
	 */
	hash: string;
	/**
	 * True when the undone write had created the note.
	 */
	removed: boolean;
}
export interface PromptsListResult {
	prompts: PromptModel[];
}
export interface PromptModel {
	/**
	 * The prompt note's path: pass it as chat/send promptId.
	 */
	id: string;
	name: string;
	description: string;
	/**
	 * What the client should send as context with it.
	 */
	insert: "selection" | "note" | "none";
	/**
	 * The model that runs it (front matter purpose); null: the one asked for.
	 */
	purpose: ("chat" | "fast" | "deep") | null;
}
export interface RuntimesDetectResult {
	/**
	 * Ollama, then LM Studio.
	 */
	runtimes: RuntimeInfo[];
}
export interface RuntimeInfo {
	kind: "ollama" | "lmstudio";
	/**
	 * What settings/update's baseUrl takes: Ollama's root (provider ollama), LM Studio's /v1 (provider openai).
	 */
	baseUrl: string;
	/**
	 * The runtime's API answered.
	 */
	reachable: boolean;
	models: RuntimeModelInfo[];
}
export interface RuntimeModelInfo {
	id: string;
	/**
	 * null: the runtime does not say.
	 */
	supportsTools: boolean | null;
	/**
	 * An embedding model (for the embedder setting).
	 */
	embedding: boolean;
}
export interface SettingsResult {
	provider: ("anthropic" | "openai" | "ollama") | null;
	/**
	 * The chat provider's address.
	 */
	baseUrl: string | null;
	baseUrls: BaseUrls;
	models: ModelsByPurpose;
	dailyBudgetUsd: number | null;
	monthlyBudgetUsd: number | null;
	keys: KeysModel;
	/**
	 * Folders and globs the assistant never sees.
	 */
	exclude: string[];
	/**
	 * The most tokens of one answer (the model's cap wins).
	 */
	maxTokens: number;
	/**
	 * Sampling temperature; null: the API's default.
	 */
	temperature: number | null;
	/**
	 * Seconds per provider request; null: its default.
	 */
	timeout: number | null;
	/**
	 * The note that is every conversation's context.
	 */
	contextNote: string;
	/**
	 * The folder whose notes are the custom prompts.
	 */
	promptsFolder: string;
	/**
	 * Where each conversation is kept as a note, updated every turn; null: off.
	 */
	conversationsFolder: string | null;
	/**
	 * ollama:MODEL, openai:MODEL or model2vec:PATH; null: lexical only.
	 */
	embedder?: string | null;
	embedderBaseUrl?: string | null;
	/**
	 * MCP servers whose tools the model may call, as NAME__tool.
	 */
	mcpServers: McpServerInfo[];
	/**
	 * Where settings/update saves them.
	 */
	configFile: string;
}
/**
 * Each provider's address (null: the API's own, or for Ollama OLLAMA_HOST or the local
 * one); the chat provider's is ``baseUrl`` when that is set.
 */
export interface BaseUrls {
	anthropic?: string | null;
	openai?: string | null;
	ollama?: string | null;
}
/**
 * MODEL on the chat provider, or PROVIDER:MODEL (e.g. ollama:qwen3:4b).
 */
export interface ModelsByPurpose {
	/**
	 * Conversations (the default).
	 */
	chat: string | null;
	/**
	 * Small jobs such as titles; the chat model when null.
	 */
	fast: string | null;
	/**
	 * For the hardest questions; the chat model when null.
	 */
	deep: string | null;
}
export interface KeysModel {
	/**
	 * Masked; null when not set.
	 */
	anthropic: string | null;
	/**
	 * Masked; null when not set.
	 */
	openai: string | null;
}
export interface McpServerInfo {
	name: string;
	/**
	 * The program started over stdio; null for a URL.
	 */
	command: string | null;
	args: string[];
	/**
	 * Names with masked values.
	 */
	env: {
		[k: string]: string;
	};
	/**
	 * The streamable HTTP endpoint; null for a command.
	 */
	url: string | null;
	/**
	 * Names with masked values.
	 */
	headers: {
		[k: string]: string;
	};
	permission: "allow" | "ask" | "deny";
}
export interface SettingsUpdateParams {
	provider?: ("anthropic" | "openai" | "ollama") | null;
	/**
	 * The chat provider's.
	 */
	baseUrl?: string | null;
	baseUrls?: BaseUrlsUpdate | null;
	/**
	 * MODEL on the chat provider, or PROVIDER:MODEL (e.g. ollama:qwen3:4b).
	 */
	models?: ModelsUpdate | null;
	dailyBudgetUsd?: number | null;
	monthlyBudgetUsd?: number | null;
	/**
	 * Folders (Archive) and globs (*.excalidraw.md); applied without a rebuild.
	 */
	exclude?: string[] | null;
	maxTokens?: number | null;
	temperature?: number | null;
	timeout?: number | null;
	contextNote?: string | null;
	promptsFolder?: string | null;
	/**
	 * A vault folder; null turns it off.
	 */
	conversationsFolder?: string | null;
	/**
	 * Switch semantic search to this embedder (the old one serves until the new vectors are ready); null: lexical search only.
	 */
	embedder?: string | null;
	embedderBaseUrl?: string | null;
	/**
	 * Add or replace servers by name (either command, args and env, or url and headers); null removes one. Servers not named stay as they are.
	 */
	mcpServers?: {
		/**
		 * This interface was referenced by `undefined`'s JSON-Schema definition
		 * via the `patternProperty` "^[a-z0-9_-]{1,20}$".
		 */
		[k: string]: McpServerParams | null;
	} | null;
	/**
	 * Write-only.
	 */
	anthropicApiKey?: string | null;
	/**
	 * Write-only.
	 */
	openaiApiKey?: string | null;
}
/**
 * Only the providers sent change; null removes one.
 */
export interface BaseUrlsUpdate {
	anthropic?: string | null;
	openai?: string | null;
	ollama?: string | null;
}
export interface ModelsUpdate {
	chat?: string | null;
	fast?: string | null;
	deep?: string | null;
}
export interface McpServerParams {
	command?: string | null;
	/**
	 * @maxItems 100
	 */
	args?: string[];
	env?: {
		[k: string]: string;
	};
	url?: string | null;
	headers?: {
		[k: string]: string;
	};
	/**
	 * Its tools run freely, after tool/confirm (the default), or never.
	 */
	permission?: "allow" | "ask" | "deny";
}
export interface ToolsExecuteParams {
	/**
	 * @minItems 1
	 * @maxItems 32
	 */
	calls: [ToolCallParams, ...ToolCallParams[]];
}
export interface ToolCallParams {
	name: string;
	arguments?: {
		[k: string]: unknown;
	};
}
export interface ToolsExecuteResult {
	results: ToolExecution[];
	invalidCalls: InvalidCall[];
}
export interface ToolExecution {
	name: string;
	isError: boolean;
	content: string;
}
export interface InvalidCall {
	index: number;
	name: string;
	reason: string;
}
export interface ToolsListParams {
	/**
	 * Tool format; lmstudio and vllm are OpenAI's; default: the configured provider's, else anthropic.
	 */
	format?: ("anthropic" | "openai" | "ollama" | "lmstudio" | "vllm") | null;
}
export interface ToolsListResult {
	tools: {
		[k: string]: unknown;
	}[];
}
export interface UsageSummaryResult {
	today: PeriodUsage;
	month: PeriodUsage;
}
export interface PeriodUsage {
	/**
	 * Sum of the priced calls; null when every call had an unknown price.
	 */
	costUsd: number | null;
	budgetUsd: number | null;
	unpricedCalls: number;
	byModel: ModelUsageModel[];
}
export interface ModelUsageModel {
	/**
	 * The provider that served the calls ("anthropic", "openai", "ollama"); "" for calls recorded before providers were.
	 */
	provider: string;
	model: string;
	calls: number;
	inputTokens: number;
	outputTokens: number;
	cacheReadTokens: number;
	cacheWriteTokens: number;
	/**
	 * Null when no call of this model had a price.
	 */
	costUsd: number | null;
	/**
	 * Calls whose model has no known price.
	 */
	unpricedCalls: number;
}
export interface VaultListParams {
	/**
	 * nextCursor of the page before; none: the first page.
	 */
	cursor?: string | null;
	limit?: number;
}
export interface VaultListResult {
	/**
	 * In path order.
	 */
	notes: ListedNoteModel[];
	/**
	 * Pass it for the next page; null: the last one.
	 */
	nextCursor: string | null;
}
export interface ListedNoteModel {
	path: string;
	title: string;
	/**
	 * The note's size in bytes.
	 */
	size: number;
}
export interface RelatedParams {
	/**
	 * Vault-relative path of the note.
	 */
	path: string;
	limit?: number;
}
export interface RelatedResult {
	results: RelatedNote[];
	/**
	 * False: no vectors yet (no embedder, or still embedding).
	 */
	ready: boolean;
}
export interface RelatedNote {
	path: string;
	title: string;
	/**
	 * Cosine similarity to the note, -1..1; higher is closer.
	 */
	score: number;
	/**
	 * The note asked about links to this one.
	 */
	linksTo: boolean;
	/**
	 * This one links to the note asked about.
	 */
	linkedFrom: boolean;
	/**
	 * The start of its closest chunk (at most 300 characters).
	 */
	snippet?: string;
}
export interface SearchParams {
	/**
	 * Words rank, "a phrase" is exact, prefix*; Obsidian's operators filter: -word, a OR b, (groups), file:, path:, tag:, content:, [property], [property:value], line:(…), section:(…).
	 */
	query: string;
	limit?: number;
	/**
	 * Default: hybrid when vectors are ready, else lexical (also when semantic or hybrid is asked for before vectors exist).
	 */
	mode?: ("lexical" | "semantic" | "hybrid") | null;
	/**
	 * Only notes inside it.
	 */
	folder?: string | null;
	/**
	 * Only notes with it (or nested).
	 */
	tag?: string | null;
}
export interface SearchResult {
	results: SearchHitModel[];
	tookMs: number;
	/**
	 * Files not indexed yet (results may be partial).
	 */
	pending: number;
	/**
	 * The mode that answered.
	 */
	mode?: "lexical" | "semantic" | "hybrid";
}
export interface SearchHitModel {
	path: string;
	title: string;
	/**
	 * Higher is better (comparable within one answer only).
	 */
	score: number;
	/**
	 * Lexical: matched text, the matches wrapped in **…**; found by vectors: the best chunk, after its heading path.
	 */
	snippet: string;
	/**
	 * Which search found this note.
	 */
	matchedBy?: ("lexical" | "semantic")[];
	/**
	 * A PDF's page (1-based) the snippet is from: open it as [[file.pdf#page=N]]; null for notes.
	 */
	page?: number | null;
	/**
	 * The heading path the snippet is under, e.g. 'Setup > Linux' (note/read takes it as heading to read just that part); null above the first heading and for PDFs.
	 */
	heading?: string | null;
}
export interface ClientNotifications {
	"$/cancelRequest": {
		params: CancelRequestParams;
	};
}
export interface CancelRequestParams {
	/**
	 * The id of the request to cancel.
	 */
	id: string | number;
}
export interface ServerNotifications {
	"chat/delta": {
		params: ChatDelta;
	};
	"chat/toolCall": {
		params: ChatToolCall;
	};
	"chat/toolResult": {
		params: ChatToolResult;
	};
	"budget/warning": {
		params: BudgetWarning;
	};
	"index/progress": {
		params: IndexProgress;
	};
	"$/serverProof": {
		params: ServerProof;
	};
	"embedder/downloadProgress": {
		params: EmbedderDownloadProgress;
	};
}
export interface ChatDelta {
	requestId: string | number;
	text: string;
}
export interface ChatToolCall {
	requestId: string | number;
	id: string;
	name: string;
	arguments: {
		[k: string]: unknown;
	};
}
export interface ChatToolResult {
	requestId: string | number;
	id: string;
	isError: boolean;
	content: string;
}
/**
 * Notification: the calls just made passed 80 % of a budget.
 */
export interface BudgetWarning {
	period: "day" | "month";
	spentUsd: number;
	budgetUsd: number;
}
/**
 * Sent to every client while the embedding job runs.
 */
export interface IndexProgress {
	/**
	 * confirm: waiting for index/confirmEmbedding (a paid embed over the limit).
	 */
	phase: "loading" | "embedding" | "confirm" | "ready" | "error";
	done: number;
	total: number;
	model: string;
	/**
	 * With phase confirm.
	 */
	estimatedTokens?: number | null;
	/**
	 * With phase confirm; null: unknown.
	 */
	estimatedUsd?: number | null;
	/**
	 * With phase error: one sentence.
	 */
	error?: string | null;
	/**
	 * PDFs not indexed: encrypted, damaged or over the size limit (pdf_max_mb).
	 */
	unreadablePdfs?: number;
}
/**
 * ``$/serverProof``: the first frame of a connection opened with a ``nonce``.
 */
export interface ServerProof {
	/**
	 * base64url (no padding) of HMAC-SHA256(key = the token's UTF-8 bytes, message = the nonce's UTF-8 bytes as sent in the URL).
	 */
	proof: string;
}
/**
 * Sent to the requesting client while embedder/download runs.
 */
export interface EmbedderDownloadProgress {
	requestId: string | number;
	/**
	 * Bytes downloaded so far.
	 */
	done: number;
	/**
	 * Bytes of the model's files (as the hub announced them).
	 */
	total: number;
}
export interface ServerRequests {
	"tool/confirm": {
		params: ToolConfirmParams;
		result: ToolConfirmResult;
	};
	"note/apply": {
		params: NoteApplyParams;
		result: NoteApplyResult;
	};
	"settings/confirm": {
		params: SettingsConfirmParams;
		result: SettingsConfirmResult;
	};
}
export interface ToolConfirmParams {
	/**
	 * The tool as the model called it; NAME__tool for an MCP one.
	 */
	tool: string;
	/**
	 * The MCP server ([mcp.servers.NAME]) of the tool; null: a vault tool.
	 */
	server?: string | null;
	arguments: {
		[k: string]: unknown;
	};
	/**
	 * What the call does, in words: "Edit Plan.md: 4 changes", "Create Kites.md".
	 */
	title: string;
	/**
	 * The id of the call in chat/toolCall.
	 */
	callId?: string | null;
	/**
	 * For writes: each note the call changes, before and after (the server's).
	 */
	changes?: FileChange[] | null;
	/**
	 * Unified diff of a write, when known.
	 */
	preview?: string | null;
}
export interface FileChange {
	/**
	 * Vault-relative path of the note the write changes.
	 */
	path: string;
	/**
	 * The note's text now; null for a new note.
	 */
	before: string | null;
	/**
	 * The note's text once written.
	 */
	after: string;
}
export interface ToolConfirmResult {
	approved: boolean;
	/**
	 * With approved: write exactly these texts instead (the user kept only some hunks); each is written only while its note still has the change's before.
	 */
	changes?: KeptChange[] | null;
	/**
	 * With approved: run the call with these arguments instead; checked against the tool's schema like any call.
	 */
	arguments?: {
		[k: string]: unknown;
	} | null;
}
export interface KeptChange {
	path: string;
	/**
	 * The text the user kept (some of the hunks of before → after).
	 */
	after: string;
}
/**
 * The server request ``note/apply``: apply a write through Obsidian (the plugin).
 */
export interface NoteApplyParams {
	/**
	 * Vault-relative path of an existing note.
	 */
	path: string;
	/**
	 * The note's text the write was worked out from.
	 */
	before: string;
	/**
	 * The note's text once written.
	 */
	after: string;
	/**
	 * sha256 of the note's file as the server read it.
	 */
	expectedHash: string | null;
}
export interface NoteApplyResult {
	/**
	 * False: the note is not open; the server writes it.
	 */
	applied: boolean;
	/**
	 * With applied: sha256 hex of the note's new text (UTF-8).
	 */
	hash?: string | null;
}
/**
 * The server request ``settings/confirm``: may this MCP server, given over the wire, run?
 */
export interface SettingsConfirmParams {
	/**
	 * The server's name ([mcp.servers.NAME]).
	 */
	server: string;
	/**
	 * The exact command line it would start (environment variables first).
	 */
	commandLine: string | null;
	/**
	 * The URL it would connect to (a streamable HTTP server).
	 */
	url: string | null;
	/**
	 * The question, in words.
	 */
	title: string;
}
export interface SettingsConfirmResult {
	approved: boolean;
}
export interface ToolArguments {
	search_notes: SearchNotesArgs;
	read_note: ReadNoteArgs;
	list_notes: ListNotesArgs;
	get_backlinks: GetBacklinksArgs;
	create_note: CreateNoteArgs;
	append_to_note: AppendToNoteArgs;
	edit_note: EditNoteArgs;
	related_notes: RelatedNotesArgs;
	complete_setup: CompleteSetupArgs;
}
export interface SearchNotesArgs {
	/**
	 * Words or a question, with Obsidian's search operators, e.g. 'kafka retention tag:#work -draft'.
	 */
	query: string;
	/**
	 * How many results at most (1-50, default 10).
	 */
	limit?: number;
}
export interface ReadNoteArgs {
	/**
	 * Path of the note relative to the vault root, with '/' between folders and the .md, .canvas, .base or .pdf extension, e.g. 'Projects/Kafka.md'.
	 */
	path: string;
	/**
	 * Character to start from, for the rest of a long note.
	 */
	offset?: number;
	/**
	 * A PDF's pages, 1-based and inclusive: "3-5", "4" or "7-"; default all.
	 */
	pages?: string | null;
	/**
	 * Read only the part under this heading: a search result's heading path ('Setup > Linux') or the heading's own text.
	 */
	heading?: string | null;
}
export interface ListNotesArgs {
	/**
	 * Folder relative to the vault root, e.g. 'Projects' or 'Projects/2024'; '' (the default) for the whole vault.
	 */
	folder?: string;
	/**
	 * How many results at most (1-50, default 10).
	 */
	limit?: number;
}
export interface GetBacklinksArgs {
	/**
	 * Path of the note relative to the vault root, with '/' between folders and the .md, .canvas or .base extension, e.g. 'Projects/Kafka.md'.
	 */
	path: string;
}
export interface CreateNoteArgs {
	/**
	 * Path of the note relative to the vault root, with '/' between folders and the .md extension, e.g. 'Projects/Kafka.md'.
	 */
	path: string;
	/**
	 * The note's Markdown text.
	 */
	content: string;
}
export interface AppendToNoteArgs {
	/**
	 * Path of the note relative to the vault root, with '/' between folders and the .md extension, e.g. 'Projects/Kafka.md'.
	 */
	path: string;
	/**
	 * Markdown to add.
	 */
	content: string;
	/**
	 * Optional: the hash read_note returned; the write is refused if the note changed since, so read it again.
	 */
	expected_hash?: string | null;
}
export interface EditNoteArgs {
	/**
	 * Path of the note relative to the vault root, with '/' between folders and the .md extension, e.g. 'Projects/Kafka.md'.
	 */
	path: string;
	/**
	 * The replacements, applied one after another.
	 *
	 * @minItems 1
	 * @maxItems 20
	 */
	edits: [NoteEdit, ...NoteEdit[]];
	/**
	 * Optional: the hash read_note returned; the write is refused if the note changed since, so read it again.
	 */
	expected_hash?: string | null;
}
/**
 * One search-and-replace edit of edit_note.
 */
export interface NoteEdit {
	/**
	 * Text now in the note, exactly once.
	 */
	old_text: string;
	/**
	 * What replaces it ('' deletes it).
	 */
	new_text: string;
}
export interface RelatedNotesArgs {
	/**
	 * Path of the note relative to the vault root, with '/' between folders and the .md extension, e.g. 'Projects/Kafka.md'.
	 */
	path: string;
	/**
	 * How many results at most (1-50, default 10).
	 */
	limit?: number;
}
export interface CompleteSetupArgs {
	/**
	 * The whole note, in Markdown.
	 */
	content: string;
}

export const PROTOCOL_VERSION = 1;

/** The model providers the server can use (llm_service's ProviderName). */
export const PROVIDER_NAMES = ["anthropic","openai","ollama"] as const;

/** Each provider's profile (llm_service's ProviderProfile): label, key, local or hosted. */
export const PROVIDER_PROFILES = {
	anthropic: {"name":"anthropic","label":"Anthropic","keyVariable":"ANTHROPIC_API_KEY","baseUrlVariable":"ANTHROPIC_BASE_URL","defaultOrigin":"https://api.anthropic.com","needsKey":true,"local":false,"defaultBaseUrl":null,"recommendedModels":["claude-sonnet-5-5","claude-opus-5-5","claude-haiku-5-5"]},
	openai: {"name":"openai","label":"OpenAI","keyVariable":"OPENAI_API_KEY","baseUrlVariable":"OPENAI_BASE_URL","defaultOrigin":"https://api.openai.com","needsKey":false,"local":false,"defaultBaseUrl":null,"recommendedModels":["gpt-6.1-sol","gpt-6.1-terra","gpt-6-luna"]},
	ollama: {"name":"ollama","label":"Ollama","keyVariable":null,"baseUrlVariable":null,"defaultOrigin":null,"needsKey":false,"local":true,"defaultBaseUrl":"http://127.0.0.1:11434","recommendedModels":["qwen3:8b","llama3.1:8b","mistral-nemo"]},
} as const;

/** The tools that write a note: the user reviews each call (tool/confirm). */
export const WRITE_TOOLS = ["append_to_note","create_note","edit_note","complete_setup"] as const;

/** The protocol's error codes (docs/protocol.md), by the server's names. */
export const ErrorCode = {
	parseError: -32700,
	invalidRequest: -32600,
	methodNotFound: -32601,
	invalidParams: -32602,
	internalError: -32603,
	unauthorized: -32001,
	notInitialized: -32002,
	tooManyRequests: -32003,
	forbiddenScope: -32004,
	providerError: -32010,
	noProvider: -32011,
	budgetExceeded: -32012,
	noteNotFound: -32020,
	noteExists: -32021,
	noteConflict: -32022,
	forbiddenPath: -32023,
	noteUnreadable: -32024,
	noteWriteFailed: -32025,
	toolDenied: -32030,
	cancelled: -32800,
} as const;

/** The WebSocket close codes of both sides (docs/protocol.md, "Limits and close codes"). */
export const CloseCode = {
	normal: 1000,
	goingAway: 1001,
	protocolError: 1002,
	invalidData: 1007,
	messageTooBig: 1009,
	heartbeatLost: 4000,
	unauthorized: 4401,
	serverUnproven: 4403,
	initTimeout: 4408,
	notReading: 4429,
} as const;
