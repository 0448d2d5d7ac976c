"""Bot tokens kept out of every log line: Telegram's request URLs hold the token
(``/bot<token>/getUpdates``) and httpx logs each request's URL at INFO, so every record the
process makes, its traceback too, is scrubbed of the tokens before any handler sees it."""

from __future__ import annotations

import logging
import traceback
from typing import Any, Final

MASK: Final = "<bot token>"
_secrets: set[str] = set()
_installed = False


def hide_in_logs(secret: str) -> None:
    """From now on, ``secret`` appears in no log record (message, arguments or traceback)."""
    global _installed
    if len(secret) >= 8:
        _secrets.add(secret)
    if _installed:
        return
    _installed = True
    make = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        scrub(record)
        return record

    logging.setLogRecordFactory(factory)


def redacted(text: str) -> str:
    for secret in _secrets:
        text = text.replace(secret, MASK)
    return text


def scrub(record: logging.LogRecord) -> None:
    """Replace the tokens in ``record``'s message and traceback."""
    if not _secrets:
        return
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: the handler reports it as usual
        return
    clean = redacted(message)
    if clean != message:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[1] is not None:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        record.exc_text = redacted(text)
