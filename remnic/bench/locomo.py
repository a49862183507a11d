"""LoCoMo retrieval benchmark: evidence recall@k of remnic's recall, through the public API only.

Each conversation is imported into a fresh temporary memory repository
(``Memory.init`` + ``import_records``):

- turn granularity: one memory per turn, content ``"Speaker: text"`` plus
  ``[shares <image caption>]`` when the turn shared an image, ``sourceTurnId``
  = the dia_id, ``episodeId`` = the session, ``created`` = the session's date
  (plus the turn's index in seconds, so turns keep their order);
- session granularity: one memory per session holding all its turn lines.

Every question (categories 1–4; category 5, adversarial, reported apart) is
asked with ``Memory.recall``; a hit counts for every dia_id its memory holds.
Metrics: evidence recall@k (fraction of a question's evidence dia_ids in the
top k, averaged over questions), hit@k (any evidence in the top k), MRR, and
recall latency. BM25-only and vector-only baselines come from the same run
and the same repositories, by changing recall settings only.

Nothing in remnic's product code knows about LoCoMo: this harness decides
what text and frontmatter a turn memory has.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from . import Report, md_table, percentile

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DEFAULT_KS = (1, 5, 10)
_EVIDENCE_RE = re.compile(r"D:?(\d+):(\d+)")


def default_data_dir() -> Path:
    env = os.environ.get("REMNIC_LOCOMO_DIR")
    if env:
        return Path(env)
    # The checkout's parent holds shared/ (a worktree may sit deeper): the nearest ancestor that has it.
    here = Path(__file__).resolve().parents[2]
    for base in here.parents:
        if (base / "shared" / "data" / "locomo").is_dir():
            return base / "shared" / "data" / "locomo"
    return here.parent / "shared" / "data" / "locomo"


# --------------------------------------------------------------------------- data


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    session: int
    index: int
    date: datetime | None

    @property
    def memory_text(self) -> str:
        text = f"{self.speaker}: {self.text.strip()}"
        return text + (f" [shares {self.caption.strip()}]" if self.caption else "")


@dataclass
class Question:
    text: str
    evidence: list[str]
    category: int


@dataclass
class Conversation:
    name: str
    turns: list[Turn]
    questions: list[Question]
    sessions: dict[int, datetime | None] = field(default_factory=dict)


def parse_date(text: Any) -> datetime | None:
    """LoCoMo dates look like ``1:56 pm on 8 May, 2023``."""
    if not isinstance(text, str):
        return None
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def normalize_evidence(items: Iterable[Any]) -> list[str]:
    """Evidence ids as ``D<session>:<turn>``; the data has a few like ``D8:6; D9:17`` or ``D:11:26``."""
    out = []
    for item in items:
        for m in _EVIDENCE_RE.finditer(str(item)):
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return list(dict.fromkeys(out))


def load_conversation(path: Path) -> Conversation:
    data = json.loads(path.read_text(encoding="utf-8"))
    conv = data.get("conversation", data)
    turns: list[Turn] = []
    sessions: dict[int, datetime | None] = {}
    keys = [k for k in conv if re.fullmatch(r"session_\d+", k)]
    for key in sorted(keys, key=lambda k: int(k.split("_")[1])):
        n = int(key.split("_")[1])
        if not isinstance(conv[key], list):
            continue
        sessions[n] = parse_date(conv.get(f"{key}_date_time"))
        for i, t in enumerate(conv[key]):
            if not isinstance(t, dict) or not t.get("dia_id") or not isinstance(t.get("text"), str):
                continue
            turns.append(
                Turn(
                    str(t["dia_id"]),
                    str(t.get("speaker") or "?"),
                    t["text"],
                    t.get("blip_caption") if isinstance(t.get("blip_caption"), str) else None,
                    n,
                    i,
                    sessions[n],
                )
            )
    known = {t.dia_id for t in turns}
    questions = []
    for q in data.get("qa") or conv.get("qa") or []:
        evidence = [e for e in normalize_evidence(q.get("evidence") or []) if e in known]
        if evidence and isinstance(q.get("question"), str):
            questions.append(Question(q["question"], evidence, int(q.get("category") or 0)))
    return Conversation(path.stem, turns, questions, sessions)


def find_files(paths: Sequence[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = Path(p).expanduser()
        if path.is_dir():
            files += sorted(path.glob("*.json"))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"no LoCoMo data at {path}")
    if not files:
        raise FileNotFoundError(f"no *.json conversations in {', '.join(map(str, paths))}")
    return files


# --------------------------------------------------------------------------- import


def _iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def memory_items(conv: Conversation, granularity: str) -> tuple[list[dict[str, Any]], dict[str, set[str]]]:
    """Import lines for one conversation and memory id → the dia_ids it holds."""
    items: list[dict[str, Any]] = []
    holds: dict[str, set[str]] = {}
    slug = re.sub(r"[^A-Za-z0-9]+", "-", conv.name).strip("-") or "conv"
    if granularity == "turn":
        for t in conv.turns:
            mid = f"locomo-{slug}-{t.dia_id.replace(':', '-')}"
            created = _iso(t.date + timedelta(seconds=t.index) if t.date else None)
            item: dict[str, Any] = {
                "id": mid,
                "content": t.memory_text,
                "category": "moment",
                "sourceTurnId": t.dia_id,
                "episodeId": f"session-{t.session}",
                "source": "locomo",
            }
            if created:
                item["created"] = item["updated"] = created
            items.append(item)
            holds[mid] = {t.dia_id}
    elif granularity == "session":
        for n in sorted(conv.sessions):
            turns = [t for t in conv.turns if t.session == n]
            if not turns:
                continue
            mid = f"locomo-{slug}-session-{n}"
            item = {
                "id": mid,
                "content": "\n".join(t.memory_text for t in turns),
                "category": "moment",
                "sourceTurnId": f"D{n}",
                "source": "locomo",
            }
            if conv.sessions[n]:
                item["created"] = item["updated"] = _iso(conv.sessions[n])
            items.append(item)
            holds[mid] = {t.dia_id for t in turns}
    else:
        raise ValueError(f"unknown granularity {granularity!r}; valid options: turn, session")
    return items, holds


# --------------------------------------------------------------------------- methods


@dataclass(frozen=True)
class Method:
    """A named set of recall-setting overrides, evaluated on the same repositories."""

    name: str
    overrides: dict[str, Any] = field(default_factory=dict)
    note: str = ""


BASELINES = (
    Method("hybrid", {}, "remnic defaults"),
    Method("bm25-only", {"weight_vector": 0.0, "episode_expansion": False}, "remnic BM25 (all fields), no vectors"),
    Method("vector-only", {"weight_bm25": 0.0, "episode_expansion": False}, "remnic vectors, no BM25"),
    Method(
        "bm25-bare",
        {
            "weight_vector": 0.0,
            "episode_expansion": False,
            "neighbor_window": 0,
            "boost_when": 0.0,
            "boost_title": 0.0,
            "query_stopwords": False,
        },
        "plain BM25 over the bare turn text",
    ),
)

VARIANTS = (
    Method("fusion=rrf", {"fusion": "rrf", "weight_bm25": 1.0}, "reciprocal-rank fusion (k=60) instead of scores"),
    Method("rrf k=10", {"fusion": "rrf", "rrf_k": 10, "weight_bm25": 1.0}, ""),
    Method("weightBm25=1.0", {"weight_bm25": 1.0}, "equal weights"),
    Method("no episode expansion", {"episode_expansion": False}, ""),
    Method("expansion alpha=0.7", {"score_propagation_alpha": 0.7}, ""),
    Method("mmr lambda=0.8", {"mmr_lambda": 0.8}, ""),
    Method("no query stopwords", {"query_stopwords": False}, ""),
    Method("no date field", {"boost_when": 0.0}, ""),
    Method("contextWeight=0", {"context_weight": 0.0}, "no context-passage vector"),
    Method("candidates=100", {"candidates": 100}, ""),
    Method("neighborWindow=1", {"neighbor_window": 1}, "reindexed"),
    Method("neighborWindow=0", {"neighbor_window": 0, "context_weight": 0.0}, "reindexed: no neighbour context"),
    Method("maxChunks=1", {"max_chunks": 1}, "reindexed: one vector per memory"),
)

SESSION_VARIANTS = (
    Method("chunkTopK=1", {"chunk_top_k": 1}, "a long memory scores its best chunk only (the previous default)"),
    Method("chunkTopK=3", {"chunk_top_k": 3}, "mean of the best three chunks"),
)


@dataclass
class QResult:
    category: int
    found: dict[int, float]
    hit: dict[int, float]
    rr: float
    latency_ms: float
    conversation: str = ""


def _settings(root: Path, overrides: dict[str, Any]) -> Any:
    from remnic.config import settings_for

    return settings_for(root, recall={"budget_chars": 0, **overrides})


def evaluate(
    root: Path, conv: Conversation, holds: dict[str, set[str]], method: Method, ks: Sequence[int]
) -> list[QResult]:
    from remnic.service.memory import Memory

    kmax = max(ks)
    out = []
    with Memory.open(settings=_settings(root, method.overrides)) as memory:
        memory.recall("warm up", top_k=1)  # builds/catches up the index and loads the model outside the timings
        for q in conv.questions:
            t = time.perf_counter()
            result = memory.recall(q.text, top_k=kmax)
            ms = (time.perf_counter() - t) * 1000
            ranked = [holds.get(h.id, set()) for h in result.hits]
            evidence = set(q.evidence)
            found, hit = {}, {}
            for k in ks:
                got = set().union(*ranked[:k]) if ranked[:k] else set()
                found[k] = len(evidence & got) / len(evidence)
                hit[k] = 1.0 if evidence & got else 0.0
            rr = next((1.0 / i for i, ids in enumerate(ranked, 1) if ids & evidence), 0.0)
            out.append(QResult(q.category, found, hit, rr, ms, conv.name))
    return out


def summarize(results: Sequence[QResult], ks: Sequence[int]) -> dict[str, Any]:
    main = [r for r in results if r.category != 5]
    adv = [r for r in results if r.category == 5]

    def agg(rs: Sequence[QResult]) -> dict[str, Any]:
        if not rs:
            return {"n": 0}
        out: dict[str, Any] = {"n": len(rs)}
        for k in ks:
            out[f"recall@{k}"] = statistics.fmean(r.found[k] for r in rs)
            out[f"hit@{k}"] = statistics.fmean(r.hit[k] for r in rs)
        out["mrr"] = statistics.fmean(r.rr for r in rs)
        lat = [r.latency_ms for r in rs]
        out["p50_ms"], out["p95_ms"] = statistics.median(lat), percentile(lat, 95)
        return out

    cats = {c: agg([r for r in main if r.category == c]) for c in sorted({r.category for r in main})}
    return {"overall": agg(main), "categories": cats, "adversarial": agg(adv)}


def collect(
    convs: Sequence[Conversation],
    *,
    granularity: str,
    ks: Sequence[int],
    methods: Sequence[Method],
    log: Callable[[str], None] | None = None,
) -> tuple[dict[str, list[QResult]], dict[str, float]]:
    """Import every conversation once and evaluate every method on it: method → per-question results."""
    from remnic.service.memory import Memory

    per_method: dict[str, list[QResult]] = {m.name: [] for m in methods}
    timings: dict[str, float] = {}
    for conv in convs:
        items, holds = memory_items(conv, granularity)
        with tempfile.TemporaryDirectory(prefix=f"remnic-locomo-{conv.name}-") as tmp:
            root = Path(tmp) / "memory"
            t = time.perf_counter()
            with Memory.init(root, settings=_settings(root, methods[0].overrides)) as memory:
                memory.import_records(items, source="locomo")
            timings[conv.name] = time.perf_counter() - t
            for m in methods:
                t = time.perf_counter()
                per_method[m.name] += evaluate(root, conv, holds, m, ks)
                if log:
                    log(
                        f"  {conv.name} [{granularity}] {m.name}: {len(conv.questions)} questions "
                        f"in {time.perf_counter() - t:.1f}s"
                    )
    return per_method, timings


def load_all(data: Sequence[str | Path], limit_questions: int | None = None) -> list[Conversation]:
    convs = [load_conversation(p) for p in find_files(data)]
    if limit_questions is not None:
        for conv in convs:
            conv.questions = conv.questions[:limit_questions]
    return convs


def run_locomo(
    data: Sequence[str | Path],
    *,
    granularity: str = "turn",
    ks: Sequence[int] = DEFAULT_KS,
    methods: Sequence[Method] = BASELINES,
    limit_questions: int | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Import every conversation once, evaluate every method on it; metrics per method."""
    ks = sorted(set(ks))
    convs = load_all(data, limit_questions)
    per_method, timings = collect(convs, granularity=granularity, ks=ks, methods=methods, log=log)
    return {
        "granularity": granularity,
        "ks": ks,
        "conversations": [c.name for c in convs],
        "memories": sum(len(memory_items(c, granularity)[0]) for c in convs),
        "questions": sum(len(c.questions) for c in convs),
        "importSeconds": timings,
        "methods": {m.name: summarize(per_method[m.name], ks) for m in methods},
        "notes": {m.name: m.note for m in methods},
    }


# --------------------------------------------------------------------------- rendering


def _f(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def render(result: dict[str, Any], *, categories: bool = True) -> str:
    ks = result["ks"]
    methods = result["methods"]
    head = ["method", *[f"R@{k}" for k in ks], *[f"hit@{k}" for k in ks], "MRR", "p50 ms", "p95 ms"]
    rows = []
    for name, s in methods.items():
        o = s["overall"]
        if not o.get("n"):
            continue
        rows.append(
            [
                name,
                *[_f(o[f"recall@{k}"]) for k in ks],
                *[_f(o[f"hit@{k}"]) for k in ks],
                _f(o["mrr"]),
                f"{o['p50_ms']:.1f}",
                f"{o['p95_ms']:.1f}",
            ]
        )
    parts = [
        f"**{result['granularity']} granularity** — {len(result['conversations'])} conversations, "
        f"{result['memories']} memories, {result['questions']} questions "
        f"({next(iter(methods.values()))['overall'].get('n', 0)} in categories 1–4).",
        "",
        md_table(head, rows),
    ]
    if categories:
        cat_head = [
            "method",
            *[f"{CATEGORY_NAMES.get(c, c)} ({c}) R@{k}" for c in (1, 2, 3, 4) for k in (5, 10) if k in ks],
            "adversarial (5) R@5",
            "adversarial (5) R@10",
        ]
        cat_rows = []
        for name, s in methods.items():
            row = [name]
            for c in (1, 2, 3, 4):
                cs = s["categories"].get(c) or {}
                row += [_f(cs.get(f"recall@{k}", "-")) for k in (5, 10) if k in ks]
            adv = s["adversarial"]
            row += [_f(adv.get("recall@5", "-")), _f(adv.get("recall@10", "-"))]
            cat_rows.append(row)
        parts += ["", md_table(cat_head, cat_rows)]
    return "\n".join(parts)


def render_variants(result: dict[str, Any]) -> str:
    head = ["variant", "R@5", "R@10", "MRR", "note"]
    rows = []
    for name, s in result["methods"].items():
        o = s["overall"]
        rows.append([name, _f(o["recall@5"]), _f(o["recall@10"]), _f(o["mrr"]), result["notes"].get(name, "")])
    return md_table(head, rows)


def _unique(methods: Iterable[Method]) -> tuple[Method, ...]:
    seen: dict[str, Method] = {}
    for m in methods:
        seen.setdefault(m.name, m)
    return tuple(seen.values())


def _granularity(
    convs: Sequence[Conversation],
    granularity: str,
    baselines: Sequence[Method],
    extra: Sequence[Method],
    grid: Sequence[Method],
    ks: Sequence[int],
    log: Callable[[str], None] | None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(baselines, variants, cross-validation) on one import per conversation."""
    from .locomo_cv import cross_validate

    methods = _unique((*baselines, *extra, *grid[1:]))
    per, timings = collect(convs, granularity=granularity, ks=ks, methods=methods, log=log)
    base = {
        "granularity": granularity,
        "ks": list(ks),
        "conversations": [c.name for c in convs],
        "memories": sum(len(memory_items(c, granularity)[0]) for c in convs),
        "questions": sum(len(c.questions) for c in convs),
        "importSeconds": timings,
        "methods": {m.name: summarize(per[m.name], ks) for m in baselines},
        "notes": {m.name: m.note for m in baselines},
    }
    variants = {
        **base,
        "methods": {m.name: summarize(per[m.name], ks) for m in (baselines[0], *extra)},
        "notes": {m.name: m.note for m in (baselines[0], *extra)},
    }
    aliased = {grid[0].name: per[baselines[0].name], **{m.name: per[m.name] for m in grid[1:]}}
    cv = cross_validate(aliased, grid, ks)
    cv.update(
        granularity=granularity,
        ks=list(ks),
        conversations=base["conversations"],
        memories=base["memories"],
        questions=base["questions"],
        grid=[{"name": m.name, "overrides": m.overrides, "note": m.note} for m in grid],
    )
    return base, variants, cv


def run(quick: bool = False, data: Sequence[str | Path] | None = None) -> Report:
    """`make bench`: turn and session granularity with baselines, the cross-validated choice among the
    tuning grid, and the variant sweep (one import per conversation and granularity)."""
    from .locomo_cv import SESSION_GRID, TURN_GRID, render_cv

    data = list(data or [default_data_dir()])
    files = find_files(data)
    if quick:
        files = files[:2]

    def log(msg: str) -> None:
        print(msg, flush=True)

    t0 = time.perf_counter()
    convs = load_all(files)
    ks = list(DEFAULT_KS)
    turn, variants, turn_cv = _granularity(convs, "turn", BASELINES, () if quick else VARIANTS, TURN_GRID, ks, log)
    session, session_variants, session_cv = _granularity(
        convs, "session", BASELINES[:3], SESSION_VARIANTS, SESSION_GRID, ks, log
    )
    session = {**session, "methods": {**session["methods"], **session_variants["methods"]}}
    sections = [
        "Evidence recall@k over LoCoMo dia_ids (categories 1–4; category 5 apart), "
        "hit@k, MRR and in-process recall latency (warm), all through `Memory.recall` on fresh "
        "temporary repositories. Baselines come from the same run and repositories.",
        "",
        render(turn),
        "",
        render(session, categories=False),
        "",
        "**Cross-validation** (`remnic benchmark locomo --cv`): every setting of the tuning grid is "
        "evaluated on every conversation; for each conversation the setting best on the other four is "
        "scored on it. Held-out figures are pooled over the five folds.",
        "",
        render_cv(turn_cv),
        "",
        render_cv(session_cv),
    ]
    data_out: dict[str, Any] = {"turn": turn, "session": session, "turnCv": turn_cv, "sessionCv": session_cv}
    if not quick:
        variants = {
            **turn,
            "methods": {k: v for k, v in turn["methods"].items() if k not in ("bm25-only", "vector-only", "bm25-bare")},
        }
        sections += [
            "",
            "**Variants** (turn granularity; each changes one setting from the defaults):",
            "",
            render_variants(variants),
        ]
    sections += ["", f"Measured in {time.perf_counter() - t0:.0f} s; data: {', '.join(p.name for p in files)}."]
    return Report("locomo", "LoCoMo retrieval", "\n".join(sections), data_out)
