"""Request bodies for the HTTP handler: Content-Length framing, the size limit, and the answer to
a body over it (413 at once, without waiting for a body the client may never send).

:class:`BodyReading` is mixed into :class:`remnic.server.http.Handler`. A refused or timed-out
request ends with a lingering close, so a client still sending reads its error response instead
of a broken pipe or a reset.
"""

from __future__ import annotations

import socket
from email.message import Message
from io import BufferedIOBase
from typing import Any

from remnic.errors import ValidationError

from .errors import BodyTooLarge, InvalidJson, LengthRequired, RequestTimeout, parse_json
from .mcp import ID_SCAN_BYTES
from .transport import LINGER_BYTES, REFUSED_BODY_WAIT_S, DeadlineReader


class ClientGone(Exception):
    """The client closed the connection (or stopped reading) mid-request: nobody to answer."""


class BodyReading:
    """The handler's body reading (before ``BaseHTTPRequestHandler`` in its bases)."""

    headers: Message
    rfile: BufferedIOBase
    reader: DeadlineReader
    connection: Any
    close_connection: bool
    server: Any  # the RemnicHTTPServer (its settings); typed on the handler
    _body_pending: bool
    _refused_head: bytes
    _linger: int

    def _content_length_header(self) -> int | None:
        raw = self.headers.get("Content-Length")
        if raw is None:
            return None
        try:
            value = int(raw)
        except ValueError:
            return -1
        return value

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise LengthRequired("chunked request bodies are not supported; send Content-Length")
        length = self._content_length_header()
        if length is None or length == 0:
            return b""
        if length < 0:
            self.close_connection = True
            raise ValidationError.single("Content-Length", "must be a non-negative integer")
        limit = self.server.settings.server.max_body_bytes
        if length > limit:
            self._discard(length)
            raise BodyTooLarge(f"request body is {length} bytes; the limit is {limit} (server.maxBodyBytes)")
        try:
            data = self.rfile.read(length)
        except TimeoutError:
            self.close_connection = True
            if self.reader.expired == "request":
                deadline = self.server.settings.server.request_timeout_s
                raise RequestTimeout(
                    f"request body not complete within {deadline:g}s (server.requestTimeoutS); connection closed"
                ) from None
            raise ClientGone() from None
        except ConnectionError:
            raise ClientGone() from None
        if len(data) < length:
            raise ClientGone()  # the client closed its side mid-body
        self._body_pending = False
        return data

    def _discard(self, length: int) -> None:
        """A body over the limit: answered 413 at once, then the connection is closed.

        Only its front is read, what arrives within ``REFUSED_BODY_WAIT_S`` (an oversized MCP
        request's error echoes the id found there: leading_id). The rest is never waited for: a
        client may announce a body it never sends. The lingering close after the answer swallows
        what the client is still sending, at most the rest of what it announced.
        """
        self.close_connection = True
        wanted = min(length, ID_SCAN_BYTES)
        head = b""
        try:
            self.reader.cap(REFUSED_BODY_WAIT_S)
            while len(head) < wanted:
                chunk = self.rfile.read1(wanted - len(head))
                if not chunk:
                    break
                head += chunk
        except OSError:  # the short wait passed or the client went away: the 413 goes out regardless
            pass
        self._refused_head = head
        self._linger = min(length - len(head), LINGER_BYTES)

    def _linger_close(self, budget: int = LINGER_BYTES) -> None:
        """Lingering close: say we are done (the client reads our error response and EOF at once),
        then swallow what it is still sending for a moment, at most ``budget`` bytes, so it reads
        that response instead of failing with a broken pipe (or a reset) when we close mid-upload."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.reader.limit(1.0)
            while budget > 0:
                chunk = self.rfile.read1(min(budget, 65536))
                if not chunk:
                    break
                budget -= len(chunk)
        except OSError:
            pass

    def _json_body(self) -> Any:
        data = self._read_body()
        if not data.strip():
            return {}
        try:
            return parse_json(data)
        except InvalidJson as exc:
            raise InvalidJson(f"request body is {exc.message}") from None
