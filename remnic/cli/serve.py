"""The local server commands: ``serve``, ``daemon``, ``token`` and ``mcp`` (stdio)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from remnic.errors import EXIT_NOT_RUNNING, EXIT_OK, RepoBusyError, UsageError, ValidationError

from ._common import add_command, emit, open_memory, settings_of, table, wants_json

TOKEN_ENV = "REMNIC_TOKEN"
MIN_TOKEN_CHARS = 16
"""--token / $REMNIC_TOKEN shorter than this is refused: a bearer token must not be guessable."""

SERVE_EPILOG = """\
The server binds to loopback (127.0.0.1) unless --host says otherwise, and every
request needs 'Authorization: Bearer <token>'. Tokens come from the tokens file
(`remnic token generate`; $REMNIC_TOKENS_PATH, else tokens.json in
$XDG_CONFIG_HOME/remnic or ~/.config/remnic; `remnic token list` names it),
plus the one given by --token or $REMNIC_TOKEN for --principal.

routes (also under /remnic/v1/):
  GET  /engram/v1/health                 POST /engram/v1/recall
  GET  /engram/v1/recall/xray?q=...      POST /engram/v1/recall/explain
  POST /engram/v1/memories               GET  /engram/v1/memories?query=&status=&category=
  GET  /engram/v1/memories/:id           GET  /engram/v1/memories/:id/timeline
  POST /engram/v1/observe                GET  /engram/v1/review-queue
  POST /mcp                              (MCP JSON-RPC over streamable HTTP)

examples:
  remnic token generate --principal alice
  remnic serve --port 4318
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:4318/engram/v1/health
"""


NO_TOKEN = "no bearer token configured: run `remnic token generate --principal NAME` first"
"""Why `serve` and `daemon start` refuse to run (both exit 2: the configuration lacks what they need)."""


def register(sub: Any) -> None:
    p = add_command(sub, "serve", "run the local HTTP API and MCP-over-HTTP server (foreground)", epilog=SERVE_EPILOG)
    _listen_args(p)
    p.add_argument(
        "--token",
        help=f"also accept this bearer token (for --principal); ${TOKEN_ENV} works too and keeps it out of `ps`",
    )
    p.add_argument("--principal", default="default", help="principal of --token (default: default)")
    p.add_argument("--pid-file", type=Path, help=argparse.SUPPRESS)  # written by `remnic daemon start`
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="access log is at info (default: info)",
    )
    p.set_defaults(handler=cmd_serve)

    p = add_command(
        sub,
        "daemon",
        "run the server in the background: start, stop, status, restart",
        epilog="The pid file and log are .remnic/server.pid and .remnic/server.log in the memory\n"
        "directory. `status` exits 0 when running (a foreground `remnic serve` included)\n"
        "and 3 when not; `stop` stops either.",
    )
    dsub = p.add_subparsers(dest="daemon_command", metavar="<action>", required=True)
    for name, help_text in (
        ("start", "start the server in the background"),
        ("restart", "stop, then start on the same host/port unless given"),
    ):
        q = add_command(dsub, name, help_text)
        _listen_args(q)
        q.set_defaults(handler=cmd_daemon, action=name)
    for name, help_text in (
        ("stop", "stop the background server (SIGTERM, then SIGKILL after 10s)"),
        ("status", "is the background server running, where, since when"),
    ):
        q = add_command(dsub, name, help_text)
        q.set_defaults(handler=cmd_daemon, action=name)

    p = add_command(
        sub,
        "token",
        "manage bearer tokens: generate, list, revoke",
        epilog="Tokens are kept outside the memory repository (never in git history), in\n"
        "$REMNIC_TOKENS_PATH, else tokens.json in $XDG_CONFIG_HOME/remnic (when that is\n"
        "set) or ~/.config/remnic, mode 0600; `list` names the file. Only a SHA-256 of\n"
        "each token is stored; `generate` prints the secret once.",
    )
    tsub = p.add_subparsers(dest="token_command", metavar="<action>", required=True)
    q = add_command(
        tsub,
        "generate",
        "create a token for a principal and print it once",
        epilog="examples:\n  remnic token generate --principal alice --label laptop",
    )
    q.add_argument("--principal", default="default", help="who the token authenticates as (default: default)")
    q.add_argument("--label", help="a note to recognise the token by in `token list`")
    q.set_defaults(handler=cmd_token, action="generate")
    q = add_command(
        tsub,
        "list",
        "list tokens (ids, principals, dates; never secrets)",
        epilog="examples:\n  remnic token list\n  remnic token list --json",
    )
    q.set_defaults(handler=cmd_token, action="list")
    q = add_command(
        tsub,
        "revoke",
        "revoke a token by id, or every token of a principal",
        epilog="examples:\n  remnic token revoke tok_f4b8609e   # one token, by the ID `token list` shows\n"
        "  remnic token revoke alice   # every token of principal alice",
    )
    q.add_argument("key", metavar="ID|PRINCIPAL", help="a token id, or a principal (revokes all of its tokens)")
    q.set_defaults(handler=cmd_token, action="revoke")

    p = add_command(
        sub,
        "mcp",
        "serve MCP over stdio (for agent hosts that launch remnic as a subprocess)",
        epilog="Speaks JSON-RPC 2.0, one message per line, on stdin/stdout; logs go to stderr.\n"
        "The session acts as --principal (default: server.stdioPrincipal) under the\n"
        "namespace policy; no token is needed because the host launched the process.\n\n"
        "example host config:\n"
        '  {"command": "remnic", "args": ["mcp", "--memory-dir", "/home/me/memory"]}',
    )
    p.add_argument("--principal", help="principal of this session (default: server.stdioPrincipal)")
    p.set_defaults(handler=cmd_mcp)


def _port(value: str) -> int:
    """argparse type for --port: argparse reports the flag name and exits 2."""
    try:
        port = int(value, 10)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 65535 (0 picks a free port), got {value!r}")
    return port


def _host(value: str) -> str:
    # An empty host binds every interface: that must be asked for by name (0.0.0.0), never by a blank.
    if not value.strip():
        raise argparse.ArgumentTypeError("must name an interface, e.g. 127.0.0.1, ::1, or 0.0.0.0 for every one")
    return value.strip()


def _listen_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--host",
        type=_host,
        help="interface to bind (default: server.host, 127.0.0.1); anything but loopback "
        "makes the API reachable from the network",
    )
    p.add_argument("--port", type=_port, help="TCP port 0-65535; 0 picks a free one (default: server.port, 4318)")


def _host_origin(args: argparse.Namespace, settings: Any) -> str:
    """Where the bind address came from: the flag, or the config file that set server.host (else the default)."""
    if args.host:
        return "--host"
    return f"server.host in {settings.origins['server.host']}" if "server.host" in settings.origins else "default"


def _warn_if_exposed(host: str, origin: str) -> None:
    """A bind address other than loopback (0.0.0.0, ::, a LAN address, a host name) gets one warning line on
    stderr, naming where it came from (a flag, or which config file), so an address nobody typed is noticed."""
    try:
        loopback = ipaddress.ip_address(host.strip("[]").split("%")[0]).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        print(
            f"remnic: warning: binding {host}, not loopback (set by {origin}): the API is reachable from the "
            "network by anyone who can connect to this port (bearer tokens still apply, but traffic is plain HTTP)",
            file=sys.stderr,
            flush=True,
        )


def _tokens(memory_dir: Path | None) -> Any:
    from remnic.server.auth import TokenStore, default_tokens_path, ensure_outside_repo

    path = default_tokens_path()
    ensure_outside_repo(path, memory_dir)
    return TokenStore(path)


def _tokens_warnings() -> list[dict[str, str]]:
    """``[{field, message}]`` when a tokens.json under ~/.config is ignored for the $XDG_CONFIG_HOME one."""
    from remnic.server.auth import tokens_file_warning

    ignored = tokens_file_warning()
    return [{"field": "tokensFile", "message": ignored}] if ignored else []


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper()),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_ENV)
    if token is not None and len(token) < MIN_TOKEN_CHARS:  # said before the server's modules load
        raise UsageError(
            f"--token (or ${TOKEN_ENV}) is {len(token)} characters; a bearer token needs at least "
            f"{MIN_TOKEN_CHARS} (use `remnic token generate`, or e.g. "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    from remnic.server import daemon
    from remnic.server.auth import Authenticator, check_principal
    from remnic.server.codestamp import mark_started
    from remnic.server.lifecycle import DRAIN_GRACE_S

    code = mark_started()  # the files this process runs: a later upgrade is told apart from them
    _setup_logging(args.log_level)
    memory = open_memory(args)
    if args.pid_file is None:
        _refuse_second_server(memory)
    _refuse_read_only(memory, "remnic serve")
    extra = {token: check_principal(args.principal, "--principal")} if token else {}
    store = _tokens(memory.root)
    for warning in _tokens_warnings():  # in the start log: a daemon's goes to its server.log
        logging.getLogger("remnic.server").warning("%s", warning["message"])
    auth = Authenticator(store, extra)
    if not auth.has_tokens():  # a usage error, exit 2, as `daemon start` says it (not the server's exit 1)
        raise UsageError(f"{NO_TOKEN} (none in {store.path}); or pass --token (or set ${TOKEN_ENV})")
    from remnic.server import Api, create_server  # the API and recall pipeline: only for a server that runs
    from remnic.server.config_watch import ConfigWatch, restart_values

    api = Api(memory)
    server = create_server(api, auth, host=args.host, port=args.port)
    server.config_watch = ConfigWatch(api, server)  # config edits apply while it runs
    host, port = server.server_address[:2]
    _warn_if_exposed(str(host), _host_origin(args, memory.settings))
    # The daemon names its pid file; a foreground server records itself in the same place, so
    # `remnic daemon status` tells the truth either way (a second server was refused above).
    pid_file: Path | None = args.pid_file or daemon.pid_path(memory.settings)
    if args.pid_file is None and daemon.status(memory.settings)["running"]:  # started since the check above
        logging.getLogger("remnic.server").warning(
            "another server for this directory started meanwhile (%s); `remnic daemon status` and `stop` "
            "will not see this one",
            pid_file,
        )
        pid_file = None
    cli = None
    keeper: threading.Thread | None = None
    stopping = threading.Event()
    if pid_file is not None:
        # remnic store/query in other shells run here, on this warm Memory (see cli/fastpath.py).
        from . import build_parser, execute
        from .fastpath import CliServer

        cli = CliServer(memory, build_parser(), execute, config_watch=server.config_watch, code=code)
        try:
            cli_socket: str | None = cli.start()
        except OSError as exc:
            logging.getLogger("remnic.server").warning("CLI commands will not come here: %s", exc)
            cli, cli_socket = None, None
        record: dict[str, Any] = {
            "host": str(host),
            "port": int(port),
            "url": server.url,
            "memory_dir": memory.root,
            "mode": daemon.DAEMON if args.pid_file else daemon.FOREGROUND,
            "cli_socket": cli_socket,
            "code": code,
            "start_settings": restart_values(memory.settings),
        }
        daemon.write_pid_file(pid_file, **record)
        record["started"] = (daemon.read_pid_file(pid_file) or {}).get("started")
        from remnic.server.logfile import LogReopener

        reopener = LogReopener(daemon.log_path(memory.settings)) if args.pid_file else None
        keeper = threading.Thread(
            target=_keep_records,
            args=(pid_file, record, cli, stopping, reopener),
            name="remnic-records",
            daemon=True,
        )
        keeper.start()

    log = logging.getLogger("remnic.server")

    def stop_on(signum: int) -> None:
        # Said in the log, so a server that ran for weeks shows whether it was stopped or crashed.
        log.info("stopping on %s (pid %d)", signal.Signals(signum).name, os.getpid())
        server.shutdown()

    def shutdown(signum: int, _frame: Any) -> None:
        if signum == signal.SIGINT:
            signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C aborts at once
        # shutdown() blocks until serve_forever returns, so it must not run on the serving thread.
        threading.Thread(target=stop_on, args=(signum,), daemon=True).start()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGHUP, shutdown)  # terminal closed: exit cleanly, removing the pid file
    # Ctrl-C too, rather than a KeyboardInterrupt raised wherever the main thread happens to be (in a
    # lock, a finally, the pass between requests), which can leave the listening socket open.
    signal.signal(signal.SIGINT, shutdown)
    info = {
        "url": server.url,
        "host": host,
        "port": port,
        "pid": os.getpid(),
        "memoryDir": str(memory.root),
        "mcp": server.url + "/mcp",
    }
    if wants_json(args):
        print(json.dumps(info), flush=True)
    else:
        print(
            f"remnic: serving {memory.root} at {server.url} (HTTP API under /engram/v1/ and /remnic/v1/, "
            f"MCP at /mcp); Ctrl-C to stop",
            flush=True,
        )
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        # One budget for the requests and the CLI commands already taken: both finish before the
        # Memory closes, within `remnic daemon stop`'s wait before SIGKILL.
        deadline = time.monotonic() + DRAIN_GRACE_S
        stopping.set()
        if keeper is not None:
            keeper.join()  # it must not write the pid file again after it is removed below
        if cli is not None:
            cli.close()
        server.server_close()
        if cli is not None and (cut := cli.drain(max(0.0, deadline - time.monotonic()))):
            logging.getLogger("remnic.server").warning("stopping with %d CLI command(s) still running", cut)
        memory.close()
        if pid_file is not None:
            daemon.remove_pid_file(pid_file)
        log.info("stopped (pid %d)", os.getpid())
    return 0


def _refuse_second_server(memory: Any) -> None:
    """`remnic serve` where a server already runs for the directory: one server per repository (a second
    would keep its own rate limits and idempotency keys, and `daemon status`/`stop` would not see it)."""
    from remnic.server import daemon

    current = daemon.status(memory.settings)
    if current["running"]:
        memory.close()
        what = "a foreground `remnic serve`" if current["mode"] == daemon.FOREGROUND else "the daemon"
        raise UsageError(
            f"{what} already serves {memory.root} (pid {current['pid']} at {current['url']}); use it, "
            "or stop it first: `remnic daemon stop`"
        )


def _refuse_read_only(memory: Any, command: str) -> None:
    """A server writes its index, its audit log and every request's memories: in a read-only memory
    directory it stops here with one line, before the index is opened."""
    from remnic.service.health import unwritable

    why = unwritable(memory.root)
    if why is not None:
        memory.close()
        raise RepoBusyError(f"{why}; `{command}` needs to write there (its index lock, audit log and memories)")


RECORDS_CHECK_S = 1.0
"""How often a server checks that its pid file and CLI socket still exist."""


def _keep_records(
    pid_file: Path, record: dict[str, Any], cli: Any, stopping: threading.Event, reopener: Any = None
) -> None:
    """Write the pid file (and listen on the CLI socket) again when they vanish (`rm -rf .remnic`):
    without them `daemon status` says not running, `daemon start` runs a second server, and `stop`
    cannot find this one. A pid file another live server wrote in the meantime is left alone. The
    daemon's log is opened again too, when it was deleted or moved (see remnic/server/logfile.py)."""
    from remnic.server import daemon

    while not stopping.wait(RECORDS_CHECK_S):
        try:
            if cli is not None and cli.relisten():
                record["cli_socket"] = str(cli.path)
            if daemon.read_pid_file(pid_file) is None:
                daemon.write_pid_file(pid_file, **record)
                logging.getLogger("remnic.server").warning("%s had gone; wrote it again", pid_file)
        except OSError as exc:
            logging.getLogger("remnic.server").warning("cannot restore %s: %s", pid_file, exc)
        try:
            if reopener is not None:
                reopener.check()
        except OSError as exc:
            logging.getLogger("remnic.server").warning("cannot reopen %s: %s", reopener.path, exc)


def cmd_daemon(args: argparse.Namespace) -> int:
    from remnic.server import daemon

    action = args.action
    unreadable: ValidationError | None = None
    try:
        settings = settings_of(args)
    except ValidationError as exc:
        if action != "status":
            raise
        # A config that no longer reads does not hide the running server: found without the config files.
        settings, unreadable = settings_of(args, use_config_files=False), exc
    if action == "start":
        daemon.check_not_running(settings)  # said first: more to the point than any other complaint
    if action in ("start", "restart"):
        from remnic.server.auth import Authenticator

        # Fail here, not in the background, when the memory dir is wrong or read-only.
        _refuse_read_only(open_memory(args), f"remnic daemon {action}")
        store = _tokens(settings.memory_dir)
        for warning in _tokens_warnings():
            print(f"remnic: warning: {warning['message']}", file=sys.stderr, flush=True)
        if not Authenticator(store).has_tokens():
            raise UsageError(
                f"{NO_TOKEN} (none in {store.path}; the daemon does not take --token, which would show in `ps`)"
            )
    if action == "start":
        host = args.host or settings.server.host
        port = settings.server.port if args.port is None else args.port
        _warn_if_exposed(host, _host_origin(args, settings))
        info = daemon.start(settings, host=host, port=port)
        emit(args, info, f"started the server (pid {info['pid']}) at {info['url']}; log: {info['logFile']}")
        return 0
    if action == "restart":
        info = daemon.restart(settings, host=args.host, port=args.port)
        if info["wasRunning"]:
            killed = " (killed the previous server after it ignored SIGTERM for 10s)" if info["previousKilled"] else ""
            text = f"restarted the server (pid {info['pid']}) at {info['url']}{killed}"
        else:
            where = {"last": "the last server's port", "settings": "server.port", "flag": "--host/--port"}
            text = (
                f"the server was not running; started it (pid {info['pid']}) at {info['url']} "
                f"({where[info['addressFrom']]})"
            )
        emit(args, info, text)
        return 0
    if action == "stop":
        info = daemon.stop(settings)
        what = "the foreground server" if info.get("mode") == daemon.FOREGROUND else "the server"
        text = (
            f"stopped {what} (pid {info['pid']}{', killed after timeout' if info.get('killed') else ''})"
            if info["stopped"]
            else info["message"]
            if "otherServer" in info
            else "the server is not running"
            + (" (removed a stale pid file)" if info.get("stalePidFileRemoved") else "")
        )
        emit(args, info, text)
        return 0
    info = daemon.status(settings)
    if unreadable is not None:
        if not info["running"]:
            raise unreadable
        for key in ("configStale", "configStaleKeys", "configStaleNote", "configStaleFiles"):
            info.pop(key, None)  # compared with the defaults, not with the files the server reads
        info["configError"] = "; ".join(dict.fromkeys(p.describe() for p in unreadable.problems)) or unreadable.message
    if info["running"]:
        foreground = info["mode"] == daemon.FOREGROUND
        stale = daemon.stale_text(info)
        text = (
            f"running{' in the foreground (`remnic serve`, not the daemon)' if foreground else ''}: "
            f"pid {info['pid']} at {info['url']} since {info['started']}"
            + ("" if info.get("reachable") else " (NOT answering: hung or stopped?)")
            + _version_note(info.get("version"))
            + (f"\n{stale}" if stale else "")
            + ("\nlog: the terminal it runs in" if foreground else f"\nlog: {info['logFile']}")
        )
    else:
        text = "not running" + (" (stale pid file)" if info.get("stalePidFile") else "")
        if info.get("note"):
            text += f"\nnote: {info['note']}"
    emit(args, info, text)
    return EXIT_OK if info["running"] else EXIT_NOT_RUNNING


def _version_note(server_version: str | None) -> str:
    """The running server's remnic, when it is not this CLI's (started before an upgrade)."""
    from remnic.version import __version__

    if server_version == __version__:
        return ""
    return f"\nserver: remnic {server_version or '(older, unnamed)'}; this is remnic {__version__}: `remnic daemon restart`"


def cmd_token(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    store = _tokens(settings.memory_dir)
    warnings = _tokens_warnings()
    if not wants_json(args):  # under --json they are the answer's `warnings`
        for warning in warnings:
            print(f"remnic: warning: {warning['message']}", file=sys.stderr)
    if args.action == "generate":
        secret, entry = store.generate(args.principal, args.label)
        data = {**entry.to_dict(), "token": secret, "tokensFile": str(store.path)}
        data.update({"warnings": warnings} if warnings else {})
        emit(
            args,
            data,
            f"token {entry.id} for principal {entry.principal!r} (only its SHA-256 is stored in "
            f"{store.path}):\n{secret}\nThis is the only time the token is shown.",
        )
        return 0
    if args.action == "list":
        entries = store.entries()
        rows = [[e.id, e.principal, e.created, e.label or ""] for e in entries]
        emit(
            args,
            {"tokensFile": str(store.path), "tokens": [e.to_dict() for e in entries]}
            | ({"warnings": warnings} if warnings else {}),
            lambda: (
                table(rows, ["ID", "PRINCIPAL", "CREATED", "LABEL"])
                if rows
                else f"no tokens in {store.path} (create one with `remnic token generate`)"
            ),
        )
        return 0
    gone = store.revoke(args.key)
    emit(
        args,
        {"revoked": [e.to_dict() for e in gone]} | ({"warnings": warnings} if warnings else {}),
        "revoked " + ", ".join(f"{e.id} ({e.principal})" for e in gone) + "; running servers stop accepting "
        "them on the next request",
    )
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from remnic.server import Api, McpServer, run_stdio
    from remnic.server.auth import check_principal

    _setup_logging("warning")
    memory = open_memory(args)
    _refuse_read_only(memory, "remnic mcp")
    principal = check_principal(args.principal or memory.settings.server.stdio_principal, "--principal")
    memory.warm_up()  # the model and the index load before the first request, not during it
    try:
        return run_stdio(
            McpServer(Api(memory), surface="mcp-stdio"),
            principal,
            max_message_bytes=memory.settings.server.max_body_bytes,
        )
    finally:
        memory.close()
