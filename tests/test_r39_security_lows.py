"""Security lows of session 39: the scan memo, the index's catalog (and the build folder holding the text
search's store) and the server log are the user's alone, also when an earlier file there was not; the
memory files keep their mode. The server refuses a request line that names a host (absolute-form)."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from test_server_http import Env, make_shared_env

from remnic import Memory
from remnic.fsio import make_private
from remnic.index.manifest import CATALOG_FILE, read_current


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _catalog(root: Path) -> Path:
    index = root / ".remnic" / "index"
    build = read_current(index)
    assert build
    return index / build / CATALOG_FILE


# --- files remnic writes ---


def test_scan_memo_and_catalog_are_owner_only_and_memory_files_keep_their_mode(memory: Memory) -> None:
    umask = os.umask(0)
    os.umask(umask)
    memory.store("We chose PostgreSQL for the billing service because of its transactions.")
    memory.sync()
    memo, catalog = memory.root / ".remnic" / "scan-memo.sqlite", _catalog(memory.root)
    assert _mode(memo) == 0o600
    assert {_mode(p) for p in catalog.parent.glob(CATALOG_FILE + "*")} == {0o600}
    assert _mode(catalog.parent) == 0o700 and _mode(catalog.parent.parent) == 0o700
    assert _mode(memory.root / ".remnic") == 0o700  # embeddings, sync state and staged files inside it too
    (note,) = (memory.root / "facts").glob("*.md")
    assert _mode(note) == 0o644 & ~umask  # the user's file: mode as git tracks it


def test_a_looser_scan_memo_or_catalog_is_made_owner_only_again(memory: Memory) -> None:
    memory.store("Deploys need two approvals from the platform team.")
    memory.sync()
    memory.close()
    memo, catalog = memory.root / ".remnic" / "scan-memo.sqlite", _catalog(memory.root)
    loose = [memo, *catalog.parent.glob(CATALOG_FILE + "*")]
    for path in loose:
        path.chmod(0o644)  # as an earlier remnic wrote them
    again = Memory.open(settings=memory.settings)
    try:
        again.store("Releases are cut every Tuesday afternoon.")
        again.sync()
        assert again.recall("release day").hits
        assert len(again.files.scan().records) == 2  # as `remnic list` reads them
    finally:
        again.close()
    assert {p.name: _mode(p) for p in loose} == {p.name: 0o600 for p in loose}


def test_the_daemons_log_is_owner_only_even_when_it_was_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "tokens.json"))
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    assert run_cli("token", "generate", "--principal", "ops").code == 0
    log = root / ".remnic" / "server.log"
    log.write_text("--- an earlier start\n")
    log.chmod(0o644)
    # The server process exits at once (no server is started): only the log's opening is under test.
    monkeypatch.setattr(sys, "executable", "/bin/false")
    started = run_cli("daemon", "start", "--memory-dir", str(root), "--port", "0")
    assert started.code == 1 and "the server exited with code 1" in started.err
    assert _mode(log) == 0o600 and log.read_text().startswith("--- an earlier start\n--- ")


# --- absolute-form request targets ---


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    yield from make_shared_env(tmp_path_factory.mktemp("shared"))


def _raw(env: Env, head: str, body: bytes = b"") -> tuple[str, dict[str, object]]:
    request = (
        f"{head}\r\nHost: 127.0.0.1:{env.port}\r\nAuthorization: Bearer {env.alice}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    with socket.create_connection(("127.0.0.1", env.port), timeout=10) as sock:
        sock.sendall(request)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    status, _, rest = got.partition(b"\r\n")
    return status.decode(), json.loads(rest.partition(b"\r\n\r\n")[2])


@pytest.mark.parametrize(
    ("head", "body", "suggested"),
    [
        ("GET http://evil.example/remnic/v1/health HTTP/1.1", b"", "GET /remnic/v1/health HTTP/1.1"),
        ("POST http://127.0.0.1:{port}/engram/v1/recall HTTP/1.1", b'{"query": "billing"}', "POST /engram/v1/recall"),
    ],
)
def test_a_request_line_naming_a_host_is_refused(shared: Env, head: str, body: bytes, suggested: str) -> None:
    status, answer = _raw(shared, head.format(port=shared.port), body)
    assert status == "HTTP/1.1 400 Bad Request" and answer["code"] == "bad_request"
    assert "absolute-form" in str(answer["error"]) and suggested in str(answer["error"])
    assert _raw(shared, "GET /remnic/v1/health HTTP/1.1")[0] == "HTTP/1.1 200 OK"


def test_making_a_database_private_keeps_this_processs_sqlite_locks(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops this process's POSIX locks on it: a lock SQLite holds must
    survive make_private, or another process writes (or truncates the -shm) under this one."""
    db = tmp_path / "catalog.sqlite"
    db.touch(mode=0o644)
    db.chmod(0o644)
    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("BEGIN IMMEDIATE")  # a RESERVED lock: no other process may begin writing
    try:
        make_private(db)
        assert _mode(db) == 0o600
        other = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=0); c.execute('BEGIN IMMEDIATE')",
                str(db),
            ],
            capture_output=True,
            text=True,
        )
        assert other.returncode != 0 and "locked" in other.stderr
    finally:
        conn.execute("ROLLBACK")
        conn.close()
