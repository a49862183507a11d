"""The local HTTP server: routing, bearer auth, body limits, error shapes, ``POST /mcp``.

Built on the standard library's ``HTTPServer`` with a bounded worker pool: a
thread per open connection, at most ``server.maxConnections`` of them (see
:mod:`.transport` for the deadlines, the cap and the Host check; :mod:`.bodies` for
request bodies and their limit). That is plenty
for a loopback server whose work is git commits and index lookups behind the
service's own locks, and it adds no dependency and no event loop to reason about
next to the service's blocking calls. See docs/server.md for the trade-offs.

Every response carries ``X-Request-Id``; errors are ``{error, code, details?}``.
Auth runs before routing, so an unauthenticated caller learns nothing about
which paths exist.
"""

from __future__ import annotations

import errno
import io
import logging
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from remnic.config import Settings
from remnic.errors import RemnicError, ValidationError
from remnic.render.xray import dumps_json

from . import presence
from .api import Api
from .auth import Authenticator
from .bodies import BodyReading, ClientGone
from .derived import apply_http_settings
from .errors import (
    BodyTooLarge,
    ForbiddenOrigin,
    InvalidJson,
    InvalidJsonObject,
    LengthRequired,
    MethodNotAllowed,
    MisdirectedHost,
    Unauthorized,
)
from .lifecycle import GracefulStop
from .mcp import INVALID_REQUEST, PARSE_ERROR, SUPPORTED_VERSIONS, McpServer, McpSession, leading_id
from .reply import Reply, error_reply, internal_error
from .routes import http_names, query_args, route
from .transport import (
    LINGER_BYTES,
    ConnectionSlots,
    DeadlineReader,
    HostCheck,
    Refusals,
    SocketWriter,
    WorkerPool,
    framing_problem,
)

LIVEZ_PATH = "/remnic/v1/livez"
"""Answered without a token (it says only that the server runs, as a 401 would)."""
log = logging.getLogger("remnic.server")

BLANK_LINES_SKIPPED = 4
"""Empty lines ignored before a request line (RFC 9112 §2.2: a client may send a CRLF after a body)."""
_HTTP_09 = re.compile(rb"HTTP/0+\.[0-9]+")
TOKEN_QUERY_KEYS = {"token", "access_token", "accesstoken", "api_key", "apikey", "bearer", "auth", "authorization"}


class RemnicHTTPServer(GracefulStop, HTTPServer):
    allow_reuse_address = True
    request_queue_size = 512  # a burst of connects waits in the kernel, not in SYN retries
    config_watch: Any = None
    """A :class:`~.config_watch.ConfigWatch` when the settings came from config files (`remnic serve`)."""
    host_check: HostCheck
    """Which Host headers name this server (set by :func:`.derived.apply_http_settings`)."""

    def __init__(self, address: tuple[str, int], api: Api, auth: Authenticator, settings: Settings) -> None:
        self.api = api
        self.auth = auth
        self.settings = settings
        self.mcp = McpServer(api, surface="mcp")
        limits = settings.server
        self.slots = ConnectionSlots(limits.max_connections)
        self.pool = WorkerPool(limits.max_connections, self._serve_connection)
        self.refusals = Refusals(limits.max_connections)
        # Set before binding: a failed bind calls server_close, which reads it.
        self._tended = time.monotonic()
        self._tending: threading.Thread | None = None
        self.init_lifecycle()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)
        self.bind_host = address[0]
        apply_http_settings(self, settings)

    def _maybe_tend(self) -> None:
        """Between requests (serve_forever's loop): every ``observe.tendIntervalS`` a pass on its own
        thread flushes idle sessions' buffers and consolidates after flushes (`Memory.tend_observations`)."""
        every = self.settings.observe.tend_interval_s
        now = time.monotonic()
        if every <= 0 or now - self._tended < every or (self._tending is not None and self._tending.is_alive()):
            return
        self._tended = now
        self._tending = threading.Thread(target=self._tend, name="remnic-tend", daemon=True)
        self._tending.start()

    def _tend(self) -> None:
        try:
            self.api.memory.tend_observations(source="server")
        except Exception:
            log.exception("flushing idle sessions / consolidating failed; the next pass tries again")

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    # Connections: a pooled thread each, up to server.maxConnections; beyond that a 503
    # from this (the accepting) thread, which never blocks on a client.

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.try_acquire():
            self.refusals.refuse(request)
            if self.refusals.count % 100 == 1:
                log.warning(
                    "refusing connections: %d open (server.maxConnections); %d refused so far",
                    self.slots.limit,
                    self.refusals.count,
                )
            return
        self.pool.submit((request, client_address))

    def _serve_connection(self, item: tuple[Any, Any]) -> None:
        request, client_address = item
        try:
            self.finish_request(request, client_address)
        except (ConnectionError, TimeoutError, ClientGone):
            log.debug("client %s went away", client_address)
        except Exception:
            log.exception("connection from %s failed", client_address)
        finally:
            self.shutdown_request(request)
            self.slots.release()

    def service_actions(self) -> None:
        self.refusals.sweep()
        if self.check_gone():
            return
        if self.config_watch is not None:
            self.config_watch.check()  # said in the log soon after the edit, not at the next request
        self._maybe_tend()

    def server_close(self) -> None:
        self.draining = True
        super().server_close()  # the listening socket first: new connections are refused
        self.finish_in_flight()
        self.refusals.sweep(everything=True)
        if self._tending is not None:
            self._tending.join()  # a flush under way finishes its commit

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Errors of the accepting thread: a vanished client is routine, not a traceback on stderr."""
        gone = isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError))
        log.log(logging.DEBUG if gone else logging.ERROR, "connection from %s failed", client_address, exc_info=True)


class Handler(BodyReading, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: agents make many small calls
    # Headers and body go out in two writes; with Nagle on, the body waits for the client's
    # delayed ACK of the headers (~40 ms on every keep-alive response).
    disable_nagle_algorithm = True
    server: RemnicHTTPServer
    raw_requestline: bytes  # set by the base class's handle_one_request

    def version_string(self) -> str:
        return "remnic"  # no Python version in the Server header

    def setup(self) -> None:
        limits = self.server.settings.server
        self.connection = self.request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        # One deadline for the whole request (not per read), and a bounded wait between requests.
        self.reader = DeadlineReader(
            self.connection, request_s=limits.request_timeout_s, idle_s=limits.keep_alive_timeout_s
        )
        self.rfile = io.BufferedReader(self.reader)
        self.wfile = SocketWriter(self.connection)
        self._responded = False
        self._expect_continue = False

    def handle(self) -> None:
        self.close_connection = True
        while True:
            self.reader.await_request()
            self._responded = False
            # What send_error needs if the deadline passes before the request line is even read.
            self.command, self.request_version, self.requestline = "", "HTTP/1.1", ""
            self.handle_one_request()  # a passed deadline ends here as TimeoutError, closing the connection
            if self.reader.expired == "request" and not self._responded:
                self._request_timed_out()
            if self.close_connection:
                return

    def _request_timed_out(self) -> None:
        """The client was still sending when its deadline passed: tell it so, then hang up."""
        limit = self.server.settings.server.request_timeout_s
        log.info("request cut off: not complete within %gs (server.requestTimeoutS)", limit)
        self.send_error(408, f"request not complete within {limit:g}s (server.requestTimeoutS); connection closed")
        self._linger_close()

    # Every method goes through one path so unknown methods still get JSON and X-Request-Id.
    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_OPTIONS(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def _handle(self) -> None:
        self.server.started_request()
        self._linger = 0  # bytes a lingering close after the response may swallow (0: no lingering close)
        try:
            self._handle_counted()
        finally:
            self.server.finished_request()
        if self._linger:  # after the request is counted done: a stop does not wait for a slow uploader
            self._linger_close(self._linger)

    def _handle_counted(self) -> None:
        request_id = str(uuid.uuid4())
        started = time.perf_counter()
        self._body_pending = self._content_length_header() not in (None, 0)
        self._principal: str | None = None
        self._refused_head = b""
        try:
            reply = self._dispatch()
        except ClientGone:
            self.close_connection = True
            log.info(
                "%s %s %s client went away before the request was complete",
                request_id,
                self.command,
                urlsplit(self.path).path[:200],
            )
            return
        except RemnicError as exc:
            if exc.http_status >= 500:
                log.error("request %s failed: %s", request_id, exc.message)
            reply = error_reply(exc, request_id)
            if isinstance(exc, Unauthorized):
                presented = bool(self.headers.get("Authorization"))
                reply.headers["WWW-Authenticate"] = 'Bearer realm="remnic"' + (
                    ', error="invalid_token"' if presented else ""
                )
        except Exception:
            log.exception("internal error (request id %s) in %s %s", request_id, self.command, urlsplit(self.path).path)
            reply = internal_error(request_id)
        sent = self._send(reply, request_id)
        length = self._content_length_header() or 0
        if not sent:
            self._linger = 0
        elif self._body_pending and not self._linger and length > 0:
            self._linger = min(length, LINGER_BYTES)  # a body refused unread (401, 404…) the client may still send
        log.info(
            "%s %s %s %d %.1fms principal=%s%s",
            request_id,
            self.command,
            urlsplit(self.path).path[:200],
            reply.status,
            (time.perf_counter() - started) * 1000,
            self._principal or "-",
            "" if sent else " (client went away before reading the response)",
        )

    def _dispatch(self) -> Reply:
        parts = urlsplit(self.path)
        problem = framing_problem(self.headers)
        if problem is not None:
            # Where the body ends (or which server is meant) is ambiguous: the request-smuggling
            # shape (RFC 9112 §5.1, §6.3, §3.2). Refused, and nothing after it on this connection is
            # read (what the client still sends is swallowed, up to a body's limit, as it reads the 400).
            self.close_connection = True
            self._linger = self.server.settings.server.max_body_bytes
            raise ValidationError.single(*problem)
        if self.server.config_watch is not None:
            self.server.config_watch.check()  # a policy or allowedHosts edited a moment ago applies already
        self._check_host()
        if parts.path == LIVEZ_PATH and self.command in ("GET", "HEAD"):
            return Reply(200, {"status": "ok"})  # alive, nothing more: `daemon status` asks it without a token
        query_keys = {k.lower() for k in parse_qs(parts.query, keep_blank_values=True)}
        if query_keys & TOKEN_QUERY_KEYS:
            # Refused even alongside a valid header: the secret is already in somebody's logs.
            raise Unauthorized(
                "bearer tokens are accepted only in the Authorization header, never in the "
                "query string (URLs end up in logs and browser history)"
            )
        principal = self.server.auth.principal_for(self.headers.get("Authorization"))
        if principal is None:
            raise Unauthorized(
                "missing or invalid bearer token: send 'Authorization: Bearer <token>' "
                "(create one with `remnic token generate`)"
            )
        self._principal = principal
        self._check_origin()
        if parts.path == "/mcp":
            return self._mcp(principal)
        op, path_args = route(self.command, parts.path)
        if self.command == "GET":
            args: dict[str, Any] = {**query_args(op, parts.query), **path_args}
            try:
                return self.server.api.call(op, principal, args, from_query=True, surface="http")
            except ValidationError as exc:
                raise http_names(op, exc) from None
        if parts.query:
            raise ValidationError.single(
                "query", f"{self.command} {parts.path} takes a JSON body, not query parameters"
            )
        body = self._json_body()
        if not isinstance(body, dict):
            raise InvalidJsonObject(f"request body must be a JSON object, got {type(body).__name__}")
        for key, value in path_args.items():  # the URL names the target: a body naming another is a mistake
            if key in body and body[key] != value:
                raise ValidationError.single(
                    key, f"the body says {str(body[key])[:140]!r} but the URL says {value!r}; give one of them"
                )
        return self.server.api.call(op, principal, {**body, **path_args}, surface="http")

    def _check_host(self) -> None:
        """The Host header must name this server (DNS-rebinding defence), before auth and routing."""
        host = self.headers.get("Host")
        if not self.server.host_check.accepts(host):
            raise MisdirectedHost(
                f"Host {(host or '')[:100]!r} does not name this server; it answers to {self.server.host_check.describe()} "
                "(server.allowedHosts adds names). A browser page rebound to this address is refused."
            )

    def _check_origin(self) -> None:
        """Browsers send Origin; only pages served from loopback may call us (DNS-rebinding defence)."""
        origins = self.headers.get_all("Origin") or []
        if len(origins) > 1:  # a browser sends one (RFC 6454 §7.3); judging by either copy could pass a foreign one
            raise ForbiddenOrigin(f"the request gives Origin {len(origins)} times; a browser sends it once")
        origin = self.headers.get("Origin")
        if not origin:
            return
        host = urlsplit(origin).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ForbiddenOrigin(
                f"requests from origin {origin[:100]!r} are refused; this server serves local clients only"
            )

    # --- MCP over streamable HTTP (stateless: each POST stands alone; no SSE stream) ---

    def _mcp(self, principal: str) -> Reply:
        if self.command != "POST":
            raise MethodNotAllowed("MCP over HTTP takes POST only (this server opens no SSE stream)", allow=["POST"])
        try:
            message = self._json_body()
        except InvalidJson as exc:  # the id when the body holds one plainly (a client then gets its answer)
            return self._rpc_error(
                400, PARSE_ERROR, exc.message, leading_id(self._refused_head, len(self._refused_head))
            )
        except BodyTooLarge as exc:
            msg_id = leading_id(self._refused_head)
            return self._rpc_error(exc.http_status, INVALID_REQUEST, exc.message, msg_id)
        except LengthRequired as exc:
            return self._rpc_error(exc.http_status, INVALID_REQUEST, exc.message)
        version = self.headers.get("MCP-Protocol-Version")
        method = message.get("method") if isinstance(message, dict) else None
        if version and version not in SUPPORTED_VERSIONS and method in ("tools/list", "tools/call", "ping"):
            return self._rpc_error(
                400,
                INVALID_REQUEST,
                f"unsupported MCP-Protocol-Version {version!r}; supported: {', '.join(SUPPORTED_VERSIONS)}",
            )
        response = self.server.mcp.handle(message, principal, McpSession(stateless=True))
        if response is None:
            return Reply(202, None, text=" ")  # no body (see _send)
        return Reply(200, response)  # serialised like every other body (dumps_json)

    @staticmethod
    def _rpc_error(status: int, code: int, message: str, msg_id: str | int | None = None) -> Reply:
        return Reply(status, {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    # --- output ---

    def _send(self, reply: Reply, request_id: str) -> bool:
        """Write the response; False when the client had already gone (quietly: that is routine)."""
        self._responded = True
        if self._body_pending or self.server.draining:
            # An unread body would be parsed as the next request; a stopping server takes no next one.
            self.close_connection = True
        # backslashreplace: a lone surrogate echoed from a refused input goes out as a JSON \uXXXX escape.
        data = b"" if reply.status == 202 and reply.body is None else reply.text.encode("utf-8", "backslashreplace")
        self.send_response(reply.status)
        if data:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data) if self.command != "HEAD" else 0))
        self.send_header("X-Request-Id", request_id)
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        try:
            # A client that stops reading holds this thread at most requestTimeoutS.
            self.connection.settimeout(self.server.settings.server.request_timeout_s)
            self.end_headers()
            if self.command != "HEAD" and data:
                self.wfile.write(data)
        except OSError:  # reset, broken pipe, or a reader too slow for the deadline
            self.close_connection = True
            return False
        return True

    def parse_request(self) -> bool:
        """The base class's, except that a few empty lines before the request line are skipped, and
        HTTP/0.9 (a request line without a version, or naming it) is refused: it would be served a bare
        body, after waiting for headers a 0.9 client never sends. So is a target that is not a path."""
        self._expect_continue = False
        for _ in range(BLANK_LINES_SKIPPED):
            if self.raw_requestline not in (b"\r\n", b"\n"):
                break
            self.reader.await_request()  # an empty line starts no request: an idle client is not sent a 408
            self.raw_requestline = self.rfile.readline(65537)
            if not self.raw_requestline:  # the client closed after an empty line: nothing to answer
                self.close_connection = True
                return False
            if len(self.raw_requestline) > 65536:
                self.send_error(414, "request line longer than 65536 bytes")
                return False
        words = self.raw_requestline.split()
        if not words:
            self.send_error(400, "empty request line: send 'METHOD /path HTTP/1.1'")
            return False
        if len(words) == 2 and words[1].startswith(b"HTTP/"):
            self.send_error(400, "the request line has no target: send 'METHOD /path HTTP/1.1'")
            return False
        if len(words) == 2 or (len(words) == 3 and _HTTP_09.fullmatch(words[2])):
            self.send_error(505, "HTTP/0.9 is not supported; send HTTP/1.1")
            return False
        if not super().parse_request():
            return False
        target = self.path
        if hasattr(self, f"do_{self.command}") and target != "*" and target[:1] != "/":
            # Absolute-form names the server in the request line, which RFC 9112 §3.2.2 puts above the
            # Host header: the Host check would judge a name that is not the one meant. No client of
            # a loopback API sends it (only proxies take it), so it is refused rather than checked twice.
            path = "/" + target.partition("//")[2].partition("/")[2]
            self.send_error(
                400,
                f"the request target {target[:100]!r} is not a path: this server is no proxy and takes no "
                f"scheme or host in the request line (absolute-form); send '{self.command} {path[:100]} "
                "HTTP/1.1' with the server in the Host header",
            )
            self._linger_close(self.server.settings.server.max_body_bytes)
            return False
        return True

    def handle_expect_100(self) -> bool:
        """``Expect: 100-continue`` is answered when the body is wanted (bodies.BodyReading._continue),
        not here, before the request is checked: a refused one gets its final status without a 100."""
        self._expect_continue = True
        return True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Malformed requests the base class rejects before routing: JSON and a request id too."""
        codes = {
            400: "bad_request",
            408: "request_timeout",
            414: "uri_too_long",
            431: "headers_too_large",
            501: "not_implemented",
            505: "http_version_not_supported",
        }
        request_id = str(uuid.uuid4())
        body = dumps_json({"error": message or "bad request", "code": codes.get(code, "bad_request")}).encode()
        self.close_connection = True
        # The base class leaves HTTP/0.9 when the request line was unusable, and for HTTP/0.9
        # send_response writes neither status line nor headers: the client would get a bare body.
        self.request_version = "HTTP/1.1"
        self._responded = True
        try:
            self.connection.settimeout(self.server.settings.server.request_timeout_s)
            self.send_response(code)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Request-Id", request_id)
            self.send_header("Connection", "close")
            self.end_headers()
            if getattr(self, "command", None) != "HEAD":
                self.wfile.write(body)
        except OSError:
            pass

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Our own access line is logged in _handle; the default one would log query strings."""

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http: " + format, *args)


def create_server(
    api: Api, auth: Authenticator, *, host: str | None = None, port: int | None = None, settings: Settings | None = None
) -> RemnicHTTPServer:
    """A bound (not yet serving) server; port 0 picks a free port (see ``server.url``)."""
    settings = settings or api.settings
    if not auth.has_tokens():
        raise RemnicError(
            "no bearer token configured: run `remnic token generate --principal NAME` "
            "or pass --token; the server never runs without one"
        )
    presence.check_present(api.memory.root)
    host = settings.server.host if host is None else host
    port = settings.server.port if port is None else port
    odd = [h for h in settings.server.allowed_hosts if not isinstance(h, str) or not h.strip()]
    if odd:
        raise ValidationError.single("server.allowedHosts", f"must be a list of host names, got {odd!r}"[:200])
    try:
        server = RemnicHTTPServer((host, port), api, auth, settings)
    except OSError as exc:
        raise RemnicError(_bind_failure(host, port, exc)) from None
    # The model and index load after the bind (a busy port is said at once, not after indexing a large
    # repository), and before serving: not in the first request, nor racily in several.
    try:
        api.memory.warm_up()
    except BaseException:
        server.server_close()
        # Deleted or moved during start-up: one line naming it, not the index's traceback.
        presence.check_present(api.memory.root)
        raise
    return server


def _bind_failure(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is in use (another server? `remnic daemon status`; "
            "choose another with --port or server.port)"
        )
    # socket.gaierror (a name that does not resolve) carries its reason in strerror too.
    return f"cannot bind {host}:{port}: {exc.strerror or exc} (--host/--port, server.host/server.port)"


@contextmanager
def running_server(
    api: Api, auth: Authenticator, *, host: str = "127.0.0.1", port: int = 0
) -> Iterator[RemnicHTTPServer]:
    """A real server on a background thread for the duration of a ``with`` block (tests, benchmarks)."""
    server = create_server(api, auth, host=host, port=port)
    thread = serve_in_thread(server)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def serve_in_thread(server: RemnicHTTPServer) -> threading.Thread:
    """Serve on a daemon thread (tests, benchmarks); stop with ``server.shutdown(); server.server_close()``.
    A short poll: ``shutdown()`` waits for the loop's next turn, and these servers are stopped often."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="remnic-http", daemon=True
    )
    thread.start()
    return thread
