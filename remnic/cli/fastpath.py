"""CLI commands through a running server: no model load, no index open per command.

``remnic serve`` (and so ``remnic daemon start``) listens on a Unix socket only its user
can reach (a 0700 folder, the peer's uid checked) and runs ``remnic store`` and ``remnic
query`` for the CLI in-process, on its own already-warm :class:`Memory`: the client sends
its arguments, its resolved settings and (for ``-``) its standard input, and prints what
comes back — the same bytes and exit code the command gives in-process. The client is
light on purpose: it imports the config module, :mod:`remnic.server.codestamp` and the
standard library, nothing else.

Whenever anything is off — no server for this memory directory, a server with other
settings (another ``./remnic.config.json``, another ``$REMNIC_CONFIG_PATH``), a server of
another release or started before remnic's files changed (its parser may not know this
CLI's flags), an environment that changes what a command does (``REMNIC_*`` beyond the
memory directory and config, in the client's environment or the server's: a server started
with ``REMNIC_XRAY_CLOCK`` would otherwise answer with its clock), ``REMNIC_NO_DAEMON=1`` —
the command simply runs in-process, as it always did; when the server turned it away, the
command says why once on stderr.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from remnic.config import STATE_DIR, load_settings

COMMANDS = ("store", "query")
"""What the CLI sends to a running server (commands whose output depends on nothing but their arguments)."""
SOCKET_DIR = "cli"
MAX_MESSAGE = 64 * 1024 * 1024
HANDSHAKE_S = 3.0
"""How long the client waits for the server to take its request (connect, send, the server's ack):
a server that does not answer by then is hung (stopped, swapping) and the command runs here."""
COMMAND_S = 600.0
"""After the ack the server is running the command: a long one (a big store) may take this long."""
ACK = b"\x06"
_ENV_OK = {"REMNIC_MEMORY_DIR", "REMNIC_CONFIG_PATH", "REMNIC_TOKENS_PATH", "REMNIC_PYTHON", "REMNIC_HOOK_LOG"}
_ENV_SERVER_ONLY = {"REMNIC_NO_DAEMON", "REMNIC_TOKEN"}
"""What a server may have in its environment that changes nothing a command prints (its bearer token)."""
_VALUE_FLAGS = {"--memory-dir", "--space"}


def git_env(environ: Any = None) -> dict[str, str]:
    """What git reads from the environment (GIT_AUTHOR_NAME, GIT_DIR, …, EMAIL): a commit the server
    makes for a client must be the one git would make in the client's environment."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if k.startswith("GIT_") or k == "EMAIL"}


def result_env(environ: Any = None) -> dict[str, str]:
    """The ``REMNIC_*`` variables of an environment that may change what a command does
    (``REMNIC_XRAY_CLOCK``, ``REMNIC_SPACES_PATH``, …): a server runs a client's command only when
    its own are the same, or the command would print what the server's environment makes of it."""
    env = os.environ if environ is None else environ
    skip = _ENV_OK | _ENV_SERVER_ONLY
    return {k: v for k, v in env.items() if k.startswith("REMNIC_") and v and k not in skip}


# --- the client side ---


def command_of(argv: Sequence[str]) -> str | None:
    """The sub-command named in ``argv`` (global flags may come first)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in _VALUE_FLAGS:
            skip = True
            continue
        if not arg.startswith("-"):
            return arg
    return None


def _memory_dir_flag(argv: Sequence[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--memory-dir" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--memory-dir="):
            return arg.split("=", 1)[1]
    return None


def socket_path(memory_dir: Path) -> Path:
    """Where a server for ``memory_dir`` listens: in the cache, or (a path too long for a Unix
    socket) in a private folder under the system's temporary directory."""
    local = memory_dir / STATE_DIR / SOCKET_DIR / "cli.sock"
    if len(os.fsencode(local)) < 100:
        return local
    import hashlib

    digest = hashlib.sha256(os.fsencode(memory_dir)).hexdigest()[:20]
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp") / f"remnic-{os.getuid()}"
    return base / f"{digest}.sock"


def _server_record(memory_dir: Path) -> dict[str, Any] | None:
    """The pid file of a live server for ``memory_dir`` that runs CLI commands (has a socket)."""
    try:
        info = json.loads((memory_dir / STATE_DIR / "server.pid").read_text(encoding="utf-8"))
        pid, path = int(info["pid"]), info.get("cliSocket")
        os.kill(pid, 0)
        recorded = info.get("memoryDir")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if isinstance(recorded, str) and os.path.realpath(recorded) != os.path.realpath(memory_dir):
        return None  # a pid file copied along with the repository names the original's server
    return info if isinstance(path, str) else None


def skew(server_version: Any, server_code: Any, code: str) -> str | None:
    """Why a server runs other code than this CLI (another release, or files changed since it started)."""
    from remnic.version import __version__

    if server_version != __version__:
        shown = f"remnic {server_version}" if isinstance(server_version, str) else "an older remnic"
        return f"the running server is {shown} (this is {__version__}): `remnic daemon restart`"
    if isinstance(server_code, str) and server_code != code:
        return (
            "the running server was started before remnic's files changed (an upgrade?); it runs the old "
            "code: `remnic daemon restart`"
        )
    return None


def _note(argv: Sequence[str], why: str) -> None:
    """Why the command runs here and not on the server: once, on stderr, unless --quiet or --json."""
    if sys.stderr is None or {"--quiet", "-q", "--json"} & set(argv):
        return
    print(f"remnic: note: not using the running server: {why}; running the command here", file=sys.stderr)


def _send(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack(">I", len(data)) + data)


def _receive(sock: socket.socket) -> bytes:
    head = _exactly(sock, 4)
    (size,) = struct.unpack(">I", head)
    if size > MAX_MESSAGE:
        raise OSError("message too large")
    return _exactly(sock, size)


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise OSError("connection closed early")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def try_server(argv: Sequence[str]) -> int | None:
    """Run ``argv`` on a running server and print its output; None when it cannot (run in-process)."""
    if command_of(argv) not in COMMANDS or {"-h", "--help"} & set(argv):
        return None
    if any(a == "--space" or a.startswith("--space=") for a in argv):
        return None  # a named space runs in this process (its server, if any, has its own socket)
    if os.environ.get("REMNIC_NO_DAEMON") or any(
        k.startswith("REMNIC_") and v and k not in _ENV_OK for k, v in os.environ.items()
    ):
        return None
    if "-" in argv:
        return None  # standard input is read here, as the command reads it (bytes, to EOF, from a terminal)
    if any(a.startswith("--sup") for a in argv):
        return None  # `--supersedes PATH` is resolved against this process's current folder
    try:
        settings = load_settings(_memory_dir_flag(argv))
    except Exception:  # noqa: BLE001 - the in-process command reports config problems properly
        return None
    record = _server_record(settings.memory_dir)
    if record is None:
        return None
    path = str(record["cliSocket"])
    from remnic.server.codestamp import code_stamp
    from remnic.version import __version__

    code = code_stamp()
    why = skew(record.get("version"), record.get("code"), code)
    if why is not None:  # an older server's parser would refuse this CLI's new flags, or run old code
        _note(argv, why)
        return None
    stdin = None
    request = {
        "v": 2,  # 2: the server acks on taking the request (a v1-only server answers "fallback")
        "version": __version__,
        "code": code,
        "argv": list(argv),
        "memoryDir": str(settings.memory_dir),
        "settings": settings.to_dict(),
        "env": result_env(),
        "cwd": os.getcwd(),
        "home": os.environ.get("HOME"),  # git's identity and ~ are read from it
        "git": git_env(),
        "stdin": stdin,
    }
    acked = False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(HANDSHAKE_S)
            try:
                sock.connect(path)
                _send(sock, json.dumps(request, default=str).encode("utf-8"))
                ack = sock.recv(1)
            except TimeoutError:
                # The kernel accepts connections for a stopped process: only the ack tells it is alive.
                print(
                    f"remnic: the server for this memory directory did not answer within {HANDSHAKE_S:.0f}s "
                    "(hung or stopped? `remnic daemon status`); running the command here",
                    file=sys.stderr,
                )
                raise
            if ack != ACK:  # an older server's whole reply starts here instead: none of it is an ack
                head = ack + _exactly(sock, 3) if ack else b""
                reply = json.loads(_exactly(sock, struct.unpack(">I", head)[0])) if len(head) == 4 else None
            else:
                acked = True
                sock.settimeout(COMMAND_S)
                reply = json.loads(_receive(sock))
    except KeyboardInterrupt:
        if acked:
            print("remnic: interrupted (the server had taken the command and may still finish it)", file=sys.stderr)
        else:
            print("remnic: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError, struct.error):
        if not acked:
            return None
        # Taken and running: running it here too would do it twice (a second store).
        print(
            f"remnic: error: the server took the command but gave no answer within {COMMAND_S:.0f}s; it may "
            "still finish it (`remnic daemon status`, `remnic list`)",
            file=sys.stderr,
        )
        return 1
    if not isinstance(reply, dict) or "code" not in reply:
        if isinstance(reply, dict) and isinstance(reply.get("fallback"), str):
            _note(argv, reply["fallback"])
        return None
    try:
        if sys.stdout is not None:
            sys.stdout.write(reply.get("stdout", ""))
            sys.stdout.flush()
        if sys.stderr is not None:
            sys.stderr.write(reply.get("stderr", ""))
    except BrokenPipeError:  # `remnic query x | head -1`: as the in-process command, not an error
        with contextlib.suppress(OSError, ValueError):  # Python's own flush at exit must not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return int(reply["code"])


# --- the server side ---


class _ThreadStreams(io.TextIOBase):
    """sys.stdout/stderr/stdin for a server that runs CLI commands on request threads: a thread
    with a capture writes to it, every other thread to the real stream."""

    def __init__(self, real: Any, local: threading.local, name: str) -> None:
        self.real, self.local, self.name_ = real, local, name

    def _target(self) -> Any:
        return getattr(self.local, self.name_, None) or self.real

    def write(self, text: str) -> int:
        return self._target().write(text)

    def read(self, size: int | None = -1) -> str:
        return self._target().read(size)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return self._target().readline(size)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        target = self._target()
        return target is self.real and bool(getattr(self.real, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self._target().fileno()


_LOCAL = threading.local()


def _install_streams() -> None:
    if not isinstance(sys.stdout, _ThreadStreams):
        sys.stdout = _ThreadStreams(sys.stdout, _LOCAL, "stdout")
        sys.stderr = _ThreadStreams(sys.stderr, _LOCAL, "stderr")
        sys.stdin = _ThreadStreams(sys.stdin, _LOCAL, "stdin")


@contextlib.contextmanager
def _captured(stdin: str | None) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    _LOCAL.stdout, _LOCAL.stderr, _LOCAL.stdin = out, err, io.StringIO(stdin or "")
    try:
        yield out, err
    finally:
        _LOCAL.stdout = _LOCAL.stderr = _LOCAL.stdin = None


class CliServer:
    """Serves CLI commands for one :class:`Memory` on a Unix socket, each on its own thread. The
    parser is built once; arguments are parsed one request at a time, commands run side by side."""

    def __init__(
        self,
        memory: Any,
        parser: Any,
        execute: Callable[[Any], int],
        *,
        config_watch: Any = None,
        code: str | None = None,
    ) -> None:
        self.memory = memory
        self.parser = parser
        self.execute = execute
        self.config_watch = config_watch
        """Reloads the settings when a config file changed (remnic/server/config_watch.py), or None."""
        self.code = code
        """The stamp of the code this server started with (remnic/server/codestamp.py), or None."""
        self._parsing = threading.Lock()
        self.path = socket_path(memory.root)
        self._sock: socket.socket | None = None
        self._bound: tuple[int, int] | None = None
        """(st_dev, st_ino) of the socket file this server made: it removes only that file."""
        self._closed = threading.Event()
        self._in_flight = 0
        self._idle = threading.Condition()

    def start(self) -> str:
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)  # only this user reaches the socket
        self.path.unlink(missing_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.path))
        os.chmod(self.path, 0o600)
        sock.listen(64)
        st = os.stat(self.path)
        old, self._sock, self._bound = self._sock, sock, (st.st_dev, st.st_ino)
        if old is not None:
            old.close()  # a re-listen (see relisten): the old accept loop ends
        _install_streams()
        threading.Thread(target=self._accept, args=(sock,), name="remnic-cli", daemon=True).start()
        return str(self.path)

    def _owns_path(self) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._bound

    def relisten(self) -> bool:
        """Listen again when the socket file was deleted (``rm -rf .remnic``); a file another server
        made in its place is left to it. True when it listens anew."""
        if self._closed.is_set() or self.path.exists():
            return False
        if not (self.memory.root / ".git").exists():  # the repository is gone: never recreate .remnic in it
            return False
        self.start()
        return True

    def close(self) -> None:
        """Stop taking commands (the ones already taken run on: see :meth:`drain`)."""
        self._closed.set()
        if self._sock is not None:
            self._sock.close()
        if self._owns_path():  # another server may have bound the same path since
            with contextlib.suppress(OSError):  # a read-only or deleted directory keeps it
                self.path.unlink(missing_ok=True)

    def drain(self, grace_s: float) -> int:
        """Wait until no command is running, at most ``grace_s``; how many still were. A client that
        had its ack waits for the answer and never runs the command itself: it must get one."""
        deadline = time.monotonic() + grace_s
        with self._idle:
            while self._in_flight > 0 and (left := deadline - time.monotonic()) > 0:
                self._idle.wait(left)
            return self._in_flight

    def _accept(self, listener: socket.socket) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), name="remnic-cli-request", daemon=True).start()

    def _peer_is_us(self, conn: socket.socket) -> bool:
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        except (OSError, AttributeError):
            return True  # no SO_PEERCRED here: the 0700 folder is the guard
        _pid, uid, _gid = struct.unpack("3i", creds)
        return uid == os.getuid()

    def _serve(self, conn: socket.socket) -> None:
        with self._idle:
            self._in_flight += 1
        try:
            self._serve_one(conn)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def _serve_one(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(30)
                if not self._peer_is_us(conn):
                    return
                request = json.loads(_receive(conn))
                if isinstance(request, dict) and request.get("v") == 2:
                    conn.sendall(ACK)  # taken: the client now waits as long as the command runs
                conn.settimeout(None)
                reply = self.handle(request)
                _send(conn, json.dumps(reply).encode("utf-8"))
            except (OSError, ValueError):
                return

    def _parse(self, argv: list[str]) -> Any:
        from ._common import Parser

        with self._parsing:  # argparse reports through a class flag: one parse at a time
            Parser.json_errors = "--json" in argv
            return self.parser.parse_command_line(argv)

    def _elsewhere(self, args: Any, cwd: Any) -> str | None:
        """Why the parsed command is not for this server's repository (argparse reads abbreviations and
        repeats — `--memory-d B`, a second --memory-dir — the client's quick look does not), or None."""
        if getattr(args, "space", None):
            return "a named space"
        named = getattr(args, "memory_dir", None)
        if named is None:
            return None
        base = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None
        if base is None:
            return "a --memory-dir the server cannot resolve"
        target = os.path.realpath(os.path.join(base, os.path.expanduser(str(named))))
        return None if target == os.path.realpath(self.memory.root) else "another memory directory"

    def handle(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or request.get("v") not in (1, 2):
            return {"fallback": "unknown request"}
        argv = request.get("argv")
        if not isinstance(argv, list) or command_of(argv) not in COMMANDS:
            return {"fallback": "not a command this server runs"}
        if request.get("memoryDir") != str(self.memory.root):
            return {"fallback": "another memory directory"}
        if "version" in request:  # (an older client sends none: it checked nothing, nor does this)
            from remnic.version import __version__  # loaded at start: the release this server runs

            if request["version"] != __version__:
                client = request["version"]
                return {
                    "fallback": f"the running server is remnic {__version__} (this is {client}): `remnic daemon restart`"
                }
            why = skew(__version__, self.code, str(request.get("code")))
            if why is not None:
                return {"fallback": why}
        if self.config_watch is not None:
            self.config_watch.check()  # a config edited a moment ago: the server reads it first
        if request.get("settings") != json.loads(json.dumps(self.memory.settings.to_dict(), default=str)):
            why = "other settings than the server's"
            if self.config_watch is not None:
                why = self.config_watch.mismatch(request.get("settings"))
            return {"fallback": why}
        if (request.get("env") or {}) != result_env():  # a client that sends none has none set
            return {"fallback": "another REMNIC_* environment than the server's"}
        if "home" in request and request.get("home") != os.environ.get("HOME"):
            return {"fallback": "another HOME than the server's (git's identity)"}
        if "git" in request and request.get("git") != git_env():
            return {"fallback": "another git environment than the server's (GIT_AUTHOR_NAME, …)"}
        from ._common import shared_memory

        started = time.perf_counter()
        with _captured(request.get("stdin")) as (out, err), shared_memory(self.memory):
            try:
                args = self._parse([str(a) for a in argv])
                elsewhere = self._elsewhere(args, request.get("cwd"))
                if elsewhere is not None:
                    return {"fallback": elsewhere}
                code = self.execute(args)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            except Exception as exc:  # noqa: BLE001 - the client gets an error, the server lives on
                err.write(f"remnic: error: {type(exc).__name__}: {exc}\n")
                code = 1
        import logging

        logging.getLogger("remnic.server").info(
            "cli: %s exit %s in %.1fms", command_of(argv), code, (time.perf_counter() - started) * 1000
        )
        return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
