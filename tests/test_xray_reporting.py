"""What the X-ray reports for memories without vectors yet, for trimmed hits, and how the markdown
fences identifiers: real repositories for the captured values, sample snapshots for the renderer."""

from __future__ import annotations

import json
import random
from pathlib import Path

from xray_samples import bare, hit

from remnic.config import settings_for
from remnic.render.xray import render_xray
from remnic.service.memory import Memory


def _deferred(tmp_path: Path) -> Memory:
    """Every memory's vectors left pending (computed later by `remnic sync run`)."""
    root = tmp_path / "vault"
    return Memory.init(root, settings=settings_for(root, sync={"defer_embeddings_above": 0}))


def test_a_memory_without_vectors_has_no_vector_raw_score(tmp_path: Path) -> None:
    memory = _deferred(tmp_path)
    (memory.root / "facts/door.md").write_text("The lighthouse keeper repaints the crimson door\n")
    (memory.root / "facts/ferry.md").write_text("The ferry captain polishes the brass bell\n")
    memory.sync()
    assert memory.vectors_pending()[0] == 2
    result = memory.recall("lighthouse crimson door", xray=True)
    assert result.hits
    signals = result.hits[0].signals
    assert (signals["cosine"], signals["chunkCosine"], signals["contextCosine"]) == (None, None, None)
    assert signals["bm25"] > 0

    snap = json.loads(render_xray(result.xray, "json"))
    raw = snap["results"][0]["rawScores"]
    assert "vector" not in raw and raw["bm25"] > 0
    assert snap["tierExplain"]["vectorsPending"] == 2
    text, md = render_xray(result.xray, "text"), render_xray(result.xray, "markdown")
    assert "raw-scores: bm25=" in text and "vector=-1.5" not in text and "raw-scores: vector" not in text
    assert "- **Raw scores:** bm25=" in md and "-1.5" not in md
    memory.close()


def _long_note(n: int, tail: str) -> str:
    rng = random.Random(7)
    words = ["harbour", "market", "ferry", "bakery", "garden", "tower", "bridge", "river", "lantern", "orchard"]
    parts = ["# Harbour notes"]
    while sum(len(p) + 2 for p in parts) < n - len(tail):
        if len(parts) % 6 == 1:
            parts.append(f"## Part {len(parts) // 6 + 1}")
        parts.append(" ".join(" ".join(rng.choice(words) for _ in range(12)).capitalize() + "." for _ in range(4)))
    return "\n\n".join([*parts, tail]) + "\n"


def test_a_trimmed_hit_is_disclosed_as_a_chunk_not_its_whole_section(tmp_path: Path) -> None:
    memory = _deferred(tmp_path)
    tail = "The lighthouse keeper repaints the crimson door every April."
    note = _long_note(9_000, tail)
    memory.store(note, category="fact")
    memory.store("The harbour market opens at six on Saturdays.", category="fact")
    result = memory.recall("who repaints the crimson lighthouse door", budget_chars=2_000, xray=True)
    top = result.hits[0]
    assert top.trimmed and tail in top.content and len(top.content) < len(note)
    xr = json.loads(render_xray(result.xray, "json"))["results"][0]
    assert xr["disclosure"] == "chunk"
    # The tokens of what was returned, not of the whole note (four characters a token).
    assert xr["estimatedTokens"] <= len(top.content) // 4 + 1 < len(note) // 4
    md = render_xray(result.xray, "markdown")
    assert "- **Disclosure:** `chunk` (~" in md and "`section`" not in md

    untrimmed = memory.recall("harbour market saturdays", xray=True)
    short = next(r for r in json.loads(render_xray(untrimmed.xray, "json"))["results"] if "market" in r["path"])
    assert short["disclosure"] == "section"
    memory.close()


def test_markdown_fences_every_identifier_by_its_backticks() -> None:
    odd = "facts/pipe|name `x`.md"
    snap = bare(
        sessionKey="sess`1",
        namespace="ns`a",
        traceId="tr``9",
        snapshotId="snap`id",
        results=[hit("mem`tick", path=odd, auditEntryId="audit`1", disclosure="section", estimatedTokens=3)],
        tierExplain={
            "tier": "hybrid",
            "tierReason": "r",
            "filteredBy": [],
            "candidatesConsidered": 1,
            "latencyMs": 1,
            "sourceAnchors": [{"path": odd, "lineRange": [3, 4]}],
        },
    )
    md = render_xray(snap, "markdown")
    assert "### 1. ``mem`tick`` — served-by=hybrid\n" in md
    assert "- **Path:** ``facts/pipe|name `x`.md``\n" in md
    assert "- ``facts/pipe|name `x`.md:3-4``" in md
    assert "| Session | ``sess`1`` |" in md and "| Namespace | ``ns`a`` |" in md
    assert "| Trace ID | ```tr``9``` |" in md and "| Snapshot ID | ``snap`id`` |" in md
    assert "- **Audit entry:** ``audit`1``\n" in md
    # Values without a backtick keep the single-backtick spans the original prints.
    plain = render_xray(bare(results=[hit("pref-editor")]), "markdown")
    assert "### 1. `pref-editor` — served-by=hybrid\n\n- **Path:** `preferences/pref-editor.md`\n" in plain
