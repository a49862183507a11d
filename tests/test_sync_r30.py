"""A dry run names a file the way the real run will, and hand edits in bulk are stamped from git's copy."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, run_cli

from remnic.config import settings_for
from remnic.service import Memory


def _changes(root: Path, *extra: str) -> list[dict]:
    out = run_cli("sync", "run", "--memory-dir", str(root), "--json", *extra)
    assert out.code == 0, out.err
    return json.loads(out.out)["changes"]


def test_a_dry_run_names_the_id_a_lost_id_line_gets_back(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        record = memory.store("Ana prefers tabs over spaces.", category="preference").record
    path = root / record.path
    path.write_text("".join(line for line in path.read_text().splitlines(True) if not line.startswith("id:")))
    dry = _changes(root, "--dry-run")
    real = _changes(root)
    assert [c["id"] for c in dry] == [c["id"] for c in real] == [record.id]


def test_many_hand_edits_each_get_their_own_stamp(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        result = memory.import_records(
            [{"content": f"Service {i} runs on host h{i}.", "category": "fact"} for i in range(30)]
        )
    records = sorted(result.records, key=lambda r: r.path)
    edited = records[:20]
    for r in edited[:10]:  # the body changes: stamped
        p = root / r.path
        p.write_text(p.read_text().replace("runs on host", "now runs on host"))
    for r in edited[10:]:  # only the frontmatter changes: no stamp
        p = root / r.path
        p.write_text(p.read_text().replace("category: fact", "category: fact\nowner: ops"))
    _changes(root)
    with Memory.open(settings=settings_for(root)) as memory:
        for r in edited[:10]:
            now = memory.get(r.id)
            assert now.frontmatter["contentHash"] != r.frontmatter["contentHash"], r.path
        for r in edited[10:]:
            now = memory.get(r.id)
            assert now.frontmatter["contentHash"] == r.frontmatter["contentHash"], r.path
            assert now.frontmatter.get("updated") == r.frontmatter.get("updated"), r.path
    assert git(root, "status", "--porcelain") == ""
