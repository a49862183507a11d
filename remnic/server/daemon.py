"""``remnic daemon start|stop|status|restart``: the HTTP server as a background process.

The daemon is ``remnic serve`` started in its own session with output going to
``<memory dir>/.remnic/server.log`` (moved to ``server.log.1`` at start once it is
over 10 MB). The server itself writes ``.remnic/server.pid`` (JSON: pid, host,
port, url, mode) once it is listening and removes it on exit, so the pid file
never names a server that is not up yet, and ``--port 0`` works: the file says
which port was picked. A foreground ``remnic serve`` writes the same file with
``mode: "foreground"``, so ``status`` is truthful whichever way the server was
started. Both files are in the git-ignored state directory.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from remnic.config import Settings
from remnic.errors import RemnicError
from remnic.fsio import pid_alive, write_atomic
from remnic.memfile.model import now_iso
from remnic.version import __version__

from .logfile import open_log
from .presence import missing

PID_FILE = "server.pid"
LAST_FILE = "server.last"
"""The host and port the last server listened on: `daemon restart` with none running starts there again."""
LOG_FILE = "server.log"
MAX_LOG_BYTES = 10 * 1024 * 1024
"""At start, a log over this size is moved to server.log.1 (the running server does not rotate it)."""
FOREGROUND, DAEMON = "foreground", "daemon"


def pid_path(settings: Settings) -> Path:
    return settings.state_dir / PID_FILE


def log_path(settings: Settings) -> Path:
    return settings.state_dir / LOG_FILE


def write_pid_file(
    path: Path,
    *,
    host: str,
    port: int,
    url: str,
    memory_dir: Path,
    mode: str = DAEMON,
    cli_socket: str | None = None,
    started: str | None = None,
    code: str | None = None,
    start_settings: dict[str, Any] | None = None,
) -> None:
    """Record this (listening) server: ``mode`` is ``daemon`` or ``foreground`` (a plain ``remnic serve``);
        ``cli_socket`` is where it runs CLI commands (``remnic store`` and ``query`` go there). The file names
        the server's ``version`` and ``code`` (:func:`.codestamp.code_stamp` at its start): a CLI of another
        release runs its commands itself; ``startSettings`` the settings only a restart applies, as the server
    started with them (:func:`.config_watch.restart_values`), for `daemon status` and `remnic config`.
    ``server.last`` keeps the address for the next `daemon restart`."""
    info = {
        "pid": os.getpid(),
        "host": host,
        "port": port,
        "url": url,
        "memoryDir": str(memory_dir),
        "started": started or now_iso(),
        "mode": mode,
        "version": __version__,
    }
    if code is not None:
        info["code"] = code
    if cli_socket is not None:
        info["cliSocket"] = cli_socket
    if start_settings is not None:
        info["startSettings"] = start_settings
    # The state folder is made again (`rm -rf .remnic`), the memory directory never: a server whose
    # directory was deleted or moved must not bring a ghost of it back.
    gone = missing(Path(memory_dir))
    if gone is not None:
        raise FileNotFoundError(errno.ENOENT, f"{gone}; not writing {path.name} there", str(path))
    path.parent.mkdir(exist_ok=True, mode=0o700)
    write_atomic(path, json.dumps(info, indent=2) + "\n", mode=0o600)
    last = json.dumps({"host": host, "port": port, "url": url, "pid": info["pid"]}) + "\n"
    with contextlib.suppress(OSError):  # only a hint for the next `daemon restart`
        write_atomic(path.with_name(LAST_FILE), last, mode=0o600)


def last_address(settings: Settings) -> dict[str, Any] | None:
    """The host and port the last server for this directory listened on (None: none recorded)."""
    try:
        info = json.loads((settings.state_dir / LAST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(info, dict) and isinstance(info.get("host"), str) and isinstance(info.get("port"), int):
        return info
    return None


def remove_pid_file(path: Path) -> None:
    """Remove the pid file if it still names this process (a newer server may have replaced it)."""
    info = read_pid_file(path)
    if info is not None and info.get("pid") == os.getpid():
        path.unlink(missing_ok=True)


def read_pid_file(path: Path) -> dict[str, Any] | None:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) and isinstance(info.get("pid"), int) else None


def serves(info: dict[str, Any], memory_dir: Path) -> bool:
    """Whether the server a pid file describes serves ``memory_dir`` (a file without ``memoryDir``
    predates the key and is taken at its word)."""
    recorded = info.get("memoryDir")
    if not isinstance(recorded, str):
        return True
    return os.path.realpath(recorded) == os.path.realpath(memory_dir)


def _is_remnic_server(pid: int) -> bool:
    """Whether ``pid`` is a remnic server, so a recycled pid never gets our SIGTERM."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return sys.platform != "linux"  # no /proc: trust the pid file
    return b"remnic" in b" ".join(cmdline) and b"serve" in cmdline


def _reachable(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether the server answers HTTP (GET livez, which needs no token, so a status check leaves no 401
    in the log): a TCP connect alone succeeds for a hung or stopped server, whose kernel still accepts."""
    import http.client

    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1" if host != "::" else "::1"
    conn = http.client.HTTPConnection(host.strip("[]"), port, timeout=timeout)
    try:
        conn.request("GET", "/remnic/v1/livez")
        return conn.getresponse().status > 0
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def status(settings: Settings) -> dict[str, Any]:
    path = pid_path(settings)
    info = read_pid_file(path)
    out: dict[str, Any] = {"running": False, "pidFile": str(path), "logFile": str(log_path(settings))}
    if info is None:
        return out
    pid = info["pid"]
    if not (pid_alive(pid) and _is_remnic_server(pid)):
        out["stalePidFile"] = True
        return out
    if not serves(info, settings.memory_dir):
        # A copied repository (cp -a) carries the original's pid file: that server is not this one's.
        out["otherServer"] = {"pid": pid, "memoryDir": info.get("memoryDir")}
        out["note"] = (
            f"the pid file names pid {pid}, a server for {info.get('memoryDir')}, not for this directory "
            "(a copied repository?); it is not this directory's server"
        )
        return out
    out.update({k: info.get(k) for k in ("pid", "host", "port", "url", "started")})
    out["version"] = info.get("version")  # None: a server older than the key
    if info.get("cliSocket"):
        out["cliSocket"] = info["cliSocket"]
    out["mode"] = FOREGROUND if info.get("mode") == FOREGROUND else DAEMON
    if out["mode"] == FOREGROUND:  # it logs to the terminal it runs in, never to server.log
        out["logFile"] = None
    out["running"] = True
    out["reachable"] = _reachable(str(info.get("host")), int(info.get("port") or 0))
    out.update(_config_state(info, settings))
    return out


def config_state(settings: Settings) -> dict[str, Any] | None:
    """For the server running for this directory (None: none): its pid, url and whether it runs with
    older values of settings only a restart applies (health's ``configStale`` keys, from the pid file,
    so no token is needed)."""
    info = read_pid_file(pid_path(settings))
    if info is None or not serves(info, settings.memory_dir):
        return None
    if not (pid_alive(info["pid"]) and _is_remnic_server(info["pid"])):
        return None
    return {"pid": info["pid"], "url": info.get("url"), **_config_state(info, settings)}


def _config_state(info: dict[str, Any], settings: Settings) -> dict[str, Any]:
    if "startSettings" not in info:  # a server older than the key
        return {}
    from .config_watch import stale_report, stale_since

    stale = stale_since(info["startSettings"], settings)
    out = stale_report(stale)
    if stale:
        out["configStaleFiles"] = sorted(set(stale.values()))
    return out


def stale_text(state: dict[str, Any]) -> str:
    """One line for a server's ``configStale``/``configError`` (empty when neither)."""
    lines = []
    if state.get("configStale"):
        keys = state.get("configStaleKeys") or []
        files = sorted({str(f) for f in (state.get("configStaleFiles") or [])})
        lines.append(
            f"server running with settings older than {', '.join(files) or 'the config files'}: "
            f"restart needed for: {', '.join(keys)} (`remnic daemon restart`)"
        )
    if state.get("configError"):
        lines.append(
            f"config error: {state['configError']}; the server keeps the settings it read before "
            "(it applies the files once they read again)"
        )
    return "\n".join(lines)


def _rotate(log: Path) -> None:
    try:
        if log.stat().st_size > MAX_LOG_BYTES:
            log.replace(log.with_suffix(".log.1"))
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise RemnicError(
            f"cannot move the server log {log} (over {MAX_LOG_BYTES // 1024 // 1024} MB) to "
            f"{log.with_suffix('.log.1')}: {exc.strerror or exc} (move or delete them)"
        ) from None


def _tail(path: Path, lines: int = 15, offset: int = 0) -> str:
    """The last ``lines`` lines written from byte ``offset`` on (this start's, not an earlier one's)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _startup_failure(code: int, log: Path, offset: int) -> RemnicError:
    """The server's own error line (a busy port, a bad --host …) when it printed one, else the log's tail."""
    tail = _tail(log, offset=offset)
    errors = [line for line in tail.splitlines() if line.startswith("remnic: error: ")]
    if errors:
        return RemnicError(f"the server did not start: {errors[-1].removeprefix('remnic: error: ')} (log: {log})")
    return RemnicError(f"the server exited with code {code} during start-up; last lines of {log}:\n{tail}")


def check_not_running(settings: Settings) -> None:
    """RemnicError (exit 1: a runtime state, not a usage error) when a server already runs here."""
    current = status(settings)
    if current["running"]:
        what = "a foreground `remnic serve`" if current["mode"] == FOREGROUND else "the server"
        raise RemnicError(
            f"{what} is already running for this memory directory (pid {current['pid']} at "
            f"{current['url']}); use `remnic daemon restart` or `remnic daemon stop`"
        )


def start(
    settings: Settings, *, host: str, port: int, extra_args: list[str] | None = None, wait_s: float = 20.0
) -> dict[str, Any]:
    check_not_running(settings)
    path, log = pid_path(settings), log_path(settings)
    path.unlink(missing_ok=True)  # stale, or absent
    settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    _rotate(log)
    cmd = [
        sys.executable,
        "-m",
        "remnic",
        "serve",
        "--memory-dir",
        str(settings.memory_dir),
        "--host",
        host,
        "--port",
        str(port),
        "--pid-file",
        str(path),
        *(extra_args or []),
    ]
    try:
        out = os.fdopen(open_log(log), "ab")  # closed below, once the server holds it
    except OSError as exc:
        raise RemnicError(f"cannot open the server log {log}: {exc.strerror or exc} (move it aside)") from None
    with out:
        offset = out.tell()
        out.write(f"--- {now_iso()} daemon start: {' '.join(cmd[1:])}\n".encode())
        out.flush()
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
            cwd=str(settings.memory_dir),
        )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            raise _startup_failure(code, log, offset)
        info = read_pid_file(path)
        if info and info.get("pid") == proc.pid and _reachable(host, int(info["port"])):
            # ``started`` stays the status's start time (one type for one key); ``launched``: this call started it
            return {**status(settings), "launched": True}
        time.sleep(0.05)
    proc.terminate()
    raise RemnicError(f"the server did not come up within {wait_s:.0f}s; see {log}:\n{_tail(log, offset=offset)}")


def stop(settings: Settings, *, timeout_s: float = 10.0) -> dict[str, Any]:
    path = pid_path(settings)
    current = status(settings)
    if not current["running"]:
        if current.get("stalePidFile"):
            path.unlink(missing_ok=True)
        out = {
            "stopped": False,
            "running": False,
            "stalePidFileRemoved": bool(current.get("stalePidFile")),
            "message": "the server is not running",
        }
        if "otherServer" in current:
            # Never signal another directory's server (`daemon start` here replaces the stray file).
            out["otherServer"] = current["otherServer"]
            out["message"] = current["note"] + "; not stopping it"
        return out
    pid = int(current["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.05)
    killed = False
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)  # it ignored SIGTERM for timeout_s; in-flight writes are git-atomic
        killed = True
    info = read_pid_file(path)
    if info is not None and info.get("pid") == pid:
        path.unlink(missing_ok=True)
    return {"stopped": True, "running": False, "pid": pid, "killed": killed, "mode": current["mode"]}


def restart(
    settings: Settings, *, host: str | None, port: int | None, extra_args: list[str] | None = None
) -> dict[str, Any]:
    """Stop (if running) and start again, on the same host/port unless told otherwise; with none running,
    on the last server's (``server.last``), else the settings'. ``wasRunning``, ``previousKilled`` and
    ``addressFrom`` (flag, previous, last, settings) say what happened."""
    previous = status(settings)
    stopped = stop(settings)
    last = last_address(settings) if not previous["running"] else None
    known = previous if previous["running"] else (last or {})
    given = host is not None or port is not None
    host = host or known.get("host") or settings.server.host
    port = port if port is not None else int(known.get("port") or settings.server.port)
    info = start(settings, host=host, port=port, extra_args=extra_args)
    origin = "previous" if previous["running"] else "last" if last else "settings"
    return {
        **info,
        "wasRunning": bool(previous["running"]),
        "previousKilled": bool(stopped.get("killed")),
        "addressFrom": "flag" if given else origin,
    }
