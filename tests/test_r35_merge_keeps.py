"""A merge (`dedup --merge`, consolidation) keeps what the merged memory held that the survivor lacks:
its tags, compared as every reader compares them (NFC, case-folded: `Café` decomposed is the survivor's
`café`), and its importance when it was higher."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

from conftest import run_cli

from remnic.config import settings_for
from remnic.service import Memory


def test_a_merge_keeps_the_higher_importance_and_adds_only_tags_the_survivor_lacks(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    text = "The staging database listens on port 5432 behind the office VPN."
    decomposed = unicodedata.normalize("NFD", "Café")
    lines: list[dict[str, Any]] = [
        {"content": text, "category": "fact", "created": "2026-01-01T00:00:00Z", "importance": 0.4, "tags": ["café"]},
        {
            "content": text.replace(" behind", ", behind"),
            "category": "fact",
            "created": "2026-02-01T00:00:00Z",
            "importance": 0.9,
            "tags": [decomposed, "ops"],
        },
    ]
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert run_cli("import", str(jsonl), "--memory-dir", str(root)).code == 0
    merged = run_cli("dedup", "--merge", "--memory-dir", str(root), "--json")
    assert merged.code == 0, merged.err
    with Memory.open(settings=settings_for(root)) as memory:
        records = memory.files.scan().records
    survivor = next(r for r in records if r.status == "active")
    assert [r.status for r in records].count("archived") == 1
    assert survivor.importance == 0.9
    assert survivor.frontmatter["tags"] == ["café", "ops"]
