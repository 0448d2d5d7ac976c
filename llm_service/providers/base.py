"""The abstract provider: retry policy, error translation hook and stream semantics.

A concrete provider only translates: ``_chat_once`` / ``_stream_once`` speak its API once, and
``_convert_error`` turns whatever its SDK raised into an :class:`LLMError`. Everything about
retrying (which codes, how long to wait, Retry-After, logging) lives here.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Self, TypedDict, TypeVar, Unpack

from llm_service import lazy
from llm_service.catalog import ModelInfo, described
from llm_service.catalog import sees_images as catalog_sees_images
from llm_service.errors import LLMError
from llm_service.events import ResponseComplete, StreamEvent
from llm_service.messages import LLMResponse, Message, ToolSpec
from llm_service.options import TOOL_MODES, ForcedTool, ResponseFormat, ToolChoice
from llm_service.pricing import load_prices
from llm_service.profiles import PROFILES
from llm_service.warmup import import_early, warmed

if TYPE_CHECKING:
    import tenacity
    from tenacity import RetryCallState
else:
    tenacity = lazy.module("tenacity")

logger = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 30.0
"""No computed backoff wait is longer than this."""
MAX_RETRY_AFTER_SECONDS = 60.0
"""A server asking us to wait longer than this fails the call at once (code rate_limit)."""
DEFAULT_STREAM_TIMEOUT = 600.0
"""Seconds a whole streamed answer may take unless ``stream_timeout`` says otherwise."""

DEFAULT_MAX_TOKENS: Final = 4096
"""The most tokens one model answer may have unless ``max_tokens=`` says otherwise (providers
and LLMService alike)."""
CallT = TypeVar("CallT")


class ProviderOptions(TypedDict, total=False):
    """The keyword options every provider takes."""

    base_url: str | None
    """The API's address (an OpenAI-compatible or Ollama server, a proxy)."""
    max_attempts: int
    """Tries per call, retries included (default 3)."""
    backoff_base: float
    """Seconds of the first retry wait, doubled each retry (default 1.0)."""
    timeout: float
    """Seconds one request may take (default: the provider's ``default_timeout``)."""
    stream_timeout: float
    """Seconds a whole streamed answer may take, however steadily it trickles in (default
    600): a server that keeps a stream open forever gives code timeout, not a hang."""
    key_hint: str
    """What to do about a refused key, said where the caller knows where the key came from
    (default: check the SDK's environment variable)."""


class ChatOptions(TypedDict, total=False):
    """The keyword options of :meth:`Provider.chat` and :meth:`Provider.stream` (beside
    ``tools`` and ``system_prompt``, which may also be given by position)."""

    model: str
    """The model to use (default: the provider's own ``model``)."""
    system: str | None
    """The system prompt (the same as ``system_prompt``)."""
    max_tokens: int
    """The most tokens the answer may have (default 4096)."""
    tool_choice: ToolChoice | str | None
    """``"auto"``, ``"none"``, ``"required"``, a :class:`ForcedTool`, or a tool's name (a
    forced call of that tool); None lets the model choose. A provider that cannot force a call
    (see :meth:`Provider.forces_tools`) sends the tools without it."""
    temperature: float | None
    """Sampling temperature; None leaves the API's default."""
    response_format: ResponseFormat | None
    """The answer is a JSON object (matching a schema); None: free text."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One call's arguments, as every provider receives them."""

    messages: list[Message]
    model: str
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = DEFAULT_MAX_TOKENS
    tool_choice: ToolChoice | None = None
    """Which tool the model must call, if any (see :data:`~llm_service.options.ToolChoice`);
    None lets the model choose."""
    temperature: float | None = None
    """Sampling temperature; None leaves the API's default."""
    response_format: ResponseFormat | None = None
    """The answer is a JSON object (matching a schema); None: free text."""


class Retrying(ABC):
    """The retry policy and error translation shared by chat providers and embedders: retryable
    LLMErrors are tried ``max_attempts`` times with exponential backoff (never less than
    Retry-After); anything else an SDK raised goes through ``_convert_error`` once."""

    name: str = "provider"
    """Human name used in error messages (a provider's is its profile's label)."""

    def __init__(self, max_attempts: int = 3, backoff_base: float = 1.0) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if backoff_base < 0:
            raise ValueError("backoff_base must not be negative")
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base

    @abstractmethod
    def _convert_error(self, exc: Exception) -> LLMError:
        """Translate anything the SDK raised into an LLMError (the one place per provider)."""

    async def _translated(self, call: Awaitable[CallT]) -> CallT:
        try:
            return await call
        except LLMError:
            raise
        except Exception as exc:
            raise self._convert_error(exc) from exc

    async def _with_retries(self, attempt: Callable[[], Awaitable[CallT]]) -> CallT:
        await warmed()  # never import the SDK while a warm-up thread imports it
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self.max_attempts),
            wait=self._wait_seconds,
            retry=tenacity.retry_if_exception(self._worth_retrying),
            before_sleep=self._log_retry,
            reraise=True,
        )

        async def call() -> CallT:  # tenacity awaits only coroutine functions
            return await attempt()

        return await retrying(call)

    def _wait_seconds(self, state: RetryCallState) -> float:
        """Exponential backoff with jitter, capped at 30 s, but never less than Retry-After."""
        backoff = tenacity.wait_exponential_jitter(
            multiplier=self.backoff_base, max=MAX_BACKOFF_SECONDS, jitter=self.backoff_base
        )(state)
        exc = state.outcome.exception() if state.outcome else None
        retry_after = exc.retry_after if isinstance(exc, LLMError) else None
        return max(backoff, retry_after or 0.0)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        code = exc.code if isinstance(exc, LLMError) else type(exc).__name__
        wait = state.next_action.sleep if state.next_action else 0.0
        logger.info(
            "%s call failed (attempt %d/%d, %s); retrying in %.2fs",
            self.name,
            state.attempt_number,
            self.max_attempts,
            code,
            wait,
        )

    def _worth_retrying(self, exc: BaseException) -> bool:
        """Whether to try the call that raised ``exc`` again (retryable, Retry-After short)."""
        if not isinstance(exc, LLMError) or not exc.retryable:
            return False
        return exc.retry_after is None or exc.retry_after <= MAX_RETRY_AFTER_SECONDS


class Provider(Retrying):
    """A chat model API. Subclasses implement the three ``_``-methods and ``format_tool``."""

    default_timeout: float = 60.0
    kind: str | None = None
    """The provider's name in specs and usage records ("anthropic", "openai", "ollama"); None
    for providers :func:`llm_service.make_provider` does not build (the scripted one)."""
    sdk_module: str | None = None
    """The module the first call imports (its SDK); :meth:`warm_up` imports it early."""

    def __init__(self, model: str | None = None, **options: Unpack[ProviderOptions]) -> None:
        super().__init__(options.get("max_attempts", 3), options.get("backoff_base", 1.0))
        self.model = model
        """The model of calls that name none (``LLMService(provider)`` uses it)."""
        self.base_url = options.get("base_url")
        self.timeout = options.get("timeout", self.default_timeout)
        self.stream_timeout = options.get("stream_timeout", DEFAULT_STREAM_TIMEOUT)
        self.key_hint = options.get("key_hint")

    @classmethod
    def build(
        cls, model: str | None, api_key: str | None = None, **options: Unpack[ProviderOptions]
    ) -> Self:
        """The provider as :func:`llm_service.make_provider` builds it; one whose API takes no
        key (Ollama) refuses one."""
        if api_key is not None:
            raise ValueError(f"{cls.name} takes no API key: leave api_key out.")
        return cls(model=model, **options)

    async def _with_retries(self, attempt: Callable[[], Awaitable[CallT]]) -> CallT:
        """The retry policy of :class:`Retrying`; a retryable failure given up on carries the
        wait the next attempt would have had as its ``retry_after`` when the server said none,
        so that whoever retries it (a client of the bridge) waits no less than this would."""
        try:
            return await super()._with_retries(attempt)
        except LLMError as exc:
            if exc.retryable and exc.retry_after is None:
                exc.retry_after = self.next_backoff()
            raise

    def next_backoff(self) -> float:
        """The wait before one more attempt after the last one (without its jitter)."""
        return min(self.backoff_base * 2.0 ** (self.max_attempts - 1), MAX_BACKOFF_SECONDS)

    # -- what subclasses implement -------------------------------------------------------

    @staticmethod
    @abstractmethod
    def format_tool(spec: ToolSpec) -> dict[str, Any]:
        """``spec`` in this API's tool format."""

    @abstractmethod
    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        """One non-streaming API call; may raise SDK exceptions."""

    @abstractmethod
    def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """One streaming API call; the last event is ``ResponseComplete``; may raise SDK errors.

        It must close its HTTP response when closed early (use ``async with`` on the stream).
        """

    async def aclose(self) -> None:
        """Release the SDK client's connections."""

    @property
    def price_provider(self) -> str | None:
        """Whose price list prices this provider's calls (see :mod:`llm_service.pricing`):
        its ``kind``, which for a local server is a provider without prices."""
        return self.kind

    async def sees_images(self, model: str) -> bool:
        """Whether ``model`` accepts images: what the catalog knows of it; a model it does not
        know is taken to see on a hosted API, not on a local server (LM Studio...)."""
        known = catalog_sees_images(model)
        hosted = any(p.name == self.price_provider and not p.local for p in PROFILES.values())
        return known if known is not None else hosted

    async def warm_up(self) -> None:
        """Import the SDK, read the price data and build the SDK's client in a worker thread,
        so that the first call does not stall the event loop for the second or so that takes
        (a server calls this once started)."""

        def then() -> None:
            load_prices()
            self._warm_client()

        await import_early(*filter(None, [self.sdk_module]), then=then)

    def _warm_client(self) -> None:
        """Build the SDK's client, if it has one (in :meth:`warm_up`'s thread: building one
        reads the CA bundle, 0.1 to 0.3 s the first chat would otherwise hold the loop for)."""

    async def _list_models_once(self) -> list[ModelInfo]:
        """One models-list API call; may raise SDK exceptions. [] when the API has none."""
        return []

    def forces_tools(self, model: str) -> bool:
        """Whether a ``tool_choice`` of ``"required"`` or one named tool reaches ``model`` (an
        API without a field for it, or a model whose tools go in text, cannot be forced)."""
        return True

    # -- public API -----------------------------------------------------------------------

    async def list_models(self) -> list[ModelInfo]:
        """The models this endpoint serves, newest first where the API says, with what the
        built-in catalog knows of each; [] if the API lists none. Retried and translated like
        ``chat``."""
        models = await self._with_retries(lambda: self._translated(self._list_models_once()))
        return [described(model, self.price_provider) for model in models]

    async def list_model_ids(self) -> list[str]:
        """The ids of the models this endpoint serves (as :meth:`list_models`, without what
        the catalog or the server would say of each)."""
        return [model.id for model in await self.list_models()]

    async def validate_key(self) -> None:
        """Check the key (or the local server) with a cheap call: None when it works, else the
        LLMError saying why (auth_error, quota_exceeded, network_error, ...)."""
        await self.list_models()

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec | Mapping[str, Any]] | None = None,
        system_prompt: str | None = None,
        **options: Unpack[ChatOptions],
    ) -> LLMResponse:
        """Send ``messages`` (:class:`Message` objects) with ``tools`` (ToolSpecs or
        ``{"name", "description", "input_schema"}`` dicts) and a system prompt, and return the
        model's whole response, retrying transient errors."""
        request = _request(messages, tools, system_prompt, options, self.model)
        return await self._with_retries(lambda: self._translated(self._chat_once(request)))

    async def complete(self, prompt: str, **options: Unpack[ChatOptions]) -> str:
        """The model's answer to one question, as text: ``await provider.complete("...")``."""
        return (await self.chat([Message.user(prompt)], **options)).text

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec | Mapping[str, Any]] | None = None,
        system_prompt: str | None = None,
        **options: Unpack[ChatOptions],
    ) -> AsyncGenerator[StreamEvent, None]:
        """Yield events as the response streams; the last one is ``ResponseComplete``.

        Errors before the first event are retried like ``chat``; once an event has been yielded
        a failure raises at once: a half-shown answer is never silently restarted.
        """
        request = _request(messages, tools, system_prompt, options, self.model)
        first, events, deadline = await self._with_retries(lambda: self._open_stream(request))
        try:
            yield first
            if isinstance(first, ResponseComplete):
                return
            while True:
                try:
                    async with asyncio.timeout_at(deadline):
                        event = await anext(events)
                except StopAsyncIteration:
                    break
                except LLMError:
                    raise
                except TimeoutError as exc:
                    raise self._stream_expired() from exc
                except Exception as exc:
                    raise self._convert_error(exc) from exc
                yield event
        finally:
            await events.aclose()

    # -- internals ------------------------------------------------------------------------

    async def _open_stream(
        self, request: ChatRequest
    ) -> tuple[StreamEvent, AsyncGenerator[StreamEvent, None], float]:
        """The first event of one streamed attempt, the rest of it, and when it must end."""
        deadline = asyncio.get_running_loop().time() + self.stream_timeout
        events = self._stream_once(request)
        try:
            async with asyncio.timeout_at(deadline):
                first = await self._translated(anext(events))
        except TimeoutError as exc:
            await events.aclose()
            raise self._stream_expired() from exc
        except BaseException:
            await events.aclose()
            raise
        return first, events, deadline

    def _stream_expired(self) -> LLMError:
        return LLMError(
            f"{self.name} was still streaming its answer after {self.stream_timeout:g} s; "
            "try again, or raise stream_timeout for very long answers.",
            code="timeout",
            provider=self.name,
        )


def _request(
    messages: Sequence[Message],
    tools: Sequence[ToolSpec | Mapping[str, Any]] | None,
    system_prompt: str | None,
    options: ChatOptions,
    default_model: str | None,
) -> ChatRequest:
    model = options.get("model") or default_model
    if not model:
        raise ValueError("No model named: pass model=... or give the provider a default model")
    listed = list(messages)
    if isinstance(messages, (str, bytes)) or (
        {type(m) for m in listed} - {Message} and not all(isinstance(m, Message) for m in listed)
    ):
        raise TypeError(_not_messages(messages))
    system = options.get("system")
    if system_prompt is not None:
        if system is not None:
            raise ValueError("Pass the system prompt once: system_prompt or system=, not both.")
        system = system_prompt
    specs = [t if type(t) is ToolSpec else _spec(t) for t in tools or ()]
    return ChatRequest(
        listed,
        model,
        system,
        specs,
        options.get("max_tokens", DEFAULT_MAX_TOKENS),
        _tool_choice(options.get("tool_choice"), specs),
        options.get("temperature"),
        options.get("response_format"),
    )


def _tool_choice(raw: ToolChoice | str | None, specs: list[ToolSpec]) -> ToolChoice | None:
    """``raw`` as a ToolChoice: a plain name is a forced call of that tool, which must be one of
    ``specs``; ``"required"`` needs tools."""
    if raw is None:
        return None
    mode = next((m for m in TOOL_MODES if m == raw), None)
    choice: ToolChoice = mode or (raw if isinstance(raw, ForcedTool) else ForcedTool(raw))
    if isinstance(choice, ForcedTool) and not any(t.name == choice.name for t in specs):
        raise ValueError(f"tool_choice {choice.name!r} names no tool in the request")
    if choice == "required" and not specs:
        raise ValueError("tool_choice 'required' needs tools in the request")
    return choice


def _not_messages(messages: Sequence[object]) -> str:
    """Why ``messages`` is not a list of :class:`Message` (OpenAI-style dicts, a string...)."""
    items = [messages] if isinstance(messages, (str, bytes)) else list(messages)
    wrong = next(m for m in items if not isinstance(m, Message))
    return (
        "messages must be a list of llm_service.Message (Message.user(text), "
        f"Message.assistant(text)), not {type(wrong).__name__}"
        + (" like OpenAI's {'role': ..., 'content': ...}" if isinstance(wrong, dict) else "")
        + "."
    )


def _spec(tool: ToolSpec | Mapping[str, Any]) -> ToolSpec:
    if isinstance(tool, ToolSpec):  # a subclass
        return tool
    try:
        return ToolSpec(tool["name"], tool.get("description", ""), tool["input_schema"])
    except (KeyError, TypeError, AttributeError):
        raise ValueError(
            "A tool must be a ToolSpec or a dict with name, description and input_schema."
        ) from None
