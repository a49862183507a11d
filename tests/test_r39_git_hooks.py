"""A space's push, pull and share run none of the repository's git hooks (but pre-push) and never its fsmonitor
command: a pulled repository's hooks must not make remnic run its code. The service's git goes through the
storage layer (:mod:`remnic.repo.remote`), which passes the options that keep them off."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli
from test_space_sync import edit_body, only, pair

from remnic import service
from remnic.service.memory import Memory

__all__ = ["pair"]  # the fixture, imported

HOOKS = ("reference-transaction", "post-merge", "post-checkout", "post-commit", "post-index-change", "pre-push")
SERVICE = Path(service.__file__).parent


def arm(mem: Memory, ran: Path) -> None:
    """Every hook in ``.git/hooks`` and the fsmonitor command leave a marker ``<clone>-<name>`` in ``ran``, holding
    the path it ran as."""
    hooks = mem.git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in (*HOOKS, "fsmonitor"):
        script = hooks / name
        script.write_text(
            f"#!/bin/sh\necho \"$0\" > '{ran}/{mem.root.name}-{name}'\n" + ("exit 1\n" if name == "fsmonitor" else "")
        )
        script.chmod(0o755)
    git(mem.root, "config", "core.fsmonitor", str(hooks / "fsmonitor"))


def test_push_pull_and_share_run_no_hook_but_pre_push_and_no_fsmonitor(
    pair: tuple[Memory, Memory], tmp_path: Path, spaces_file: Path
) -> None:
    ana, ben = pair
    ran = tmp_path / "ran"
    ran.mkdir()
    for mem in (ana, ben):
        arm(mem, ran)
    memory_id = only(ana)
    ana.update(memory_id, {"tags": ["ops", "release"]})
    assert ana.space_push()["pushed"]
    assert sorted(p.name for p in ran.iterdir()) == ["ana-pre-push"]  # the user's last check before sharing
    ran_as = ana.root / (ran / "ana-pre-push").read_text().strip()  # where it is, so it finds its own folder
    assert ran_as.resolve() == (ana.git_dir / "hooks" / "pre-push").resolve()
    edit_body(ben, memory_id, "Tuesdays", "Wednesdays")
    report = ben.space_pull()  # a real merge: git merge, the merged files brought over, the index refreshed
    assert report.outcome == "merge" and "Wednesdays" in ben.get(memory_id).content
    assert ben.get(memory_id).tags == ["ops", "release"]
    assert sorted(p.name for p in ran.iterdir()) == ["ana-pre-push"]
    assert run_cli("space", "create", "ana", "--path", str(ana.root)).code == 0
    shared = ben.share(memory_id, "ana")
    assert shared.changed
    assert ana.space_audit(limit=1)[0]["operation"] == "share"
    assert sorted(p.name for p in ran.iterdir()) == ["ana-pre-push"]


def test_push_pull_and_share_run_git_only_through_the_storage_layer() -> None:
    found = [
        name
        for name in ("pull_guard.py", "pull_resolve.py", "pushing.py", "sharing.py")
        if "subprocess" in (SERVICE / name).read_text(encoding="utf-8")
    ]
    assert found == []
