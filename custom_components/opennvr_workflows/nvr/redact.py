"""Secrets out of log lines: stream URLs carry their token in the query string.

OpenNVR's stream URLs look like ``rtsps://nvr:8322/cam2?token=...``. Home Assistant's stream
worker redacts a URL's user, password and its ``auth``/``user``/``password`` parameters, but
not ``token``, and logs the URL in every error it retries on. The filter below rewrites such
records on the loggers it is added to, so a token never reaches the log file.
"""

from __future__ import annotations

import logging
import re

REDACTED = "****"
#: Query parameters that carry a credential in the URLs OpenNVR hands out.
_SECRET_PARAM = re.compile(
    r"(?i)([?&](?:token|jwt|access_token|auth|password|signature|sig|key)=)[^&\s'\")\]]+"
)
#: ``scheme://user:password@host``: the user information of a URL.
_USERINFO = re.compile(r"(?i)([a-z][a-z0-9+.-]*://)[^/@\s'\"]+@")
_FORMATTER = logging.Formatter()


def redact_secrets(text: str) -> str:
    """``text`` with every URL credential (query token, user information) replaced."""
    return _USERINFO.sub(rf"\1{REDACTED}@", _SECRET_PARAM.sub(rf"\1{REDACTED}", text))


class SecretFilter(logging.Filter):
    """Rewrites a record's message when it holds a secret; keeps every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_secrets(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            # Formatted here (handlers reuse ``exc_text``), so the traceback is redacted too.
            record.exc_text = _FORMATTER.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_secrets(record.exc_text)
        return True


SECRET_FILTER = SecretFilter()
