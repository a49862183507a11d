"""Shared fixtures: real git repositories in temp dirs, an isolated HOME, a CLI runner."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from remnic.config import settings_for
from remnic.service.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
GIT_IDENTITY = ["-c", "user.name=Test User", "-c", "user.email=test@example.com"]


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


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    root = tmp_path / "mem"
    mem = Memory.init(root, settings=settings_for(root))
    yield mem
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


def run_cli(*args: str, cwd: Path | None = None) -> Result:
    """Run the CLI in-process (fast); argparse exits are caught as exit codes."""
    from remnic.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
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
