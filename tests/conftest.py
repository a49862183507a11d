"""Shared fixtures: real git repositories in temp dirs, an isolated HOME, a CLI runner."""

from __future__ import annotations

import functools
import gc
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from remnic.cli._common import Parser
from remnic.config import settings_for
from remnic.service.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
GIT_IDENTITY = ["-c", "user.name=Test User", "-c", "user.email=test@example.com"]


MEMORY_TMP = Path("/dev/shm")
MEMORY_TMP_FREE = 6 << 30  # a whole run's temp files, with room to spare


def pytest_configure(config: pytest.Config) -> None:
    """Temp files in memory when the machine has room (/dev/shm, unless TMPDIR or --basetemp is set): the
    suite makes ~100,000 files in real repositories, and on a disk their creation, fsyncs and removal
    cost a tenth to a fifth of its time (a five-file subset: 40–46 → 36 s). Every path, git call and
    filesystem event is the same on tmpfs."""
    if os.environ.get("TMPDIR") or config.option.basetemp or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker inherits the controller's choice through its environment and basetemp
    try:
        usable = os.access(MEMORY_TMP, os.W_OK) and shutil.disk_usage(MEMORY_TMP).free >= MEMORY_TMP_FREE
    except OSError:
        usable = False
    if usable:
        os.environ["TMPDIR"] = str(MEMORY_TMP)
        tempfile.tempdir = None  # computed again from TMPDIR


def pytest_collection_finish(session: pytest.Session) -> None:
    """Every module, test and import made so far lives as long as the run: frozen out of the collector's
    reach. A worker holds millions of such objects, and every full collection walked them all again.
    Measured on an eighth of the test files in one process: 200–230 → 130–155 CPU-seconds, far more than
    the 10 s the full collections themselves took (why the rest goes was not established); in the
    three-worker full run the difference did not show."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the run's rewritten models, as a machine has one ~/.cache: the packaged model is
    rewritten once per test process, not once per test and per CLI process a test starts."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, model_cache: Path) -> Path:
    """No test reads the developer's ~/.config or ~/.remnic, or inherits REMNIC_* settings."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(model_cache))
    for var in ("REMNIC_MEMORY_DIR", "REMNIC_CONFIG_PATH", "REMNIC_SPACES_PATH", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    return home


def build_memory_template(factory: pytest.TempPathFactory) -> Path:
    """A fresh memory repository made once, as conftest's isolated_home would make it (neither the
    developer's HOME nor their REMNIC_* settings): ``copied_memory_root`` copies it."""
    root = factory.mktemp("template") / "mem"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(root.parent / "home"))
        for var in ("REMNIC_MEMORY_DIR", "REMNIC_CONFIG_PATH", "REMNIC_SPACES_PATH", "XDG_CONFIG_HOME"):
            mp.delenv(var, raising=False)
        Memory.init(root, settings=settings_for(root)).close()
    return root


def copied_memory_root(template: Path, root: Path) -> Path:
    """A fresh memory repository at ``root``, copied from the template. The repository (its .git and
    .remnic too) stores no absolute path, so the copy is what an init there makes, for a tenth of the
    CPU (an init runs 15 git commands)."""
    shutil.copytree(template, root, symlinks=True)
    return root


@pytest.fixture(scope="session")
def memory_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fresh memory repository per test process, for ``memory`` and ``copied_memory_root``."""
    return build_memory_template(tmp_path_factory)


@pytest.fixture
def memory(memory_template: Path, tmp_path: Path) -> Iterator[Memory]:
    """A fresh memory repository at tmp_path/mem (Memory.init's own tests call it themselves)."""
    root = copied_memory_root(memory_template, tmp_path / "mem")
    mem = Memory.open(settings=settings_for(root))
    try:
        yield mem
    finally:
        mem.close()


def git(root: Path, *args: str) -> str:
    """Plain git, as a user would run it."""
    return subprocess.run(["git", *GIT_IDENTITY, *args], cwd=root, check=True, capture_output=True, text=True).stdout


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@functools.cache
def _cli_parser() -> Parser:
    from remnic.cli import build_parser

    return build_parser()


def run_cli(*args: str, cwd: Path | None = None, fresh_parser: bool = False) -> Result:
    """Run the CLI in-process (fast); argparse exits are caught as exit codes. One parser serves every
    call, as in a server: building it is most of a short command's time. ``fresh_parser``: build one for
    this call, as `remnic` does (a test that patches the parser's construction or a command's handler,
    which the parser holds)."""
    from remnic.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args), None if fresh_parser else _cli_parser())
            except SystemExit as exc:
                code = int(exc.code or 0)
    finally:
        os.chdir(old)
    return Result(code, out.getvalue(), err.getvalue())


def run_remnic(
    *args: str,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    """Run `python -m remnic` as a real subprocess."""
    proc = subprocess.run(
        [sys.executable, "-m", "remnic", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def kill_server(pid: int) -> None:
    """SIGKILL a remnic server a test left behind, only while ``pid`` still is one: once it exited, its pid
    is soon another process's (a busy machine wraps around its pids within minutes)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"serve" in argv and any(b"remnic" in arg for arg in argv):
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def snapshot_tree(root: Path) -> dict[str, bytes]:
    """Every file outside .git and .remnic, byte for byte: proves a failed command changed nothing."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and rel.parts[0] not in (".git", ".remnic"):
            out[rel.as_posix()] = path.read_bytes()
    return out


@pytest.fixture
def spaces_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A spaces registry of this test's own (REMNIC_SPACES_PATH), never the user's."""
    path = tmp_path / "cfg" / "spaces.json"
    monkeypatch.setenv("REMNIC_SPACES_PATH", str(path))
    return path
