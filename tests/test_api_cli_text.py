"""`get --json --raw` and `store --dry-run --json` carry the file text (``fileText``), as their text modes print it."""

from __future__ import annotations

from conftest import run_cli

from remnic import Memory


def test_get_json_raw_has_the_file_text(memory: Memory) -> None:
    rec = memory.store("We deploy on Tuesdays", category="decision").record
    on_disk = memory.file_text(rec.path)
    data = run_cli("get", rec.id, "--json", "--raw", "--memory-dir", str(memory.root)).json()
    assert data["id"] == rec.id and data["fileText"] == on_disk
    plain = run_cli("get", rec.id, "--json", "--memory-dir", str(memory.root)).json()
    assert "fileText" not in plain
    assert run_cli("get", rec.id, "--raw", "--memory-dir", str(memory.root)).out == on_disk


def test_store_dry_run_json_has_the_file_text(memory: Memory) -> None:
    args = ("store", "Ana prefers tabs", "--category", "preference", "--dry-run", "--memory-dir", str(memory.root))
    text = run_cli(*args).out
    data = run_cli(*args, "--json").json()
    assert data["dryRun"] is True and data["fileText"].strip()
    assert text.startswith("would write preferences/") and "\n---\n" in text
    assert data["fileText"].startswith(f"---\nid: {data['id']}\n") and data["fileText"].endswith("Ana prefers tabs\n")


def test_forget_and_update_take_a_file_path(memory: Memory) -> None:
    rec = memory.store("We deploy on Tuesdays", category="decision").record
    res = run_cli("update", rec.path, "--importance", "0.9", "--memory-dir", str(memory.root))
    assert res.code == 0, res.err
    res = run_cli("forget", rec.path, "--memory-dir", str(memory.root))
    assert res.code == 0 and f"forgot {rec.id}" in res.out


def test_list_tag_with_a_hash(memory: Memory) -> None:
    rec = memory.store("We deploy on Tuesdays", category="decision", tags=["#hash"]).record
    data = run_cli("list", "--tag", "#hash", "--json", "--memory-dir", str(memory.root)).json()
    assert [m["id"] for m in data["memories"]] == [rec.id]
