"""Session 38 CLI fixes: literal git pathspecs for memory paths, consistent errors and exit codes,
help examples, doctor's counts, and dedup's work on many similar memories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Result, git, run_cli

from remnic.config import settings_for
from remnic.service.memory import Memory


def _note(root: Path, rel: str, mid: str, body: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nid: {mid}\ncategory: fact\n---\n{body}\n", encoding="utf-8")


def cli(root: Path, *args: str) -> Result:
    return run_cli("--memory-dir", str(root), *args, cwd=root)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    return root


# Each name is a glob or pathspec magic to git unless taken literally; "decoy" is what the glob matches.
_NAMES = [
    ("facts/[draft] idea.md", "facts/d idea.md"),
    ("facts/star*.md", "facts/starry.md"),
    ("facts/q?.md", "facts/qx.md"),
    ("facts/a:b.md", None),
    (":(top)odd.md", None),
    (":(glob)*.md", None),
]


@pytest.mark.parametrize(("name", "decoy"), _NAMES)
def test_versions_take_a_path_literally(repo: Path, name: str, decoy: str | None) -> None:
    (repo / "remnic.config.json").write_text(json.dumps({"store": {"include": ["*.md"]}}), encoding="utf-8")
    _note(repo, name, "mem_lit0000000000000001", "the named file")
    if decoy:
        _note(repo, decoy, "mem_lit0000000000000002", "a decoy the glob matches")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add both")
    if decoy:
        _note(repo, decoy, "mem_lit0000000000000002", "the decoy, edited")
        git(repo, "commit", "-qam", "edit the decoy")

    listed = cli(repo, "versions", "list", name, "--json")
    assert listed.code == 0, listed.err
    versions = listed.json()["versions"]
    assert [v["path"] for v in versions] == [name]

    by_id = cli(repo, "versions", "list", "mem_lit0000000000000001", "--json")
    assert by_id.code == 0, by_id.err
    assert [v["path"] for v in by_id.json()["versions"]] == [name]

    timeline = cli(repo, "timeline", name, "--json")
    assert timeline.code == 0, timeline.err
    assert name in timeline.out and (decoy is None or decoy not in timeline.out)

    if decoy:
        before = (repo / decoy).read_bytes()
        revert = cli(repo, "versions", "revert", name, "v1")
        assert revert.code == 0, revert.err
        assert (repo / decoy).read_bytes() == before  # the other memory is not touched
        assert decoy not in revert.out


def test_a_quoted_glob_is_no_path(repo: Path) -> None:
    _note(repo, "decisions/we-cut-on-tuesday.md", "mem_lit0000000000000003", "tuesday")
    _note(repo, "decisions/we-cut-on-wednesday.md", "mem_lit0000000000000004", "wednesday")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    for args in (("versions", "list", "decisions/*.md"), ("versions", "revert", "decisions/w*.md", "v1", "--force")):
        r = cli(repo, *args)
        assert r.code != 0
        assert "wednesday" not in r.out
    assert "wednesday" in (repo / "decisions/we-cut-on-wednesday.md").read_text()


# --- Ctrl-C before a command is in charge, and onnxruntime's ImportError that wraps it ---


def test_ctrl_c_while_loading_exits_130_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    import remnic.cli as cli_module

    def interrupted_load() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "build_parser", interrupted_load)
    r = run_cli("list", "--json", fresh_parser=True)
    assert r.code == 130
    assert json.loads(r.err) == {"error": "interrupted", "code": "interrupted"}


def test_an_import_broken_by_ctrl_c_exits_130(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import remnic.cli.memories as memories

    def broken_import(args: object) -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise ImportError("initialization failed") from exc  # what pybind11 raises for it

    monkeypatch.setattr(memories, "cmd_list", broken_import)
    r = run_cli("--memory-dir", str(repo), "list", cwd=repo, fresh_parser=True)  # the parser holds the handler
    assert r.code == 130 and r.err.strip() == "remnic: interrupted"


# --- the same condition, the same exit and stream ---


def test_an_unknown_space_is_the_same_error_for_switch_and_delete() -> None:
    switch = run_cli("space", "switch", "nope", "--json")
    delete = run_cli("space", "delete", "nope", "--json")
    assert switch.code == delete.code == 2
    assert json.loads(switch.err)["code"] == json.loads(delete.err)["code"]
    assert switch.out == delete.out == ""


def test_json_errors_go_to_stderr(repo: Path) -> None:
    shown = cli(repo, "entities", "show", "nobody-at-all", "--json")
    assert shown.code == 1 and shown.out == ""
    error = json.loads(shown.err)
    assert error["code"] == "not_found" and error["found"] is False and "error" in error

    _note(repo, "facts/broken.md", "mem_bad", "x\n---\n: : [")
    (repo / "facts/broken.md").write_text("---\nid: mem_bad\n: : bad yaml [\n---\nbroken\n", encoding="utf-8")
    doctor = cli(repo, "doctor", "--json")
    assert doctor.code == 1
    assert doctor.json()["ok"] is False  # the report stays on stdout
    failure = json.loads(doctor.err)
    assert failure["code"] == "check_failed" and "memory-files" in failure["error"]


def test_a_missing_config_folder_is_refused_as_export_out_is(repo: Path, tmp_path: Path) -> None:
    config = tmp_path / "no" / "such" / "hooks.json"
    r = cli(repo, "connectors", "install", "codex", "--config", str(config), "--json")
    assert r.code == 2
    assert "--config" in json.loads(r.err)["error"] and "does not exist" in json.loads(r.err)["error"]
    assert not (tmp_path / "no").exists()
    out = cli(repo, "export", "--out", str(tmp_path / "no2" / "x.jsonl"), "--json")
    assert out.code == 2 and "--out" in json.loads(out.err)["error"]


# --- help ---


def test_every_command_has_examples_and_defaults_are_shown() -> None:
    import argparse

    from remnic.cli import build_parser

    missing = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        if "examples:" not in (parser.epilog or ""):
            missing.append(name)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(sub, f"{name} {sub_name}")

    walk(build_parser(), "remnic")
    assert missing == []
    helped = run_cli("action-confidence", "--help")
    assert "(default 0.5" in " ".join(helped.out.split())


# --- doctor's counts ---


def test_doctor_counts_a_changed_symlink_it_lists_elsewhere(repo: Path) -> None:
    _note(repo, "decisions/tuesday.md", "mem_lit0000000000000005", "we cut on tuesday")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    (repo / "facts").mkdir(exist_ok=True)
    (repo / "facts/broken.md").write_text("---\nid: mem_bad\n: : bad yaml [\n---\nbroken\n", encoding="utf-8")
    (repo / "facts/link.md").symlink_to("../decisions/tuesday.md")
    checks = {c["name"]: c for c in cli(repo, "doctor", "--json").json()["checks"]}
    assert "1 changed symbolic link" in checks["working-tree"]["detail"]
    assert "facts/link.md" in " ".join(checks["skipped-files"]["problems"])


# --- dedup: progress while comparing ---


def test_dedup_reports_progress_while_comparing(tmp_path: Path) -> None:
    from remnic.service.dedup import find_duplicates

    root = tmp_path / "mem"
    Memory.init(root, settings=settings_for(root)).close()
    for i in range(6):
        _note(root, f"facts/bulk-{i}.md", f"mem_bulk00000000000000{i}", f"Bulk memory number {i} about topic {i % 3}")
    mem = Memory.open(settings=settings_for(root))
    try:
        calls: list[tuple[int, int]] = []
        found = find_duplicates(mem, progress=lambda done, total: calls.append((done, total)))
    finally:
        mem.close()
    assert found.considered == 6 and found.groups == ()
    assert calls[-1] == (6, 6) and any(done < 6 for done, total in calls if total == 6)
