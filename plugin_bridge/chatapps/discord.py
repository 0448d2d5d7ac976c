"""The Discord bot (``[discord]``): hikari's ``GatewayBot`` with its REST base at ``api_url``
(the gateway is the address ``GET /gateway/bot`` answers). Direct messages, and messages
that mention the bot in a server, become :class:`~.core.Incoming` once their id is recorded
durably (a re-delivered one is skipped); buttons are component interactions, the commands
are slash commands (and read when typed in a DM). Hikari waits out a 429 itself (its
``retry_after`` and ``Retry-After``); one longer than it will wait is the core's RateLimited."""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from plugin_bridge.chatapps.core import (
    COMMANDS,
    ChatCore,
    Incoming,
    SentFile,
    document_kind,
)
from plugin_bridge.chatapps.store import ChatAppStore
from plugin_bridge.chatapps.stream import BotRefused, RateLimited
from plugin_bridge.chatapps.text import DISCORD_LIMIT, split_text

if TYPE_CHECKING:
    from collections.abc import Iterator

    import hikari

else:
    hikari = lazy.module("hikari")

logger = logging.getLogger(__name__)

NAME: Final = "discord"
OPTION: Final = "text"


class DiscordChat:
    """One Discord channel (a DM, or a server's channel; see :class:`~.stream.ChatSurface`)."""

    def __init__(self, rest: hikari.api.RESTClient, channel: int) -> None:
        self.rest = rest
        self.channel = channel

    @property
    def chat_id(self) -> str:
        return str(self.channel)

    def pieces(self, text: str) -> list[tuple[str, str]]:
        return [(piece, piece) for piece in split_text(text.strip(), DISCORD_LIMIT) if piece]

    def preview(self, text: str) -> str:
        return text if len(text) <= DISCORD_LIMIT else f"{text[: DISCORD_LIMIT - 1]}…"

    async def send(self, text: str, *, formatted: bool) -> str:
        with _translated():
            message = await self.rest.create_message(self.channel, text)
        return str(message.id)

    async def edit(self, message: str, text: str, *, formatted: bool) -> None:
        with _translated():
            await self.rest.edit_message(self.channel, int(message), text, components=[])

    async def typing(self) -> None:
        with _translated():
            await self.rest.trigger_typing(self.channel)

    async def ask(self, text: str, token: str) -> str:
        row = self.rest.build_message_action_row()
        row.add_interactive_button(hikari.ButtonStyle.SUCCESS, f"approve:{token}", label="Approve")
        row.add_interactive_button(hikari.ButtonStyle.DANGER, f"deny:{token}", label="Deny")
        with _translated():
            message = await self.rest.create_message(self.channel, text, component=row)
        return str(message.id)


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    try:
        yield None
    except hikari.RateLimitTooLongError as exc:
        raise RateLimited(exc.retry_after) from None


def diagnose(exc: BaseException) -> str:
    """The sentence for a failed connection; BotRefused for a token Discord refuses."""
    if isinstance(exc, hikari.GatewayServerClosedConnectionError) and exc.code == 4014:
        raise BotRefused(
            "Discord refused the bot's intents: turn on Message Content Intent on the "
            "Developer Portal's Bot page."
        )
    if isinstance(exc, hikari.UnauthorizedError):
        raise BotRefused(
            "The bot token was refused (GET /users/@me): paste the token of the Developer "
            "Portal's Bot page into bot_token in [discord]."
        )
    if isinstance(exc, hikari.HTTPError | hikari.GatewayConnectionError | OSError):
        return "Discord cannot be reached (the network is down, or api_url is wrong)"
    logger.warning("discord: the bot stopped", exc_info=exc)
    return f"The bot stopped ({type(exc).__name__})"


class DiscordBot:
    """One gateway session handing events to ``core`` (see the module docstring)."""

    def __init__(self, core: ChatCore, token: str, api_url: str) -> None:
        self.core = core
        self.token = token
        self.api_url = api_url
        self.bot = self._session()
        self.tried = False
        self.me = 0

    def _session(self) -> hikari.GatewayBot:
        intents = (
            hikari.Intents.DM_MESSAGES
            | hikari.Intents.GUILD_MESSAGES
            | hikari.Intents.MESSAGE_CONTENT
        )
        bot = hikari.GatewayBot(
            self.token,
            intents=intents,
            rest_url=self.api_url,
            logs=None,
            banner=None,
            suppress_optimization_warning=True,
            auto_chunk_members=False,
        )
        bot.subscribe(hikari.MessageCreateEvent, self._on_message)
        bot.subscribe(hikari.InteractionCreateEvent, self._on_interaction)
        return bot

    async def start(self) -> None:
        """Connect to the gateway (GET /gateway/bot checks the token), register the commands;
        after a failure, a new gateway session (answers under way keep the old REST client
        while it lasts)."""
        if self.tried:
            await self._close(self.bot)
            self.bot = self._session()
        self.tried = True
        await self.bot.start(check_for_updates=False)
        me = await self.bot.rest.fetch_my_user()
        self.me = int(me.id)
        commands = []
        for name, description in COMMANDS:
            builder = self.bot.rest.slash_command_builder(name, description)
            if name in ("note", "search"):
                builder.add_option(
                    hikari.CommandOption(
                        type=hikari.OptionType.STRING,
                        name=OPTION,
                        description="What to add" if name == "note" else "What to look for",
                        is_required=True,
                    )
                )
            commands.append(builder)
        await self.bot.rest.set_application_commands(self.me, commands)

    async def poll(self) -> None:
        await self.bot.join()
        raise ConnectionError("the gateway session ended")

    async def _take(self, key: str) -> bool:
        take = functools.partial(ChatAppStore.take, bot=NAME, key=key)
        if await self.core.store.execute(take):
            return True
        logger.info("discord: %s was handled before: skipped", key)
        return False

    async def _on_message(self, event: hikari.MessageCreateEvent) -> None:
        message = event.message
        if message.author.is_bot or not await self._take(f"message:{message.id}"):
            return
        text = message.content or ""
        mention = f"<@{self.me}>"
        mentioned = mention in text
        private = isinstance(event, hikari.DMMessageCreateEvent)
        try:
            await self.core.handle(
                Incoming(
                    user=int(message.author.id),
                    chat=DiscordChat(self.bot.rest, int(message.channel_id)),
                    text=text.replace(mention, "").strip(),
                    private=private,
                    mentioned=mentioned,
                    attachment=_attachment(message),
                )
            )
        except Exception:
            logger.exception("discord: message %s failed", message.id)

    async def _on_interaction(self, event: hikari.InteractionCreateEvent) -> None:
        interaction = event.interaction
        if not await self._take(f"interaction:{interaction.id}"):
            return
        try:
            if isinstance(interaction, hikari.ComponentInteraction):
                choice, _, token = interaction.custom_id.partition(":")
                answer = await self.core.pressed(
                    int(interaction.user.id), token, choice == "approve"
                )
                await interaction.create_initial_response(
                    hikari.ResponseType.MESSAGE_CREATE, answer, flags=hikari.MessageFlag.EPHEMERAL
                )
            elif isinstance(interaction, hikari.CommandInteraction):
                value = next((str(o.value) for o in interaction.options or () if o.value), "")
                text = f"/{interaction.command_name} {value}".strip()
                await interaction.create_initial_response(hikari.ResponseType.MESSAGE_CREATE, text)
                await self.core.handle(
                    Incoming(
                        user=int(interaction.user.id),
                        chat=DiscordChat(self.bot.rest, int(interaction.channel_id)),
                        text=text,
                        private=interaction.guild_id is None,
                        mentioned=True,
                    )
                )
        except Exception:
            logger.exception("discord: interaction %s failed", interaction.id)

    async def aclose(self) -> None:
        await self._close(self.bot)

    @staticmethod
    async def _close(bot: hikari.GatewayBot) -> None:
        with contextlib.suppress(Exception):
            if bot.is_alive:
                await bot.close()


def _attachment(message: hikari.Message) -> SentFile | None:
    if not message.attachments:
        return None
    file = message.attachments[0]
    media = file.media_type or ""
    name = file.filename
    kind = document_kind(name, media)
    if kind == "file" and media.startswith("audio/"):
        kind = "voice"

    async def fetch() -> bytes:
        return await file.read()

    return SentFile(name, file.size, kind, fetch)
