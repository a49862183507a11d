"""The package's types reach a user's checker: py.typed ships, the API's methods say what they return,
and the documented names exist."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import remnic
from remnic import Memory

ROOT = Path(__file__).resolve().parents[1]


def test_py_typed_ships_with_the_package() -> None:
    assert (Path(remnic.__file__).parent / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()


def test_no_public_method_returns_any_and_recall_takes_named_options() -> None:
    for name in ("recall", "recall_xray", "sync", "reindex", "refresh_index", "consolidate"):
        ret = inspect.signature(getattr(Memory, name)).return_annotation
        assert ret not in ("Any", inspect.Signature.empty), name
    params = inspect.signature(Memory.recall).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values())
    assert {"top_k", "namespace", "tags", "as_of", "spaces", "audit", "progress"} <= set(params)


def test_documented_names_exist() -> None:
    from remnic.render.snapshot import RecallXraySnapshot
    from remnic.service import browse

    assert "remnic.render.snapshot.RecallXraySnapshot" in (Memory.recall_xray.__doc__ or "")
    assert "remnic.xray" not in (Memory.recall.__doc__ or "") + (Memory.recall_xray.__doc__ or "")
    assert "remnic.service.browse.search" in (Memory.search.__doc__ or "") and browse.search
    assert RecallXraySnapshot and remnic.ObserveResult.__name__ == "ObserveResult"
    assert "ObserveResult" in remnic.__all__


@pytest.mark.slow
def test_mypy_strict_sees_the_installed_types(tmp_path: Path) -> None:
    """As a user's script sees remnic installed (PEP 561: only a package with py.typed is read)."""
    import venv

    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    site = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    shutil.copytree(Path(remnic.__file__).parent, site / "remnic", ignore=shutil.ignore_patterns("__pycache__"))
    script = tmp_path / "user.py"
    script.write_text(
        "from remnic import Memory\n"
        "from remnic.recall import RecallResult\n"
        "def use(m: Memory) -> RecallResult:\n"
        "    return m.recall('x', top_k=3)\n"
        "def typo(m: Memory) -> None:\n"
        "    m.recall('x', topk=3)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable", str(python), "user.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert 'Unexpected keyword argument "topk"' in proc.stdout, proc.stdout
    assert proc.stdout.count("error:") == 1, proc.stdout
