"""A file saved while `remnic space pull` merges is never overwritten: git merges in a scratch work tree and
the pull brings each path over only if it still holds what the pull started from; a save that landed
meanwhile is merged onto the pull's result and committed. Real bare remote, two clones; the save is made
by a wrapper around the real merge driver (the exact moment git is merging, which timing alone cannot hit)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import test_space_sync as sync_cases
from conftest import git, run_cli
from test_space_sync import assert_clean, edit_body

from remnic.repo import remote as _remote
from remnic.service.memory import Memory

Pair = tuple[Memory, Memory]
pair = sync_cases.pair
NOTE = "IMPORTANT: a hand note saved while the pull merged"


def save_during_the_merge(ben: Memory, paths: list[str], tmp: Path) -> None:
    """Ben's merge driver, wrapped: before the first file is merged, a note is appended to each of ``paths``
    in the working tree (an editor saving mid-pull), then the real driver runs."""
    flag = tmp / "saved.flag"
    appends = "; ".join(f"printf '%s\\n' {shlex.quote(NOTE)} >> {shlex.quote(str(ben.root / p))}" for p in paths)
    script = tmp / "driver.sh"
    script.write_text(
        f"if [ ! -e {shlex.quote(str(flag))} ]; then touch {shlex.quote(str(flag))}; {appends}; fi\n"
        f'exec {shlex.quote(sys.executable)} -m remnic merge-file "$@"\n',
        encoding="utf-8",
    )
    git(ben.root, "config", "merge.remnic.driver", f"sh {shlex.quote(str(script))} %O %A %B %P")


def test_a_save_while_the_driver_runs_is_kept_and_merged_with_what_the_pull_brought(pair: Pair, tmp_path: Path) -> None:
    ana, ben = pair
    conflicted = ana.store("Backups run at 02:00 UTC.\n\nThey take an hour.\n", category="fact").id
    plain = ana.store(
        "The staging database lives in eu-west-1.\n\nIt is rebuilt weekly.\n\nIts backups are kept a month.\n",
        category="fact",
    ).id
    ana.space_push()
    ben.space_pull()
    edit_body(ana, conflicted, "an hour", "an hour, says ana")  # both sides: the driver merges it
    edit_body(ana, plain, "eu-west-1", "eu-central-1")  # the other side only: git writes it without a driver
    ana.sync()
    ana.space_push()
    edit_body(ben, conflicted, "02:00", "03:00")
    ben.sync()
    paths = [ben.get(conflicted).path, ben.get(plain).path]
    save_during_the_merge(ben, paths, tmp_path)

    report = ben.space_pull()

    assert (tmp_path / "saved.flag").exists(), "the driver never ran"
    assert report.outcome == "merge"
    assert sorted(s["path"] for s in report.saved) == sorted(paths)
    text = ben.file_text(ben.get(plain).path)
    assert NOTE in text and "eu-central-1" in text, text  # the save and the other side's edit, both
    mine = ben.get(conflicted)  # a true body conflict: this side (with the save) at the path, theirs beside it
    (conflict,) = report.conflicts
    assert NOTE in mine.content and "03:00" in mine.content and mine.status == "pending_review"
    assert "says ana" in ben.get(conflict["copyId"]).content
    for path in paths:  # committed by the pull: nothing left to sync, the note in HEAD
        assert NOTE in git(ben.root, "show", f"HEAD:{path}")
    assert git(ben.root, "status", "--porcelain").strip() == ""
    assert not (ben.git_dir / "remnic-pull-tree").exists()
    assert_clean(ben)
    out = run_cli("space", "pull", "--memory-dir", str(ben.root))
    assert out.code == 0 and "saved while" not in out.out  # reported once, by the pull it happened in


def test_the_save_is_reported_by_the_cli(pair: Pair, tmp_path: Path) -> None:
    ana, ben = pair
    memory_id = ana.store("The VPN certificate expires in March.\n\nRenew it in February.\n", category="fact").id
    ana.space_push()
    ben.space_pull()
    edit_body(ana, memory_id, "February", "January")
    ana.sync()
    ana.space_push()
    edit_body(ben, memory_id, "March", "April")
    ben.sync()
    path = ben.get(memory_id).path
    save_during_the_merge(ben, [path], tmp_path)
    out = run_cli("space", "pull", "--memory-dir", str(ben.root), "--json")
    assert out.code == 0, out.err
    (saved,) = out.json()["savedDuringPull"]
    assert saved["path"] == path and saved["commit"] == ben.head()
    text = ben.file_text(path)
    assert NOTE in text and "April" in text and "saved while the pull merged it" in saved["how"]
    assert _remote.merge_head(ben.ledger) is None
    assert_clean(ben)
