"""Secrets in what was said: never kept as a memory, never journaled or archived as they were said.

The scanner is the store's own (:mod:`remnic.memfile.secrets`): a turn that pastes an API key or says a
password ("the staging DB password is …", ``postgres://admin:…@db``) is taken with the secret
replaced by :data:`REDACTED` — for a credential said in words only its value —, and a sentence that
held one is rejected by the judge with :data:`SECRET_REASON`: a credential is no fact to recall, and
a memory file (and its name, made from its words) would put it into git history for good.
"""

from __future__ import annotations

from remnic.memfile.secrets import find_secrets, redact

REDACTED = "[REDACTED]"  # one word: no rule takes it for an aside and drops it
SECRET_REASON = "Holds a secret: never stored (store.scanSecrets)"


def redact_secrets(text: str) -> str:
    """The text with every secret the store's scanner knows replaced by :data:`REDACTED`."""
    return redact(text, REDACTED)


def holds_secret(text: str) -> bool:
    """Whether the text holds a secret, or held one before it was redacted."""
    return REDACTED in text or bool(find_secrets(text))
