"""Recall quality fixes: numbers and the created-date field, budget trim, inactive ranking,
direct-answer reasons, unknown namespaces and date ranges."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

from remnic.service.memory import Memory


def write(root: Path, rel: str, front: str, body: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(f"---\n{front.strip()}\n---\n{body}\n", encoding="utf-8")


def numbers_repo(root: Path) -> None:
    write(
        root,
        "facts/billing.md",
        "id: mem_go\ncategory: fact\ncreated: 2026-01-15T09:00:00Z",
        "billing-api is a Go 1.22 service deployed on GKE; it talks to Postgres and Stripe.",
    )
    write(
        root,
        "entities/ana.md",
        "id: mem_ana\ncategory: fact\ncreated: 2026-09-01T09:00:00Z",
        "Ana Ruiz is my engineering manager; we meet weekly on Mondays.",
    )
    write(
        root,
        "facts/lea.md",
        "id: mem_lea\ncategory: fact\ncreated: 2026-03-22T09:00:00Z",
        "Lea prefers mockups on Monday mornings.",
    )
    write(
        root,
        "facts/ci.md",
        "id: mem_ci\ncategory: fact\ncreated: 2026-01-23T09:00:00Z",
        "The CI pipeline takes about 14 minutes.",
    )


def test_a_version_number_does_not_match_the_day_a_memory_was_created(memory: Memory) -> None:
    numbers_repo(memory.root)
    memory.sync()
    hits = memory.recall("Go 1.22", top_k=4).hits
    assert hits[0].id == "mem_go"
    by_id = {h.id: h for h in hits}
    # Created on the 1st and the 22nd: no BM25 match from the numbers "1" and "22".
    for other in ("mem_ana", "mem_lea"):
        assert other not in by_id or not by_id[other].signals.get("bm25")
    snapshot = memory.recall_xray("Go 1.22")
    assert snapshot is not None
    from remnic.render.xray import render_xray

    assert "number(s) 1 22 not matched to created dates" in render_xray(snapshot, "text")


def test_a_day_named_with_its_month_still_matches_the_created_date(memory: Memory) -> None:
    numbers_repo(memory.root)
    memory.sync()
    hits = memory.recall("what did we note on 22 March", top_k=4).hits
    by_id = {h.id: h for h in hits}
    assert "mem_lea" in by_id and by_id["mem_lea"].signals.get("bm25")
    assert hits[0].id == "mem_lea"


RFC = """# RFC-014: Moving product search to OpenSearch

## Context
Product search runs on Elasticsearch 7.17 with three data nodes. Query volume is about 300 requests per \
second at peak and the index is 40 GB with 12 million documents. Reindexing from Postgres takes roughly four \
hours and blocks the nightly jobs.

## Options
We looked at three options: staying on 7.17, moving to Elastic Cloud with a commercial licence, and moving \
to OpenSearch 2.x. Elastic Cloud was quoted at roughly 4x our current spend. Typesense and Meilisearch were \
rejected early because our relevance tuning relies on function_score queries and nested documents.

## Decision
Migrate to self-managed OpenSearch 2.x on the existing node pool with dual writes for two weeks, comparing \
result sets with a shadow-traffic tool, then switch the products-current alias.

## Risks
Two custom analysers need porting. Rollback is switching the alias back.
"""


def test_trim_cuts_the_best_passage_rather_than_swap_in_lesser_ones() -> None:
    from remnic.recall.budget import trim

    content = "A" * 50 + " best passage with the answer in it " * 10 + "tail of the lesser passage."
    best = (50, 50 + 36 * 10)
    lesser = (best[1], len(content))
    text = trim(content, [best, lesser], 100)
    assert text.startswith(" best passage") or text.startswith("best passage")
    assert "lesser" not in text and len(text) <= 100 and text.endswith("…")


def test_a_small_budget_keeps_the_best_passage_of_a_long_note(memory: Memory) -> None:
    memory.store(RFC, category="decision")
    hit = memory.recall("why were Typesense and Meilisearch rejected", top_k=1, budget_chars=300).hits[0]
    assert hit.trimmed
    assert "Typesense and Meilisearch were rejected" in hit.content
    assert "shadow-traffic" not in hit.content and "Rollback" not in hit.content
    assert len(hit.content) <= 300


def test_include_inactive_ranks_every_inactive_hit_after_the_active_ones(memory: Memory) -> None:
    memory.store("Office wifi network: LumenGuest.")
    gone = memory.store("Guest wifi password rotates every Monday.").id
    memory.forget(gone, reason="rotated")
    hits = memory.recall("wifi password", top_k=2, include_inactive=True).hits
    assert [h.status for h in hits] == ["active", "forgotten"]
    assert hits[1].id == gone
    assert hits[1].terms.recency == 0.0  # the forget refreshed ``updated``: no recency from it
    assert hits[0].terms.recency > 0.0


def test_the_direct_answer_reason_names_only_the_floor_that_failed(memory: Memory) -> None:
    write(
        memory.root,
        "facts/k8s.md",
        "id: mem_k8s\ncategory: fact\nimportance: 0.5\nconfidence: 0.9",
        "The Kubernetes clusters run version 1.31 since the upgrade.",
    )
    memory.sync()
    result = memory.recall("kubernetes version", top_k=1)
    assert result.tier is not None
    reason = result.tier.reason
    assert "mem_k8s: importance 0.50 < 0.75)" in reason
    assert "confidence 0.90" not in reason  # 0.90 meets the 0.9 floor
    assert "confidence ≥ 0.9" in reason


def test_query_and_xray_warn_about_a_namespace_that_holds_nothing(memory: Memory) -> None:
    memory.store("Postgres 16 is the main database.")
    memory.store("Home lab runs Postgres 15.", namespace="personal")
    root = str(memory.root)
    for command in ("query", "xray"):
        got = run_cli(command, "postgres", "--namespace", "nope", "--memory-dir", root)
        assert got.code == 0, got.err
        assert "--namespace 'nope'" in got.err and "namespaces here: default, personal" in got.err
        fine = run_cli(command, "postgres", "--namespace", "personal", "--memory-dir", root)
        assert fine.code == 0 and "warning" not in fine.err


def test_a_range_of_days_in_one_month_is_the_whole_range() -> None:
    from datetime import date

    from remnic.index.dates import query_dates

    now = date(2026, 11, 27)
    for text in (
        "what happened between 1 and 20 September 2026",
        "from 1 to 20 September 2026",
        "incidents 1-20 September 2026",
    ):
        got = query_dates(text, now)
        assert got.window == (date(2026, 9, 1), date(2026, 9, 20)), text
        assert "d20260920" not in got.terms
    assert query_dates("Go 1.22 upgrade", now).spans == []


def test_an_open_window_is_shown_as_the_window_not_the_month() -> None:
    from datetime import date

    from remnic.index.dates import query_dates

    now = date(2026, 11, 27)
    before = query_dates("incidents before May 2023", now)
    assert before.window == (date.min, date(2023, 4, 30))
    assert before.describe(filter_off=True).startswith("'before May 2023' → …..2023-04-30; no filter")
    since = query_dates("since March 2026", now).describe()
    assert since.startswith("'since March 2026' → 2026-03-01..…")
    year = query_dates("outages before 2023", now)
    assert not year.unresolved and "'before 2023' → …..2022-12-31" in year.describe()


def test_the_xray_date_scope_shows_the_open_window(memory: Memory) -> None:
    numbers_repo(memory.root)
    memory.sync()
    snapshot = memory.recall_xray("incidents before May 2026")
    assert snapshot is not None
    from remnic.render.xray import render_xray

    text = render_xray(snapshot, "text")
    assert "'before May 2026' → …..2026-04-30; no filter (recall.dateFilter is off)" in text
