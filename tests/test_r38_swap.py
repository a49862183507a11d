"""An editor's rename-over save (VS Code, JetBrains, sed -i, vim backupcopy=no) landing while sync puts its
stamped copy in place is never overwritten: the copy is swapped in, and a save that got there first is
swapped back (remnic.fsio.replace_unless_held).

Real files and a real rename from another thread; the gap between sync's last check and its swap is only
widened, by holding the thread at an internal step until the editor's rename has landed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import git

from remnic import fsio
from remnic.fsio import CHANGED, HELD, REPLACED, replace_unless_held
from remnic.service.memory import Memory

pytestmark = pytest.mark.skipif(not fsio._SUPPORTED, reason="file leases are Linux-only")


def editor_save(path: Path, data: bytes) -> None:
    """VS Code's save: a temp file next to the note, renamed over it."""
    tmp = path.with_name(f".{path.name}.vscode-{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def in_thread(action: Callable[[], None]) -> None:
    """Run ``action`` in another thread and wait for it: the save is a concurrent one, not ours."""
    t = threading.Thread(target=action)
    t.start()
    t.join(timeout=10)
    assert not t.is_alive()


def hook(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    before: dict[int, Callable[[], None]] | None = None,
    after: dict[int, Callable[[], None]] | None = None,
) -> None:
    """Wrap ``fsio.<name>``: on its n-th call, run ``before[n]`` first / ``after[n]`` once it returned."""
    real, calls = getattr(fsio, name), [0]

    def wrapped(*args: Any) -> Any:
        calls[0] += 1
        if before and calls[0] in before:
            in_thread(before[calls[0]])
        got = real(*args)
        if after and calls[0] in after:
            in_thread(after[calls[0]])
        return got

    monkeypatch.setattr(fsio, name, wrapped)


@pytest.fixture
def note(tmp_path: Path) -> tuple[Path, Path]:
    path, staging = tmp_path / "a.md", tmp_path / "tmp" / "1-ab.sync"
    staging.parent.mkdir()
    path.write_bytes(b"v1\n")
    staging.write_bytes(b"---\nid: x\n---\nv1\n")  # sync's stamped copy of v1
    return path, staging


def no_litter(path: Path, staging: Path) -> None:
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.md", "tmp"]
    staging.unlink(missing_ok=True)
    assert not list(staging.parent.iterdir())


@pytest.mark.parametrize("swaps", [True, False], ids=["exchange", "move-aside"])
def test_a_rename_save_after_the_last_check_is_kept(
    note: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, swaps: bool
) -> None:
    path, staging = note
    if not swaps:
        monkeypatch.setattr(fsio, "_RENAMEAT2", None)
    # The last check before the rename asks whether a writer is waiting on the lease: the save lands then.
    hook(monkeypatch, "_breaking", before={1: lambda: editor_save(path, b"v2: the editor save\n")})
    assert replace_unless_held(path, b"v1\n", staging) == CHANGED
    assert path.read_bytes() == b"v2: the editor save\n"
    no_litter(path, staging)


def test_without_leases_a_rename_save_before_the_swap_is_kept(
    note: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, staging = note
    monkeypatch.setattr(fsio, "_SUPPORTED", False)
    hook(monkeypatch, "_exchange", before={1: lambda: editor_save(path, b"v2\n")})
    assert replace_unless_held(path, b"v1\n", staging) == CHANGED
    assert path.read_bytes() == b"v2\n"
    # and an in-place write after the read (no lease to tell) is seen by reading the bytes again
    staging.write_bytes(b"---\nid: x\n---\nv2\n")
    hook(monkeypatch, "_exchange", before={1: lambda: path.write_bytes(b"v2 and more\n")})
    assert replace_unless_held(path, b"v2\n", staging) == CHANGED
    assert path.read_bytes() == b"v2 and more\n"


def test_a_rename_save_after_the_swap_replaces_our_copy(
    note: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, staging = note
    hook(monkeypatch, "_exchange", after={1: lambda: editor_save(path, b"v2\n")})
    assert replace_unless_held(path, b"v1\n", staging) == REPLACED
    assert path.read_bytes() == b"v2\n"  # the save came last, and stays: the next sync reads it
    no_litter(path, staging)


def test_a_second_save_during_the_check_and_the_swap_back_is_the_one_kept(
    note: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, staging = note
    hook(
        monkeypatch,
        "_exchange",
        before={1: lambda: editor_save(path, b"v2\n")},
        after={1: lambda: editor_save(path, b"v3\n"), 2: lambda: editor_save(path, b"v4\n")},
    )
    assert replace_unless_held(path, b"v1\n", staging) == CHANGED
    assert path.read_bytes() == b"v4\n"  # every save landed over the one before it, as without sync
    no_litter(path, staging)


def test_vim_moving_the_note_away_around_the_swap(note: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path, staging = note
    backup = path.with_name("a.md~")

    def vim_backup() -> None:  # backupcopy=no: the note becomes the backup, then a new file is written
        os.rename(path, backup)

    hook(monkeypatch, "_exchange", before={1: vim_backup})
    assert replace_unless_held(path, b"v1\n", staging) == CHANGED
    assert backup.read_bytes() == b"v1\n" and not path.exists()
    path.write_bytes(b"v2\n")
    backup.unlink()
    # A rename-save lands first, then vim moves what the swap put there away before the swap back.
    staging.write_bytes(b"stamped v2\n")
    hook(monkeypatch, "_exchange", before={1: lambda: editor_save(path, b"v3\n")}, after={1: vim_backup})
    assert replace_unless_held(path, b"v2\n", staging) == CHANGED
    assert path.read_bytes() == b"v3\n" and backup.read_bytes() == b"stamped v2\n"


def test_a_writer_opening_the_note_meanwhile_gets_it_back(
    note: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, staging = note
    writer: list[subprocess.Popen[str]] = []
    appender = f"f = open({str(path)!r}, 'a'); f.write('appended\\n'); f.close()"

    def open_for_writing() -> None:  # its open waits on sync's lease, on the file sync read
        ino = path.stat().st_ino
        writer.append(subprocess.Popen([sys.executable, "-c", appender], text=True))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
            "BREAKING" in line and f":{ino} " in line for line in Path("/proc/locks").read_text().splitlines()
        ):
            time.sleep(0.005)

    hook(monkeypatch, "_exchange", before={1: open_for_writing})
    assert replace_unless_held(path, b"v1\n", staging) == HELD
    assert writer[0].wait(timeout=20) == 0
    assert path.read_bytes() == b"v1\nappended\n"  # what it wrote is in the note, not in a removed copy


def test_a_hard_linked_note_is_replaced_and_its_other_name_keeps_the_old_bytes(note: tuple[Path, Path]) -> None:
    path, staging = note
    other = path.with_name("link.md")
    os.link(path, other)
    assert replace_unless_held(path, b"v1\n", staging) == REPLACED
    assert path.read_bytes() == b"---\nid: x\n---\nv1\n" and other.read_bytes() == b"v1\n"


def test_removal_keeps_a_rename_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, aside = tmp_path / "a.md", tmp_path / "a.md.aside"
    path.write_bytes(b"v1\n")
    hook(monkeypatch, "_breaking", before={1: lambda: editor_save(path, b"v2\n")})
    assert replace_unless_held(path, b"v1\n", None, aside=aside) == CHANGED
    assert path.read_bytes() == b"v2\n" and not aside.exists()
    monkeypatch.undo()
    assert replace_unless_held(path, b"v2\n", None, aside=aside) == REPLACED
    assert not path.exists() and not aside.exists()


def test_sync_keeps_an_editor_save_landing_while_it_stamps_and_commits_it_next(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, rel = memory.root, "facts/raced.md"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text("Herons nest in reeds.\n")
    save = "Herons nest in reeds.\nKiwis lay big eggs.\n"
    hook(monkeypatch, "_breaking", before={1: lambda: editor_save(root / rel, save.encode())})
    memory.sync()
    assert (root / rel).read_text() == save
    monkeypatch.undo()
    memory.sync()
    assert "Kiwis lay big eggs." in git(root, "show", f"HEAD:{rel}")
    assert not git(root, "status", "--porcelain")
