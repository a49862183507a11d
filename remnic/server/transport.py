"""Connection handling that keeps the HTTP server up under slow, idle, flooding or vanishing clients.

- :class:`DeadlineReader` reads a request against one deadline for the whole request
  (request line, headers and body), not a timeout per read: a client sending a byte a
  second is cut off when the deadline passes. Between requests on a keep-alive
  connection it waits at most the idle timeout for the next request's first byte.
- :class:`ConnectionSlots` caps open connections and :class:`WorkerPool` runs them on at
  most that many threads; a connection beyond the cap is answered ``503`` from the
  accepting thread (:func:`refuse`) and never gets a thread of its own.
- :class:`HostCheck` accepts only Host headers that name this server (DNS-rebinding
  defence: a page on ``evil.example`` rebound to 127.0.0.1 still sends ``Host: evil.example``).
- :func:`framing_problem` finds what makes a request's framing ambiguous: a malformed header
  line, a header it carries at most once repeated, a ``Content-Length`` that is not digits.
"""

from __future__ import annotations

import io
import ipaddress
import logging
import queue
import re
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from email.message import Message
from typing import Any

from remnic.render.xray import dumps_json

log = logging.getLogger("remnic.server")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")
LINGER_S = 1.0
"""How long a refused connection stays half-open, so the client reads the 503 instead of a reset; also
the least a lingering close after an error response lasts (see :meth:`DeadlineReader.linger`)."""
LINGER_MAX_S = 5.0
"""The longest a lingering close after an error response lasts, whatever the request's deadline: long
enough for a local client to finish sending a refused body and read its answer, short enough that slow
uploaders refused with 413 cannot keep the connection slots from good requests for a whole deadline."""
MAX_LINGERING = 256
"""Refused connections kept half-open at once; beyond this the oldest is closed at once."""
REFUSED_BODY_WAIT_S = 0.5
"""How long a body over ``server.maxBodyBytes`` is waited for before its 413 (only its front is
read, for an MCP request's id): a client may announce a body and never send it."""
LINGER_BYTES = 64 * 1024 * 1024
"""At most this much of what a client is still sending is swallowed by a lingering close (which
also ends at the request's deadline, or ``LINGER_S`` after the response when that is later)."""
SINGLE_HEADERS = ("Content-Length", "Host")
"""Headers a request carries at most once (RFC 9112 §6.3 and §3.2): repeated, where the body ends or
which server is meant is ambiguous (the request-smuggling shape). Refused even when the copies agree:
no client sends one twice, so refusing is simpler than judging which repeats are harmless."""


class DeadlineReader(io.RawIOBase):
    """A socket's read side with a deadline per phase instead of a timeout per ``recv``.

    ``await_request`` starts the idle phase (the next request's first byte must come
    within ``idle_s``); the first byte received starts the request phase (the rest of the
    request must come within ``request_s`` of it). ``expired`` says which deadline passed.
    """

    def __init__(self, sock: socket.socket, *, request_s: float, idle_s: float) -> None:
        super().__init__()
        self.sock = sock
        self.request_s = request_s
        self.idle_s = idle_s
        self.deadline = time.monotonic() + idle_s
        self.in_request = False
        self.started: float | None = None
        """When the current request's first byte came (its deadline is ``request_s`` later)."""
        self.expired: str | None = None

    def readable(self) -> bool:
        return True

    def await_request(self) -> None:
        self.deadline = time.monotonic() + self.idle_s
        self.in_request = False
        self.started = None
        self.expired = None

    def linger(self, grace: float) -> None:
        """Allow reads until the request's own deadline, or for ``grace`` seconds when that is later,
        never more than ``LINGER_MAX_S`` (a lingering close: a client still uploading reads its
        response, and a stalled one soon gives its connection slot back)."""
        now = time.monotonic()
        ends = self.started + self.request_s if self.started is not None else now
        self.deadline = min(max(ends, now + grace), now + LINGER_MAX_S)
        self.in_request = True

    def cap(self, seconds: float) -> None:
        """Allow reads for at most ``seconds`` more, never past the request's own deadline."""
        self.deadline = min(self.deadline, time.monotonic() + seconds)
        self.in_request = True

    def readinto(self, buffer: Any) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return self._expire()
        self.sock.settimeout(remaining)
        try:
            n = self.sock.recv_into(buffer)
        except TimeoutError:
            return self._expire()
        if n and not self.in_request:
            self.in_request = True
            self.started = time.monotonic()
            self.deadline = self.started + self.request_s
        return n

    def _expire(self) -> int:
        self.expired = "request" if self.in_request else "idle"
        raise TimeoutError(f"{self.expired} deadline passed")


class SocketWriter(io.BufferedIOBase):
    """Unbuffered writes straight to the socket (``sendall``: its timeout bounds the whole write)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self.sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.sock.sendall(data)
        with memoryview(data) as view:
            return view.nbytes


class ConnectionSlots:
    """At most ``limit`` connections open at once; ``try_acquire`` never blocks."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self._lock = threading.Lock()

    def try_acquire(self) -> bool:
        with self._lock:
            if self.active >= self.limit:
                return False
            self.active += 1
            return True

    def release(self) -> None:
        with self._lock:
            self.active -= 1


class WorkerPool:
    """Runs ``work(item)`` on daemon threads, starting one only when no started one is free.

    Each submit claims a free worker or starts a new one, so with ``ConnectionSlots`` in
    front (one item per open connection) no item waits and no more than ``size`` threads
    ever exist.
    """

    def __init__(self, size: int, work: Callable[[Any], None], name: str = "remnic-http-worker") -> None:
        self.size = size
        self.work = work
        self.name = name
        self.threads = 0
        self._free = 0
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()

    def submit(self, item: Any) -> None:
        with self._lock:
            if self._free > 0:
                self._free -= 1
            else:
                self.threads += 1
                threading.Thread(target=self._run, name=f"{self.name}-{self.threads}", daemon=True).start()
        self._queue.put(item)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                self.work(item)
            except Exception:
                log.exception("connection worker failed")
            with self._lock:
                self._free += 1


def busy_response(limit: int, retry_after_s: int = 1) -> bytes:
    """The whole ``503 server_busy`` response a connection over the cap gets."""
    body = dumps_json(
        {
            "error": f"server busy: {limit} connections are open (server.maxConnections); retry in {retry_after_s}s",
            "code": "server_busy",
        }
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Server: remnic\r\n"
        "Content-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Retry-After: {retry_after_s}\r\n"
        f"X-Request-Id: {uuid.uuid4()}\r\n"
        "Cache-Control: no-store\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def _drain_nowait(sock: socket.socket) -> bool:
    """Read whatever has arrived without blocking; False once the peer has closed."""
    try:
        while True:
            chunk = sock.recv(65536, socket.MSG_DONTWAIT)
            if not chunk:
                return False
    except (BlockingIOError, InterruptedError):
        return True
    except OSError:
        return False


class Refusals:
    """Answers connections over the cap from the accepting thread, without blocking it.

    The 503 is small enough for the socket's send buffer. What the client already sent
    is read and dropped first, and the socket is then only half-closed for a moment:
    closing a socket with unread input sends a reset, which can destroy the 503 before
    the client reads it.
    """

    def __init__(self, limit: int) -> None:
        self.response = busy_response(limit)
        self._lingering: deque[tuple[float, socket.socket]] = deque()
        self.count = 0

    def refuse(self, sock: socket.socket) -> None:
        self.count += 1
        try:
            _drain_nowait(sock)
            sock.send(self.response, socket.MSG_DONTWAIT)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            _close(sock)
            return
        self._lingering.append((time.monotonic() + LINGER_S, sock))
        while len(self._lingering) > MAX_LINGERING:
            _close(self._lingering.popleft()[1])

    def sweep(self, *, everything: bool = False) -> None:
        """Close refused connections whose moment has passed (oldest first: the queue is in time order)."""
        now = time.monotonic()
        while self._lingering and (everything or self._lingering[0][0] <= now):
            sock = self._lingering.popleft()[1]
            _drain_nowait(sock)
            _close(sock)


def framing_problem(headers: Message) -> tuple[str, str] | None:
    """(header, why) for the first thing that makes where the request ends ambiguous, or None: a
    malformed header line, a repeated ``SINGLE_HEADERS`` header, a ``Content-Length`` not digits."""
    return malformed_header(headers) or repeated_header(headers) or content_length_problem(headers)


_FRAMING_DEFECTS = frozenset(("MissingHeaderBodySeparatorDefect", "InvalidHeaderDefect", "HeaderMissingRequiredValue"))


def malformed_header(headers: Message) -> tuple[str, str] | None:
    """(header, why) for a header line that is not ``name: value`` on one line, or None.

    The standard library's parser stops at such a line (``Content-Length : 5``, a space before the
    colon) and keeps it and every line after it as a "payload" beside a defect: the headers after it,
    ``Content-Length`` among them, would be lost and the body read as the next request. RFC 9112
    §5.1 says such a request MUST be refused with 400; obsolete line folding (§5.2) is refused too.
    """
    payload = headers.get_payload()
    rest = payload if isinstance(payload, str) else ""
    # Only defects of the header block itself: a multipart Content-Type makes the parser look for
    # MIME parts in a body it was never given (StartBoundaryNotFound, …), which says nothing about framing.
    framing = [d for d in headers.defects if type(d).__name__ in _FRAMING_DEFECTS]
    if rest.strip() or framing:
        line = rest.lstrip("\r\n").split("\n", 1)[0].rstrip("\r")
        name = line.split(":", 1)[0].strip() if ":" in line else ""
        shown = f"the line {line[:80]!r}" if line else "a header line"
        why = (
            f"{shown} is not a header: a header is 'Name: value' on one line, with no whitespace "
            "between the name and its colon (RFC 9112 §5.1)"
        )
        return name[:80] or "headers", why
    for name, value in headers.items():
        if "\r" in value or "\n" in value:
            return name, "is folded over several lines (obsolete line folding, RFC 9112 §5.2); send it on one line"
    return None


_DIGITS = re.compile(r"[0-9]+")


def content_length_value(raw: str) -> int | None:
    """A ``Content-Length`` value as a number, or None when it is not 1*DIGIT (around it only spaces
    and tabs): ``+36``, ``3_6`` or ``0x24`` are refused, not read as Python's ``int`` would read them.
    A number too long to be a size is more than any limit (``2**63``)."""
    digits = raw.strip(" \t")
    if _DIGITS.fullmatch(digits) is None:
        return None
    return int(digits) if len(digits.lstrip("0")) <= 18 else 2**63


def content_length_problem(headers: Message) -> tuple[str, str] | None:
    raw = headers.get("Content-Length")
    if raw is None or content_length_value(raw) is not None:
        return None
    return "Content-Length", f"must be a number of bytes, digits only (RFC 9112 §8.6), got {raw[:40]!r}"


def repeated_header(headers: Message) -> tuple[str, str] | None:
    """(header, why) for the first of ``SINGLE_HEADERS`` the request repeats, or None."""
    for name in SINGLE_HEADERS:
        values = headers.get_all(name) or []
        if len(values) > 1:
            shown = ", ".join(repr(str(v)[:40]) for v in values[:4])
            return name, f"given {len(values)} times ({shown}); a request carries it once"
    return None


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass


def _host_port(value: str) -> tuple[str, int | None]:
    """``host[:port]`` (IPv6 in brackets) as (lowercased host, port or None); port -1 when unparsable."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[: end + 1], value[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            return value, -1
        port = rest[1:]
    else:
        host, sep, port = value.rpartition(":")
        if not sep:
            host, port = value, ""
    if not port:
        return host, None
    return host, int(port) if port.isdigit() and len(port) <= 5 else -1


def _bracketed(host: str) -> str:
    host = host.strip().lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class HostCheck:
    """Which ``Host`` headers name this server.

    Accepted: 127.0.0.1, localhost and [::1], the bound address, and ``extra`` names
    (server.allowedHosts), each with the bound port (a Host without a port means 80).
    Bound to a wildcard (0.0.0.0, ::), any IP literal is accepted too: DNS rebinding
    needs a name, never an address.
    """

    def __init__(self, bind_host: str, port: int, extra: Iterable[str] = ()) -> None:
        self.port = port
        self.wildcard = bind_host.strip() in WILDCARD_HOSTS
        names = [*LOOPBACK_NAMES, *extra]
        if not self.wildcard:
            names.append(bind_host)
        self.names = tuple(dict.fromkeys(_bracketed(n) for n in names))

    def accepts(self, header: str | None) -> bool:
        if header is None:
            return True  # HTTP/1.0 tools may omit it; browsers, the rebinding vector, always send it
        host, port = _host_port(header)
        if (port if port is not None else 80) != self.port:
            return False
        return host in self.names or (self.wildcard and _is_ip_literal(host))

    def describe(self) -> str:
        accepted = ", ".join(f"{n}:{self.port}" for n in self.names)
        return accepted + (" or any IP address" if self.wildcard else "")
