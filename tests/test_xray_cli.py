"""`remnic xray`, `remnic query --explain` and `remnic audit`, and the demo repository's acceptance run."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from conftest import run_cli
from test_xray_capture import DEMO_QUERIES, LADDER, PINNED, build_demo

from remnic.config import settings_for
from remnic.recall.clock import ENV_VAR
from remnic.recall.snapshot import check_sums, filters_chain
from remnic.render.snapshot import RecallXraySnapshot
from remnic.render.xray import render_xray
from remnic.service.memory import Memory


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> tuple[Path, str]:
    """The repository `make demo` builds (remnic.cli.demo's main), and what the demo printed. Each step's
    `python -m remnic ...` runs in this process through the same entry point: these tests read the demo's
    output and repository, not its process boundary."""
    from remnic.cli import demo

    base = tmp_path_factory.mktemp("demo")
    root = base / "demo-memory"

    def remnic_step(command: list[str], **_kwargs: object) -> subprocess.CompletedProcess[str]:
        assert command[:3] == [sys.executable, "-m", "remnic"], command
        r = run_cli(*command[3:])
        return subprocess.CompletedProcess(command, r.code, r.out, r.err)

    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(base / "home"))  # no developer's config; module scope runs before isolated_home
        mp.setenv("XDG_CACHE_HOME", str(model_cache))
        for var in [v for v in os.environ if v.startswith("REMNIC_")]:
            mp.delenv(var)
        mp.setattr(demo, "subprocess", types.SimpleNamespace(run=remnic_step))  # the demo's own calls only
        with contextlib.redirect_stdout(printed):
            code = demo.main([str(root)])
    assert code == 0, printed.getvalue()
    return root, printed.getvalue()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    memory = build_demo(tmp_path_factory.mktemp("cli") / "memory")
    yield memory
    memory.close()


def xray_json(root: Path, query: str, *extra: str) -> dict:
    r = run_cli("xray", query, "--format", "json", "--memory-dir", str(root), *extra)
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data.pop("snapshotFound") is True  # the snapshot's members sit beside it, flat
    return data


# --------------------------------------------------------------------- acceptance on the demo repository


def test_demo_prints_a_rich_xray(demo_repo: tuple[Path, str]) -> None:
    _, out = demo_repo
    assert "$ remnic xray 'what did we decide about the recall cache TTL' --budget 2048" in out
    section = out.split("=== Recall X-ray ===", 1)[1]
    for needle in (
        "--- filters ---",
        "- status-active: 13/14 admitted (rejected superseded ×1)",
        "served-by=direct-answer",
        "served-by=review-context",
        "safety: requires-review",
        "audit-entry: audit-",
        "source-anchors:",
        "budget: ",
    ):
        assert needle in section, needle


def test_demo_repo_acceptance(demo_repo: tuple[Path, str]) -> None:
    root, _ = demo_repo
    tiers: set[str] = set()
    for query in DEMO_QUERIES:
        snap = xray_json(root, query)
        filters = snap["filters"]
        assert [f["name"] for f in filters] == LADDER
        assert filters[0]["considered"] > 0
        for prev, cur in itertools.pairwise(filters):
            assert cur["considered"] == prev["admitted"], (query, cur)  # considered − admitted = rejected, chained
        assert filters[-1]["admitted"] == len(snap["results"]) > 0
        parsed = RecallXraySnapshot.from_dict(snap)
        assert check_sums(parsed) == [] and filters_chain(parsed) == []
        for r in snap["results"]:
            d = r["scoreDecomposition"]
            total = sum(v for k, v in d.items() if k not in ("final", "mmrPenalty")) - d["mmrPenalty"]
            assert abs(total - d["final"]) <= 1e-6
            prov = r["provenance"]
            assert prov["source"] and prov["created"] and prov["scope"] == "namespace:default"
            assert prov["safety"] in ("safe", "requires-review", "blocked")
            tiers.add(r["servedBy"])
        audit_id = snap["results"][0]["auditEntryId"]
        shown = run_cli("audit", "show", audit_id, "--memory-dir", str(root), "--json")
        assert shown.code == 0 and json.loads(shown.out)["query"] == query
        assert json.loads(shown.out)["returnedIds"] == [r["memoryId"] for r in snap["results"]]
    assert len(tiers) >= 3 and {"direct-answer", "procedural", "review-context", "hybrid"} <= tiers


# --------------------------------------------------------------------- formats, flags, errors


def test_formats_render_through_the_shared_renderer(repo: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(PINNED))
    root = str(repo.root)
    query = "how do I roll back a release?"
    snap = repo.recall_xray(query, budget_chars=4096)
    for fmt in ("text", "markdown"):
        r = run_cli("xray", query, "--format", fmt, "--budget", "4096", "--memory-dir", root)
        assert r.code == 0 and r.out == render_xray(snap, fmt) + "\n"  # printed as a line
    r = run_cli("xray", query, "--format", "JSON", "--budget", "4096", "--memory-dir", root)
    # JSON is what the original's CLI prints: the snapshot flat under snapshotFound.
    assert r.code == 0 and r.out == render_xray(snap, "json") + "\n"
    assert run_cli("xray", query, "--json", "--budget", "4096", "--memory-dir", root).out == r.out
    assert r.out.startswith('{\n  "snapshotFound": true,\n  "schemaVersion": "1",\n  "query": ')
    session = xray_json(repo.root, query, "--session", "sess-9", "--namespace", "default", "--top-k", "2")
    assert session["sessionKey"] == "sess-9" and session["namespace"] == "default" and len(session["results"]) == 2


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["xray", ""], "must not be empty"),
        (["xray", "   "], "must not be empty"),
        (["xray", "x", "--format", "yaml"], '--format expects one of json, text, markdown; got "yaml"'),
        (["xray", "x", "--budget", "-5"], "--budget must be 0 (no limit) or a positive integer"),
        (["xray", "x", "--budget", "lots"], "--budget must be 0 (no limit) or a positive integer"),
        (["xray", "x", "--namespace", "../etc"], "namespace"),
    ],
)
def test_bad_input_is_a_listed_error_with_exit_2(repo: Memory, argv: list[str], needle: str) -> None:
    r = run_cli(*argv, "--memory-dir", str(repo.root))
    assert r.code == 2 and needle in r.err and r.out == ""


def test_out_is_tilde_expanded_and_written_atomically(
    repo: Memory, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(PINNED))
    reports = isolated_home / "reports"
    reports.mkdir()
    target = reports / "xray.md"
    target.write_text("old contents", encoding="utf-8")
    r = run_cli(
        "xray", "cache ttl", "--format", "markdown", "--out", "~/reports/xray.md", "--memory-dir", str(repo.root)
    )
    assert r.code == 0 and r.out == "" and str(target) in r.err
    assert target.read_text(encoding="utf-8") == render_xray(repo.recall_xray("cache ttl"), "markdown") + "\n"
    assert sorted(p.name for p in reports.iterdir()) == ["xray.md"]  # no temporary file left behind

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    r = run_cli("xray", "cache ttl", "--out", "~/reports/xray.md", "--memory-dir", str(repo.root))
    assert r.code != 0
    assert target.read_text(encoding="utf-8").startswith("# Recall X-ray\n")  # the old file is intact
    assert sorted(p.name for p in reports.iterdir()) == ["xray.md"]
    monkeypatch.undo()
    missing = run_cli(
        "xray", "cache ttl", "--out", str(isolated_home / "nope" / "x.txt"), "--memory-dir", str(repo.root)
    )
    assert missing.code == 2 and "does not exist" in missing.err


def test_query_explain_uses_the_same_renderer(repo: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(PINNED))
    r = run_cli("query", "what did we decide about the recall cache TTL", "--explain", "--memory-dir", str(repo.root))
    assert r.code == 0
    hits, xray = r.out.split("\n\n=== Recall X-ray ===\n", 1)
    assert "<direct-answer>" in hits and "!requires-review" in hits
    snap = repo.recall("what did we decide about the recall cache TTL", xray=True).xray
    assert "=== Recall X-ray ===\n" + xray == render_xray(snap, "text") + "\n"  # the last line of the output
    data = json.loads(run_cli("query", "cache ttl", "--explain", "--json", "--memory-dir", str(repo.root)).out)
    assert data["xray"]["schemaVersion"] == "1" and data["candidates"] and data["auditEntryId"]


def test_audit_show_and_list(repo: Memory) -> None:
    root = str(repo.root)
    snap = xray_json(repo.root, "who is the release captain?", "--session", "sess-a")
    audit_id = snap["results"][0]["auditEntryId"]
    r = run_cli("audit", "show", audit_id, "--memory-dir", root)
    assert r.code == 0
    lines = dict(line.split(": ", 1) for line in r.out.strip().splitlines())
    assert lines["id"] == audit_id and lines["query"] == "who is the release captain?"
    assert lines["sessionKey"] == "sess-a" and lines["source"] == "cli" and lines["traceId"] == "-"
    assert json.loads(lines["returnedIds"]) == [x["memoryId"] for x in snap["results"]]
    listed = run_cli("audit", "list", "--limit", "2", "--memory-dir", root)
    assert listed.code == 0 and listed.out.startswith(audit_id)
    bad = run_cli("audit", "show", "../../etc/passwd", "--memory-dir", root)
    assert bad.code == 2 and "not an audit entry id" in bad.err
    unknown = run_cli("audit", "show", "audit-20200101-000000000000", "--memory-dir", root)
    assert unknown.code == 1 and "no audit entry" in unknown.err
    assert run_cli("audit", "--memory-dir", root).code == 2


def test_provenance_reads_confidence_as_get_does(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    (root / "facts" / "pangolin.md").write_text(
        "---\nid: mem_handwritten0001\ncategory: fact\n---\n\nThe staging database lives on host pangolin.\n"
    )
    (root / "facts" / "otter.md").write_text(
        "---\nid: mem_handwritten0002\ncategory: fact\nconfidence: low\n---\n\nThe staging cache lives on host otter.\n"
    )
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
    assert "confidence: 0.90" in run_cli("get", "mem_handwritten0001", "--memory-dir", str(root)).out
    assert "confidence: 0.30" in run_cli("get", "mem_handwritten0002", "--memory-dir", str(root)).out
    data = xray_json(root, "where do the staging database and cache live")
    provenance = {r["memoryId"]: r["provenance"] for r in data["results"]}
    default = settings_for(root).store.default_confidence
    assert provenance["mem_handwritten0001"]["confidence"] == default == 0.9  # no key: the config's default
    assert provenance["mem_handwritten0002"]["confidence"] == 0.3  # a tier word, read as everywhere else
    assert "confidence<0.5" in provenance["mem_handwritten0002"]["safetyReasons"]
    text = run_cli("xray", "where does the staging database live", "--memory-dir", str(root)).out
    assert "confidence=0.90" in text and "confidence=0.00" not in text


def test_help_documents_the_flags_and_the_clock() -> None:
    r = run_cli("xray", "--help")
    for needle in ("--format", "--budget", "--namespace", "--session", "--out", "REMNIC_XRAY_CLOCK", "direct-answer"):
        assert needle in r.out
