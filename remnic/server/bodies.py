"""Request bodies for the HTTP handler: Content-Length framing, the size limit, and the answer to
a body over it (413 at once, without waiting for a body the client may never send).

:class:`BodyReading` is mixed into :class:`remnic.server.http.Handler`. A refused or timed-out
request ends with a lingering close (until the request's deadline, for at most what the client
announced), so a client still sending reads its error response instead of a broken pipe or a reset.
"""

from __future__ import annotations

import socket
from email.message import Message
from io import BufferedIOBase
from typing import Any

from remnic.errors import ValidationError

from .errors import BodyTooLarge, InvalidJson, LengthRequired, RequestTimeout, parse_json
from .mcp import ID_SCAN_BYTES
from .transport import LINGER_BYTES, LINGER_S, REFUSED_BODY_WAIT_S, DeadlineReader, content_length_value


class ClientGone(Exception):
    """The client closed the connection (or stopped reading) mid-request: nobody to answer."""


class BodyReading:
    """The handler's body reading (before ``BaseHTTPRequestHandler`` in its bases)."""

    headers: Message
    rfile: BufferedIOBase
    wfile: BufferedIOBase
    reader: DeadlineReader
    connection: Any
    close_connection: bool
    server: Any  # the RemnicHTTPServer (its settings); typed on the handler
    _body_pending: bool
    _refused_head: bytes
    _linger: int
    _expect_continue: bool

    def _content_length_header(self) -> int | None:
        """The announced length; -1 when it is not digits (refused as a framing problem: see _dispatch)."""
        raw = self.headers.get("Content-Length")
        if raw is None:
            return None
        value = content_length_value(raw)
        return -1 if value is None else value

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise LengthRequired("chunked request bodies are not supported; send Content-Length")
        length = self._content_length_header()
        if length is None or length == 0:
            return b""
        if length < 0:
            self.close_connection = True
            raise ValidationError.single("Content-Length", "must be a number of bytes, digits only")
        limit = self.server.settings.server.max_body_bytes
        if length > limit:
            self._discard(length)
            shown = f"{length} bytes" if length < 2**63 else "more than 10^18 bytes"
            raise BodyTooLarge(f"request body is {shown}; the limit is {limit} (server.maxBodyBytes)")
        try:
            self._continue()
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

    def _continue(self) -> None:
        """``100 Continue`` for a client that asked for it (``Expect: 100-continue``), sent only now
        that its body is wanted: a request refused before this (401, 404, 413…) gets its final status
        at once instead of an invitation to send a body that would not be read (RFC 9110 §10.1.1)."""
        if self._expect_continue:
            self._expect_continue = False
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _discard(self, length: int) -> None:
        """A body over the limit: answered 413 at once, then the connection is closed.

        Only its front is read, what arrives within ``REFUSED_BODY_WAIT_S`` (an oversized MCP
        request's error echoes the id found there: leading_id); nothing when the client waits for
        ``100 Continue``, which it never gets. The rest is never waited for: a client may announce a
        body it never sends. The lingering close after the answer swallows what the client is still
        sending, at most the rest of what it announced.
        """
        self.close_connection = True
        wanted = 0 if self._expect_continue else min(length, ID_SCAN_BYTES)
        head = b""
        try:
            if wanted:
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
        then swallow what it is still sending, at most ``budget`` bytes, until it stops (EOF) or the
        request's deadline passes (at least ``LINGER_S``), so a client that sends its whole body
        before reading reads that response instead of failing with a broken pipe or a reset when we
        close mid-upload. A stalled client holds the connection no longer than a request may."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.reader.linger(LINGER_S)
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
            self._refused_head = data  # an MCP request's id is read from it (leading_id)
            raise InvalidJson(f"request body is {exc.message}") from None
