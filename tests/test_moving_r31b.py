"""A category change never changes a memory's status or tier, never makes a twin that differs only in
case, and gives back the name a clash once suffixed when that name is free again."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_cli

from remnic.memfile.paths import relocation

OLD_ID = "fact-1735000000000-zz11"
ORIGINAL = (
    f"---\nid: {OLD_ID}\ncategory: fact\ncreated: 2026-01-02T10:00:00.000Z\nupdated: 2026-01-02T10:00:00.000Z\n"
    "source: extraction\n---\nThe staging cluster was called kestrel.\n"
)


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
    return root


def _get(root: Path, target: str) -> dict:
    result = run_cli("get", target, "--json", "--memory-dir", str(root))
    assert result.code == 0, result
    return result.json()


def _recategorise(root: Path, target: str, category: str) -> dict:
    result = run_cli("update", target, "--category", category, "--json", "--memory-dir", str(root))
    assert result.code == 0, result
    return result.json()


def _hit_ids(root: Path, text: str) -> list[str]:
    return [h["id"] for h in run_cli("query", text, "--json", "--memory-dir", str(root)).json()["hits"]]


@pytest.mark.parametrize(
    ("path", "status", "moved"),
    [
        ("archive/2026-01-02/x.md", "archived", "archive/2026-01-02/x.md"),  # the original's dated archive
        ("archive/facts/x.md", "archived", "archive/decisions/x.md"),
        ("archive/facts/2026-01-02/x.md", "archived", "archive/decisions/2026-01-02/x.md"),
        ("cold/facts/x.md", "active", "cold/decisions/x.md"),
        ("namespaces/team/archive/facts/x.md", "archived", "namespaces/team/archive/decisions/x.md"),
    ],
)
def test_a_category_change_keeps_the_tier_and_the_status(tmp_path: Path, path: str, status: str, moved: str) -> None:
    root = _repo(tmp_path, {path: ORIGINAL})
    assert _get(root, OLD_ID)["status"] == status
    was_hit = OLD_ID in _hit_ids(root, "staging cluster kestrel")

    after = _recategorise(root, OLD_ID, "decision")
    assert after["path"] == moved
    got = _get(root, OLD_ID)
    assert (got["path"], got["status"], got["category"]) == (moved, status, "decision")
    assert (OLD_ID in _hit_ids(root, "staging cluster kestrel")) == was_hit == (status == "active")
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "ls-files", moved).strip() == moved
    if moved != path:
        assert not (root / path).exists()


@pytest.mark.parametrize(
    ("path", "folders"),
    [
        ("facts/sub/a.md", ["decisions", "sub"]),
        ("Facts/a.md", ["decisions"]),
        ("notes/a.md", ["decisions"]),
        ("archive/2026-01-02/a.md", None),
        ("archive/a.md", None),
        ("cold/facts/a.md", ["cold", "decisions"]),
        ("namespaces/team/cold/facts/a.md", ["namespaces", "team", "cold", "decisions"]),
    ],
)
def test_relocation_folders(path: str, folders: list[str] | None) -> None:
    namespace = "team" if path.startswith("namespaces/") else "default"
    assert relocation(path, "decision", namespace) == folders


def test_a_move_never_makes_a_file_that_differs_only_in_case(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "decisions/plan.md": "Caching plan: use Redis.\n",
            "facts/Plan.md": "Sharding Plan: by tenant.\n",
            "decisions/Sub/other.md": "Sub-folder twin.\n",
            "facts/sub/Other.md": "Moves into the existing Sub folder.\n",
        },
    )
    plan = _get(root, "facts/Plan.md")["id"]
    assert _recategorise(root, plan, "decision")["path"] == "decisions/Plan-2.md"
    other = _get(root, "facts/sub/Other.md")["id"]
    assert _recategorise(root, other, "decision")["path"] == "decisions/Sub/Other-2.md"
    names = [p.lower() for p in git(root, "ls-files").split()]
    assert len(names) == len(set(names))


def test_moving_back_gives_back_the_name_a_clash_suffixed(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "facts/Window.md": "Deploy window is Tuesday night.\n",
            "preferences/Window.md": "Window preference: Tuesday evening.\n",
            "preferences/Door-2.md": "A name the person chose.\n",
        },
    )
    window = _get(root, "preferences/Window.md")["id"]
    assert _recategorise(root, window, "fact")["path"] == "facts/Window-2.md"
    assert _recategorise(root, window, "preference")["path"] == "preferences/Window.md"
    assert [
        v["path"] for v in run_cli("versions", "list", window, "--json", "--memory-dir", str(root)).json()["versions"]
    ][-1] == "preferences/Window.md"

    door = _get(root, "preferences/Door-2.md")["id"]
    assert _recategorise(root, door, "fact")["path"] == "facts/Door-2.md"  # never called Door.md: kept
    assert git(root, "status", "--porcelain") == ""


def test_a_suffixed_name_stays_while_the_old_name_is_taken(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {"facts/Window.md": "Deploy window is Tuesday night.\n", "preferences/Window.md": "Tuesday evening.\n"},
    )
    window = _get(root, "preferences/Window.md")["id"]
    assert _recategorise(root, window, "fact")["path"] == "facts/Window-2.md"
    (root / "preferences" / "window.md").write_text("Another window note.\n", encoding="utf-8")
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
    assert _recategorise(root, window, "preference")["path"] == "preferences/Window-2.md"  # window.md: same name
