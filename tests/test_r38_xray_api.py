"""The X-ray's typed Python API and its docs: every returned type exported, score terms that sum with their
sign, a ladder whose scope counts say what they count, one error shape for a flag conflict, audit ids a
pinned clock repeats, and Python messages in Python's names."""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli

import remnic
from remnic import Memory, ValidationError
from remnic.config import settings_for
from remnic.render.vocabulary import SCORE_TERMS

ROOT = Path(__file__).resolve().parents[1]
PINNED = 1_796_000_000_000  # 2026-11-30T00:53:20Z
RELEASES = [
    ("We cut releases every Tuesday after the standup.", "decision"),
    ("Releases are cut on Tuesdays; the release captain tags them.", "decision"),
    ("Release cuts happen every Tuesday morning, tagged by the captain.", "fact"),
    ("The release captain this quarter is Ana.", "fact"),
    ("Ana prefers tabs over spaces.", "preference"),
    ("The staging database listens on port 5433.", "fact"),
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("xray-api") / "mem"
    # MMR at 0.5 so near-duplicate results carry a positive penalty.
    mem = Memory.init(root, settings=settings_for(root, recall={"mmr_lambda": 0.5}))
    for text, category in RELEASES:
        mem.store(text, category=category, tags=["ops"] if "release" in text.lower() else None)
    yield mem
    mem.close()


def _module_namespace(module: typing.Any) -> dict[str, typing.Any]:
    """The module's globals plus what it imports only for the checker (its TYPE_CHECKING block)."""
    namespace = dict(vars(module))
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level:
                    stmt.module = ".".join(module.__name__.split(".")[: -stmt.level] + [stmt.module or ""]).strip(".")
                    stmt.level = 0
                exec(compile(ast.Module([stmt], []), module.__name__, "exec"), namespace)
    return namespace


def _remnic_types(hint: typing.Any) -> Iterator[type]:
    for arg in typing.get_args(hint):
        yield from _remnic_types(arg)
    if isinstance(hint, type) and hint.__module__.startswith("remnic"):
        yield hint


def test_every_type_a_memory_method_returns_is_exported() -> None:
    exported = {getattr(remnic, name) for name in remnic.__all__ if name != "__version__"}
    missing = []
    for name, attr in inspect.getmembers(Memory, callable):
        if name.startswith("_"):
            continue
        fn = inspect.unwrap(attr)
        hints = typing.get_type_hints(fn, globalns=_module_namespace(sys.modules[fn.__module__]))
        missing += [f"{name} -> {t.__qualname__}" for t in _remnic_types(hints.get("return")) if t not in exported]
    assert missing == []
    from remnic.service.review import ReviewResult

    assert remnic.ReviewResult is ReviewResult and "ReviewResult" in dir(remnic)
    assert "`ReviewResult`" in (ROOT / "README.md").read_text()


def test_the_dev_install_is_one_mypy_can_follow() -> None:
    """setuptools' default editable install is an import hook mypy cannot see; compat mode is a path."""
    recipe = (ROOT / "Makefile").read_text().split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
    install = next(line for line in recipe.splitlines() if "pip install" in line and " -e " in line)
    assert "editable_mode=compat" in install
    assert "editable_mode=compat" in (ROOT / "README.md").read_text()


def test_signed_terms_sum_to_final_where_terms_carry_the_penalty_positive(repo: Memory) -> None:
    snap = repo.recall_xray("when do we cut releases", clock=PINNED)
    assert snap is not None and snap.results
    penalised = [r.score for r in snap.results if (r.score.mmr_penalty or 0) > 0]
    assert penalised, [r.score for r in snap.results]
    for score in (r.score for r in snap.results):
        assert score.total() == pytest.approx(score.final, abs=1e-7)
        assert dict(score.signed_terms())["mmr_penalty"] == -(score.mmr_penalty or 0.0)
    first = penalised[0]
    assert sum(v for _, v in first.terms()) == pytest.approx(first.final + 2 * (first.mmr_penalty or 0), abs=1e-7)


def test_the_docs_formula_names_every_term_and_headroom_is_always_written(repo: Memory) -> None:
    doc = (ROOT / "docs" / "xray.md").read_text()
    formula = doc.split("final = vector", 1)[1].split("```", 1)[0]
    for _attr, key in SCORE_TERMS:
        assert key in "vector" + formula, key
        assert f"| `{key}` |" in doc, key
    row = next(line for line in doc.splitlines() if line.startswith("| `headroomResults` |"))
    assert "when the limit cut something" not in row and "always" in row
    snap = repo.recall_xray("staging database port", clock=PINNED, top_k=50)
    assert snap is not None
    assert json.loads(json.dumps(snap.to_dict()))["headroomResults"] == []


def test_the_scope_stages_say_what_their_counts_count(repo: Memory) -> None:
    result = repo.recall("releases", category="decision", clock=PINNED)
    stages = {s.name: s for s in result.stages}
    pool = stages["namespace-scope"].admitted
    assert stages["category-scope"].considered == pool == stages["category-scope"].admitted
    assert f"counted: the {pool} candidate" in stages["namespace-scope"].reason
    assert "retrieved within category-scope" in stages["namespace-scope"].reason
    assert "2 of 6 in scope, 4 left out" in stages["category-scope"].reason
    plain = repo.recall("releases", clock=PINNED)
    assert "counted:" not in plain.stages[0].reason  # no narrower scope stage: the pool's line says it


def test_json_and_format_conflict_is_a_usage_error_naming_both(repo: Memory) -> None:
    got = run_cli("xray", "releases", "--json", "--format", "text", "--memory-dir", str(repo.root))
    assert got.code == 2 and got.out == ""
    error = json.loads(got.err)
    assert error["code"] == "usage_error"
    assert [d["field"] for d in error["details"]] == ["--json", "--format"]
    assert set(error["details"][1]["options"]) == {"text", "markdown", "json"}


def test_audit_show_lists_every_entry_a_pinned_clock_gave_one_id(repo: Memory) -> None:
    first = repo.recall("who is the release captain", clock=PINNED, top_k=3, source="cli").audit_id
    second = repo.recall("who is the release captain", clock=PINNED, top_k=3).audit_id
    assert first == second and first is not None
    entry = repo.audit_show(second)
    assert entry["source"] == "api"  # the newest: the recall that just ran
    assert entry["sharedId"]["count"] == 2 and [e["source"] for e in entry["sharedId"]["earlier"]] == ["cli"]
    shown = run_cli("audit", "show", second, "--memory-dir", str(repo.root))
    assert shown.code == 0 and "2 entries share this id" in shown.out
    assert re.findall(r"^\s*source: (\w+)$", shown.out, re.M) == ["api", "cli"]
    lone = repo.recall("staging database", clock=PINNED + 1).audit_id
    assert lone is not None and "sharedId" not in repo.audit_show(lone)


def test_python_messages_and_help_speak_python(repo: Memory) -> None:
    with pytest.raises(ValidationError) as caught:
        repo.recall_xray("releases", include_inactive=True, statuses=["active"])
    message = str(caught.value)
    assert message.startswith("include_inactive:") and not re.search(r"include[A-Z]", message), message
    doc = inspect.getdoc(Memory.recall_xray) or ""
    for argument in ("budget_chars", "top_k", "clock", "session_key", "trace_id", "source", "namespace"):
        assert f"``{argument}``" in doc, argument
    assert "10000" in doc and "no limit" in doc and "REMNIC_XRAY_CLOCK" in doc
    assert "remnic.service.recall." not in doc + (inspect.getdoc(Memory.recall) or "")
