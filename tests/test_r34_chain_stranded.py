"""Forgetting (or deleting) the head of a supersession chain strands the value it replaced: no memory of it
is current. `remnic forget` says so with the command that revives it; `remnic doctor` warns, naming both
files; after the revival recall answers again and the doctor is quiet."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli
from test_r34_chain_revert import observed_chain


def _stranded_check(root: Path) -> dict:
    checks = run_cli("doctor", "--json", "--memory-dir", str(root)).json()["checks"]
    return {c["name"]: c for c in checks}["superseded-by-rejected"]


def test_forget_of_a_chain_head_warns_and_doctor_names_the_stranded_value(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    d = ["--memory-dir", str(root)]
    b, c = m["B"], m["C"]
    revive = f"`remnic update {b['id']} --status active`"

    said = run_cli("forget", c["id"], "--reason", "wrong, it is still 5433", "--json", *d)
    assert said.code == 0, said
    [warning] = said.json()["warnings"]
    assert warning["field"] == "supersededBy" and b["id"] in warning["message"] and revive in warning["message"]
    assert "forgotten" in warning["message"], warning

    check = _stranded_check(root)
    assert check["status"] == "warn", check
    [line] = check["problems"]
    assert b["path"] in line and c["path"] in line and revive in line, line
    assert "every superseded" not in check["detail"]

    assert run_cli("update", b["id"], "--status", "active", *d).code == 0
    assert _stranded_check(root)["status"] == "ok"
    hits = run_cli("query", "what is the staging DB port", "--json", *d).json()["hits"]
    assert hits and hits[0]["id"] == b["id"], hits
    assert git(root, "status", "--porcelain") == ""


def test_forget_prints_the_warning_in_text_mode(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    out = run_cli("forget", m["C"]["path"], "--memory-dir", str(root))
    assert out.code == 0 and f"warning: stranded value: {m['B']['id']}" in out.out, out
    plain = run_cli("forget", m["A"]["id"], "--json", "--memory-dir", str(root))  # A's successor B still is superseded
    assert plain.code == 0 and "warnings" not in plain.json(), plain.json()


def test_a_deleted_chain_head_is_a_stranded_value_too(tmp_path: Path) -> None:
    root, m = observed_chain(tmp_path)
    (root / m["C"]["path"]).unlink()
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
    check = _stranded_check(root)
    assert check["status"] == "warn", check
    [line] = check["problems"]
    assert m["B"]["path"] in line and m["C"]["id"] in line and "no memory file holds" in line, line
    assert f"`remnic update {m['B']['id']} --status active`" in line
