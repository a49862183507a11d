"""MCP (Model Context Protocol) over JSON-RPC 2.0, independent of the transport.

:class:`McpServer` turns one decoded JSON-RPC message into a response (or
nothing, for notifications); ``run_stdio`` feeds it newline-delimited messages
from stdin, and the HTTP server feeds it ``POST /mcp`` bodies. Tools are the
API operations, run through the same :class:`~remnic.server.api.Api` as the HTTP
routes, so a tool's text content is byte-for-byte the HTTP response body and its
``structuredContent`` the same object, described by the tool's ``outputSchema``.

Tool names: ``remnic_<op>`` by default, a name every client accepts
(``^[a-zA-Z0-9_-]{1,64}$``); ``mcp.toolNames`` lists the seed's dotted ``remnic.<op>``
with the legacy ``engram.<op>`` instead, or all three. A call may use any of the
three spellings whatever is listed, and the original's own names where they differ
(``memory_entities_list``: :data:`CALL_ALIASES`).

Protocol negotiation is the initialize handshake (initialize → result →
notifications/initialized); a client asking for a version we do not speak gets
our latest and decides itself. ``server/discover`` (the 2026 stateless probe) is
answered "method not found", which tells clients to fall back to initialize.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import uuid
from dataclasses import dataclass
from typing import IO, Any

from remnic.errors import RemnicError
from remnic.version import __version__

from .api import Api
from .errors import InvalidJson, parse_json
from .outputs import OUTPUT_SCHEMAS
from .outputs_agents import store_output
from .params import Operation
from .reply import Reply, error_reply
from .schema import OPERATIONS

log = logging.getLogger("remnic.server")

SUPPORTED_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]
NAME_STYLES = ("underscore", "dotted", "both")
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What clients that map tools to function names accept (Anthropic's API, Codex)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def spellings(op: str) -> tuple[str, str, str]:
    """Every name a call may use for an operation: ``remnic_<op>``, ``remnic.<op>``, ``engram.<op>``."""
    return (f"remnic_{op}", f"remnic.{op}", f"engram.{op}")


def listed_names(op: str, style: str) -> tuple[str, ...]:
    """The names ``tools/list`` shows for an operation under ``mcp.toolNames``; the first is canonical."""
    underscore, dotted, legacy = spellings(op)
    return {"underscore": (underscore,), "dotted": (dotted, legacy), "both": (underscore, dotted, legacy)}[style]


CALL_ALIASES: dict[str, str] = {"memory_entities_list": "memory_entities"}
"""The original Remnic's names of an operation remnic names otherwise: accepted on calls in all three
spellings, never listed."""
TOOL_NAMES: dict[str, str] = {name: op.name for op in OPERATIONS.values() if op.tool for name in spellings(op.name)}
"""Every tool name that may be listed → its operation."""
ALIAS_NAMES: dict[str, str] = {name: op for alias, op in CALL_ALIASES.items() for name in spellings(alias)}
"""The names of :data:`CALL_ALIASES` in every spelling → the operation they run."""
OUTPUTS: dict[str, dict[str, Any]] = {
    **OUTPUT_SCHEMAS,
    "memory_capture": store_output(OUTPUT_SCHEMAS["memory_store"], "memory_capture"),
}
"""Each tool's outputSchema (memory_capture answers as memory_store does, naming itself)."""


def tool_hints(op: Operation) -> dict[str, bool]:
    """MCP tool hints: read-only unless a write (entity reads show pages without writing them); a write is
    destructive only when it may take something out of use (hosts ask before those)."""
    read_only = not op.write
    out = {"readOnlyHint": read_only, "openWorldHint": False}
    if not read_only:
        out["destructiveHint"] = op.destructive
    return out


def instructions(style: str) -> str:
    recall, store, xray = (listed_names(op, style)[0] for op in ("recall", "memory_store", "recall_xray"))
    return (
        f"remnic is a git-backed memory. Use {recall} before answering questions about the user or the "
        f"project, {store} to save a durable fact/decision/preference, and {xray} to see "
        "why recall returned what it did. Every write is a git commit."
    )


@dataclass
class McpSession:
    """Per-connection state. HTTP is stateless (each POST stands alone); stdio is one session."""

    stateless: bool = False
    initialized: bool = False
    protocol_version: str | None = None
    client_name: str | None = None


def _valid_id(msg_id: Any) -> bool:
    """MCP request ids are strings or integers (never null, never a boolean)."""
    return isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool)


def _error(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


def _result(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


class McpServer:
    def __init__(self, api: Api, *, surface: str = "mcp") -> None:
        self.api = api
        self.surface = surface
        self.style = api.settings.mcp.tool_names

    def listed(self) -> dict[str, str]:
        """The names tools/list shows → operation: every canonical name first, then the aliases."""
        ops = [name for name, op in self.api.operations.items() if op.tool]
        rows = [listed_names(op, self.style) for op in ops]
        return {names[i]: op for i in range(3) for op, names in zip(ops, rows) if i < len(names)}

    def tools(self) -> list[dict[str, Any]]:
        out = []
        for name, op_name in self.listed().items():
            op = self.api.operation(op_name)  # limits and defaults from the settings in use
            canonical = listed_names(op_name, self.style)[0]
            alias = ""
            if name != canonical:
                alias = f"({'legacy ' if name.startswith('engram.') else ''}alias of {canonical}) "
            out.append(
                {
                    "name": name,
                    "title": op_name.replace("_", " "),
                    "description": alias + op.description,
                    "inputSchema": op.input_schema(),
                    "outputSchema": OUTPUTS[op_name],
                    "annotations": tool_hints(op),
                }
            )
        return out

    # --- dispatch ---

    def handle(self, message: Any, principal: str, session: McpSession) -> dict[str, Any] | None:
        """The response to one JSON-RPC message, or None when none is due (notifications, responses)."""
        if isinstance(message, list):
            return _error(None, INVALID_REQUEST, "JSON-RPC batches are not supported (removed in MCP 2025-06-18)")
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, f"a JSON-RPC message must be an object, got {type(message).__name__}")
        # Errors about a malformed request still echo its id when the id itself is usable.
        echo = message.get("id") if _valid_id(message.get("id")) else None
        if message.get("jsonrpc") != "2.0":
            return _error(echo, INVALID_REQUEST, 'not a JSON-RPC 2.0 message (expected "jsonrpc": "2.0")')
        method = message.get("method")
        if method is None:
            if "result" in message or "error" in message:
                return None  # a response to a server→client request; we send none, so nothing to match
            return _error(echo, INVALID_REQUEST, 'a request needs a "method" (a response needs "result" or "error")')
        is_request = "id" in message
        msg_id = message.get("id")
        if is_request and not _valid_id(msg_id):
            return _error(None, INVALID_REQUEST, "request id must be a string or an integer")
        if not isinstance(method, str):
            return _error(msg_id if is_request else None, INVALID_REQUEST, "method must be a string")
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _error(msg_id, INVALID_PARAMS, "params must be an object") if is_request else None
        if not is_request:
            self._notify(method, params, session)
            return None
        try:
            return self._request(msg_id, method, params, principal, session)
        except Exception:
            request_id = str(uuid.uuid4())
            log.exception("internal error in MCP %s (request id %s)", method, request_id)
            return _error(msg_id, INTERNAL_ERROR, f"internal error; see the server log for request id {request_id}")

    def _notify(self, method: str, params: dict[str, Any], session: McpSession) -> None:
        if method == "notifications/initialized":
            session.initialized = True
        # notifications/cancelled and others: requests here run to completion quickly; nothing to do.

    def _request(
        self, msg_id: Any, method: str, params: dict[str, Any], principal: str, session: McpSession
    ) -> dict[str, Any]:
        if method == "initialize":
            return _result(msg_id, self._initialize(params, session))
        if method == "ping":
            return _result(msg_id, {})
        if method not in ("tools/list", "tools/call"):
            return _error(
                msg_id,
                METHOD_NOT_FOUND,
                f"method not found: {method!r}; this server implements initialize, ping, tools/list, tools/call",
            )
        if not session.stateless and session.protocol_version is None:
            return _error(msg_id, INVALID_REQUEST, f"{method} before initialize: send initialize first")
        if method == "tools/list":
            return _result(msg_id, {"tools": self.tools()})
        return self._call_tool(msg_id, params, principal)

    def _initialize(self, params: dict[str, Any], session: McpSession) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in SUPPORTED_VERSIONS else LATEST_VERSION
        session.protocol_version = version
        info = params.get("clientInfo")
        session.client_name = info.get("name") if isinstance(info, dict) else None
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "remnic", "title": "remnic memory", "version": __version__},
            "instructions": instructions(self.style),
        }

    def _call_tool(self, msg_id: Any, params: dict[str, Any], principal: str) -> dict[str, Any]:
        name = params.get("name")
        op_name = (TOOL_NAMES.get(name) or ALIAS_NAMES.get(name)) if isinstance(name, str) else None
        if op_name is None:
            valid = list(self.listed())
            if name is None:
                return _error(
                    msg_id,
                    INVALID_PARAMS,
                    f"params.name is required: the tool to call, one of {', '.join(valid)}",
                    {"validTools": valid},
                )
            return _error(
                msg_id,
                INVALID_PARAMS,
                f"unknown tool {name!r}; valid tools: {', '.join(valid)} (each also callable as "
                "remnic_<name>, remnic.<name> or engram.<name>)",
                {"validTools": valid},
            )
        arguments = params.get("arguments")
        try:
            reply = self.api.call(op_name, principal, {} if arguments is None else arguments, surface=self.surface)
        except RemnicError as exc:
            # Tool errors (bad input, not found, forbidden, rate limited) go back to the model as results
            # it can read and correct, listing valid options; protocol errors are for broken clients.
            return _result(msg_id, self._content(error_reply(exc), is_error=True))
        except Exception:
            request_id = str(uuid.uuid4())
            log.exception("internal error in tool %s (request id %s)", name, request_id)
            body = {
                "error": f"internal error; see the server log for request id {request_id}",
                "code": "internal_error",
                "requestId": request_id,
            }
            return _result(msg_id, self._content(Reply(500, body), is_error=True))
        return _result(msg_id, self._content(reply, is_error=False))

    @staticmethod
    def _content(reply: Reply, *, is_error: bool) -> dict[str, Any]:
        """A tool result: the body as text, and as structuredContent when it is the tool's output.

        An error body (``{error, code, details}``) is not the shape the outputSchema describes,
        and some clients validate structuredContent even on errors, so errors carry text only.
        """
        result: dict[str, Any] = {"content": [{"type": "text", "text": reply.text}], "isError": is_error}
        if not is_error:
            result["structuredContent"] = reply.body
        return result


# --- stdio transport ---


def run_stdio(
    server: McpServer,
    principal: str,
    *,
    max_message_bytes: int,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> int:
    """Serve one MCP session over newline-delimited JSON on stdin/stdout until stdin closes."""
    if stdout is None:
        # The protocol owns fd 1: anything else printing to sys.stdout would corrupt it, so stray
        # prints go to stderr and we write through a private duplicate of the original stdout.
        stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
        sys.stdout = sys.stderr
    reader = stdin if stdin is not None else sys.stdin.buffer
    session = McpSession(stateless=False)

    def send(obj: dict[str, Any]) -> None:
        # backslashreplace: a lone surrogate echoed from a refused input goes out as a JSON \uXXXX escape.
        stdout.write(encode(obj).encode("utf-8", "backslashreplace") + b"\n")
        stdout.flush()

    while True:
        line = reader.readline(max_message_bytes + 2)
        if not line:
            return 0
        if len(line) > max_message_bytes and not line.endswith(b"\n"):
            msg_id = leading_id(line)
            while line and not line.endswith(b"\n"):  # discard the rest of the oversized message
                line = reader.readline(65536)
            too_big = f"message larger than {max_message_bytes} bytes (server.maxBodyBytes)"
            send(_error(msg_id, INVALID_REQUEST, too_big))
            continue
        if not line.strip():
            continue
        try:
            message = parse_json(line)
        except InvalidJson as exc:  # syntax, encoding, and hostile nesting: the session goes on
            # With the request's id when a plain scan finds it (JSON refused for its depth or a long
            # integer is well-formed around it): an answer with a null id leaves the client waiting.
            send(_error(leading_id(line, len(line)), PARSE_ERROR, f"message is {exc.message}"))
            continue
        try:
            response = server.handle(message, principal, session)
        except Exception:
            request_id = str(uuid.uuid4())
            log.exception("internal error handling an MCP message (request id %s)", request_id)
            msg_id = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
            response = _error(msg_id, INTERNAL_ERROR, f"internal error; see the server log for request id {request_id}")
        if response is not None:
            send(response)


ID_SCAN_BYTES = 4096
"""How far into an oversized message :func:`leading_id` looks: clients write ``id`` before ``params``."""
_ID_VALUE = re.compile(rb'\s*:\s*(-?(?:0|[1-9][0-9]{0,17})|"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]){1,256}")\s*[,}]')
_TOKEN = re.compile(rb'[{}\[\]"]')
_COLON = re.compile(rb"\s*:")
_STRING_END = re.compile(rb'(?:[^"\\]|\\.)*"', re.DOTALL)


def leading_id(line: bytes, scan: int = ID_SCAN_BYTES) -> str | int | None:
    """The id of an oversized or refused JSON-RPC request, read from its first ``scan`` bytes, or None.

    An error with a null id matches no pending request, so a client would wait for its answer
    forever. Only keys of the top-level object count (never one inside ``params``): an ``"id"``
    with a plain integer or short string value followed by ``,`` or ``}``, once, beside a
    ``"method"`` key (a response carries an id too, and is not ours to answer); else None.
    """
    head = line[:scan]
    if not head.lstrip().startswith(b"{"):
        return None
    depth, pos, found, method = 0, 0, None, False
    while (m := _TOKEN.search(head, pos)) is not None:
        char, pos = m.group(), m.end()
        if char in b"{[":
            depth += 1
        elif char in b"}]":
            depth -= 1
            if depth <= 0:
                break
        else:
            end = _STRING_END.match(head, pos)
            if end is None:
                break  # the scan stops inside a string
            key, pos = head[pos : end.end() - 1], end.end()
            if depth != 1:
                continue
            method = method or (key == b"method" and _COLON.match(head, pos) is not None)
            value = _ID_VALUE.match(head, pos) if key == b"id" else None
            if value is not None:
                if found is not None:
                    return None  # a repeated id: which one the client meant is unclear
                try:
                    found = json.loads(value.group(1))
                except ValueError:  # a string id that is not UTF-8
                    return None
                pos = value.end(1)
    return found if method else None


def encode(response: dict[str, Any]) -> str:
    """A JSON-RPC message for the stdio transport, whose framing is one message per line: compact.

    (Over HTTP a response is a body like any other and goes through ``dumps_json``.)
    """
    return json.dumps(response, ensure_ascii=False, separators=(",", ":"))


__all__ = [
    "ALIAS_NAMES",
    "CALL_ALIASES",
    "NAME_STYLES",
    "SUPPORTED_VERSIONS",
    "TOOL_NAMES",
    "TOOL_NAME_RE",
    "McpServer",
    "McpSession",
    "encode",
    "leading_id",
    "listed_names",
    "run_stdio",
    "spellings",
    "tool_hints",
]
