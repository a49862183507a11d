"""A pull started while a killed pull's `git merge` still runs (git finishes on its own, in its own session):
the second pull waits for git, then looks again. When git stopped in a conflicted merge during that wait, the
pull finishes that merge as crash recovery does (its files are the merge's, never taken for hand edits), and
never commits conflict copies in the middle of a merge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from test_space_sync import assert_clean, build_pair_template, copy_template, edit_body

from remnic.config import settings_for
from remnic.repo import gitindex
from remnic.repo import remote as _remote
from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
KEPT = "Deploys need two approvals.\n\nAsk the release captain.\n"
GONE = "The staging database is reset every night.\n"
_TEMPLATES: dict[Path, Path] = {}


def _seed(ana: Memory) -> None:
    ana.store(KEPT, category="decision")
    ana.store(GONE, category="fact")


def _template(factory: pytest.TempPathFactory) -> Path:
    """ana and ben, clones of one bare remote holding two memories (built once a test process)."""
    return build_pair_template(factory, _TEMPLATES, "race-template", _seed)


@pytest.fixture
def pair(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    copy_template(_template(tmp_path_factory), tmp_path, ("ana/.git/config", "ben/.git/config"))
    ana = Memory.open(settings=settings_for(tmp_path / "ana"))
    ben = Memory.open(settings=settings_for(tmp_path / "ben"))
    yield ana, ben
    ana.close()
    ben.close()


def _id_of(mem: Memory, text: str) -> str:
    return next(r.id for r in mem.list() if r.content.strip() == text.strip())


def _slow_driver(mem: Memory, seconds: float) -> None:
    """git runs the merge driver through the shell: a sleep first makes its merge take that long."""
    driver = git(mem.root, "config", "--local", "--get", "merge.remnic.driver").strip()
    git(mem.root, "config", "--local", "merge.remnic.driver", f"sleep {seconds}; {driver}")


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _kill_the_pull_while_git_merges(ben: Memory) -> int:
    """`remnic space pull` in a process, killed with SIGKILL once its git merge runs; git's pid."""
    puller = subprocess.Popen(
        [sys.executable, "-m", "remnic", "space", "pull", "--memory-dir", str(ben.root), "--json"],
        env={**os.environ, "REMNIC_NO_DAEMON": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    marker = ben.git_dir / gitindex.PULL_MARKER
    deadline = time.monotonic() + 60
    pid = None
    while pid is None:
        assert puller.poll() is None, "the pull ended before git merged"
        assert time.monotonic() < deadline, "git never started the merge"
        try:
            pid = json.loads(marker.read_text(encoding="utf-8")).get("pid")
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    puller.send_signal(signal.SIGKILL)
    assert puller.wait(timeout=60) == -9
    return int(pid)


def _diverge(ana: Memory, ben: Memory) -> tuple[str, str]:
    """A true body conflict (the driver keeps a copy) and a memory deleted on ana's side and edited on ben's
    (git stops in the merge)."""
    kept, gone = _id_of(ana, KEPT), _id_of(ana, GONE)
    edit_body(ana, kept, "two approvals", "three approvals")
    ana.sync()
    git(ana.root, "rm", "-q", ana.get(gone).path)
    git(ana.root, "commit", "-qm", "remove the staging note by hand")
    ana.space_push()
    edit_body(ben, kept, "two approvals", "four approvals")
    edit_body(ben, gone, "every night", "every Sunday night")
    ben.sync()
    return kept, gone


def test_a_pull_waiting_for_a_killed_pulls_git_finishes_the_merge_git_stopped_in(pair: Pair) -> None:
    ana, ben = pair
    kept, gone = _diverge(ana, ben)
    before = ben.head()
    _slow_driver(ben, 1.0)
    git_pid = _kill_the_pull_while_git_merges(ben)
    assert ben.ledger.in_progress() == "a pull's git merge is still running"
    report = ben.space_pull()  # waits for the killed pull's git, which then stops in the merge
    assert not _running(git_pid)  # the pull waited for git to end
    assert report.finished_previous == "finished" and report.outcome == "merge"
    assert report.phases_ms["recover"] > report.phases_ms["edits"]  # the wait is its own phase
    assert report.before == before
    (conflict,) = report.conflicts
    assert conflict["path"] == ben.get(kept).path
    assert any(r["path"] == ben.get(gone).path and "kept the edited version" in r["how"] for r in report.resolved)
    assert "every Sunday night" in ben.get(gone).content  # the edit wins over the deletion
    assert "four approvals" in ben.get(kept).content
    assert "three approvals" in ben.get(conflict["copyId"]).content
    # The merge is a real merge commit (two parents), the copies a commit of their own on top; nothing committed
    # as hand edits, nothing left uncommitted.
    subjects = git(ben.root, "log", "--first-parent", "--format=%s", f"{before}..HEAD").splitlines()
    assert subjects == [
        "remnic merge: kept the other side's version of 1 memory beside this side's",
        "remnic pull: merge origin/main",
    ]
    assert git(ben.root, "rev-parse", "HEAD~1^2").strip() == git(ben.root, "rev-parse", "origin/main").strip()
    assert git(ben.root, "status", "--porcelain").strip() == ""
    assert not (ben.git_dir / gitindex.PULL_MARKER).exists() and _remote.merge_head(ben.ledger) is None
    assert_clean(ben)


def test_doctor_does_not_advise_git_reset_for_a_merge_git_stopped_in(pair: Pair) -> None:
    """A pull killed once git stopped in the merge, before it brought the merge's files over: git's index holds
    the merge's results while the files are HEAD's. doctor's merge line says how to finish it; its writes line
    must not advise `git reset`, which would throw those results away."""
    ana, ben = pair
    kept, _ = _diverge(ana, ben)
    killed = subprocess.run(
        [sys.executable, "-m", "remnic", "space", "pull", "--memory-dir", str(ben.root), "--json"],
        env={**os.environ, "REMNIC_NO_DAEMON": "1", "REMNIC_CRASH_AT": "pull-merging"},
        capture_output=True,
        timeout=60,
    )
    assert killed.returncode == -9 and _remote.merge_head(ben.ledger) is not None
    assert ben.get(kept).path in git(ben.root, "diff", "--cached", "--name-only")  # the merge's result, staged
    checks = {c["name"]: c for c in ben.doctor()}
    assert checks["merge"]["status"] == "fail"
    assert checks["writes"]["status"] == "ok" and "git reset" not in checks["writes"]["detail"]
    assert "the `merge` line says how to finish it" in checks["writes"]["detail"]
    assert ben.space_pull().finished_previous == "finished"
    assert "four approvals" in ben.get(kept).content
    assert_clean(ben)
