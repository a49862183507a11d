"""Errors only the server surfaces raise (auth, limits, transport).

They extend :class:`remnic.errors.RemnicError`, so every surface maps them the
same way: ``code`` is the API's machine-readable code (seed 003), ``http_status``
the HTTP status, ``to_dict()`` the ``{error, code, details?}`` body.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from remnic.errors import MemoryDirGoneError as MemoryDirGoneError  # re-exported: the server raises them
from remnic.errors import ReadOnlyError as ReadOnlyError
from remnic.errors import RemnicError, UsageError, ValidationError

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays/objects a request may carry; no operation needs more than a few levels."""


class Unauthorized(RemnicError):
    code = "unauthorized"
    http_status = 401


class NamespaceForbidden(RemnicError):
    """The principal may not read (or write) the namespace.

    One message for "no such namespace" and "not yours", so a caller cannot
    probe which namespaces exist.
    """

    code = "namespace_forbidden"
    http_status = 403


class RateLimited(RemnicError):
    code = "write_rate_limited"
    http_status = 429

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class RestartNeeded(RemnicError):
    """The server runs code or settings from before a change only a restart applies (an upgrade)."""

    code = "server_restart_needed"
    http_status = 503


class StateUnusable(RemnicError):
    """A part of the state folder (``.remnic``) is of the wrong type (a folder where a file belongs, or the
    other way round): the code the write path's own refusal uses; no retry helps until a person moves it aside."""

    code = "state_dir_unusable"
    http_status = 500


class BodyTooLarge(UsageError):
    code = "request_body_too_large"
    http_status = 413


class InvalidJson(UsageError):
    code = "invalid_json"


class InvalidJsonObject(UsageError):
    code = "invalid_json_object"


def parse_json(data: bytes | str) -> Any:
    """A request body (HTTP) or message (MCP stdio) as JSON, or InvalidJson for anything hostile.

    Bytes that are not UTF-8 come back as lone surrogates (U+DC80..U+DCFF) inside the strings
    that hold them, which operation validation refuses naming the field (see
    ``memfile.validate.strings_problems``); only when the JSON itself is broken too is it an
    InvalidJson naming the byte offset. Besides syntax errors this refuses what ``json.loads`` turns into other
    exceptions: nesting deep enough to exhaust the recursion limit (``RecursionError``) and
    integers longer than Python's digit limit (``ValueError``); and it refuses nesting deeper
    than ``MAX_JSON_DEPTH``, which would otherwise hit the recursion limit later, in
    validation, fingerprinting or serialisation.
    """
    undecodable: UnicodeDecodeError | None = None
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            # Parse anyway, each bad byte kept as a lone surrogate (U+DC80..U+DCFF): validation then
            # names the field holding it, and an MCP request keeps its id for a proper tool error.
            undecodable = exc
            text = data.decode("utf-8", "surrogateescape")
    else:
        text = data
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if undecodable is not None:
            bad = undecodable.object[undecodable.start]
            raise InvalidJson(
                f"not UTF-8 ({undecodable.reason}: byte 0x{bad:02X} at byte offset {undecodable.start})"
            ) from None
        raise InvalidJson(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InvalidJson(f"not acceptable JSON: nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        # Python's own message suggests sys.set_int_max_str_digits(), which no client can call.
        why = _long_integer(text) if "integer string conversion" in str(exc) else str(exc)[:200]
        raise InvalidJson(f"not acceptable JSON: {why}") from None
    if _depth_exceeds(value, MAX_JSON_DEPTH):
        raise InvalidJson(f"not acceptable JSON: nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _long_integer(text: str) -> str:
    """Which integer is over Python's digit limit, in the client's terms (its key when it has one)."""
    limit = sys.get_int_max_str_digits()
    keyed = re.search(rf'"((?:[^"\\]|\\.){{1,200}})"\s*:\s*-?\d{{{limit + 1}}}', text)
    return f"an integer has more than {limit:,} digits" + (f" (field {keyed.group(1)!r})" if keyed else "")


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


class RouteNotFound(RemnicError):
    code = "not_found"
    http_status = 404


class NotProvided(RemnicError):
    """A route of the original Remnic that remnic deliberately does not provide (docs/server.md)."""

    code = "not_implemented"
    http_status = 501


class MethodNotAllowed(RemnicError):
    code = "method_not_allowed"
    http_status = 405

    def __init__(self, message: str, *, allow: list[str]) -> None:
        super().__init__(message)
        self.allow = allow


class LengthRequired(UsageError):
    code = "length_required"
    http_status = 411


class ForbiddenOrigin(RemnicError):
    """A browser page from another origin (DNS rebinding, CSRF) tried to call the local server."""

    code = "forbidden_origin"
    http_status = 403


class IdempotencyConflict(ValidationError):
    code = "idempotency_conflict"
    http_status = 409


class MisdirectedHost(RemnicError):
    """The Host header names some other server: a DNS-rebinding page, or a misconfigured proxy."""

    code = "host_not_allowed"
    http_status = 421


class RequestTimeout(UsageError):
    """The client was still sending its request when the whole-request deadline passed."""

    code = "request_timeout"
    http_status = 408
