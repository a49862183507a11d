"""Recall through the service: freshness, the pipeline, the file-scan fallback, audit and X-ray capture."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import MemoryFormatError, RemnicError, ValidationError, by_interrupt
from remnic.index.embed_spec import EmbeddingError
from remnic.index.state import IndexDirError
from remnic.memfile.model import parse_time
from remnic.memfile.validate import check_recall_args
from remnic.recall import RecallOptions, check_query, resolve_clock, run_recall
from remnic.recall.audit import AuditLog, options_key
from remnic.recall.citations import Cited, citation_block, sessions_of
from remnic.recall.fallback import scan_recall
from remnic.recall.filters import TAG_MATCHES
from remnic.recall.locks import xray_lock
from remnic.recall.snapshot import capture, record_audit

from . import arguments as _check
from .freshness import follow_edits

if TYPE_CHECKING:
    from remnic.recall.types import RecallResult
    from remnic.render.snapshot import RecallXraySnapshot

    from .memory import Memory

Progress = Callable[[int, int], None]
log = logging.getLogger("remnic.recall")


def recall(
    mem: Memory,
    query: str,
    *,
    top_k: int | None = None,
    namespace: str | None = None,
    category: str | None = None,
    budget_chars: int | None = None,
    include_inactive: bool = False,
    statuses: Sequence[str] | None = None,
    include_superseded: bool = False,
    progress: Progress | None = None,
    xray: bool = False,
    session_key: str | None = None,
    trace_id: str | None = None,
    clock: Any = None,
    source: str = "api",
    project: Any = None,
    spaces: bool = True,
    audit: bool = True,
    tags: Sequence[str] | None = None,
    tag_match: str = "any",
    as_of: str | float | None = None,
    readable: Callable[[str], bool] | None = None,
) -> RecallResult:
    """Hybrid recall (BM25 + local embeddings) over active memories, best first.

    Returns a :class:`remnic.recall.RecallResult`: iterate it for
    :class:`~remnic.recall.RecallHit` (id, path, score, content, frontmatter,
    namespace, category, status, served_by, safety, score terms); ``.stages`` is
    the filter ladder with considered/admitted counts. Superseded, forgotten,
    rejected … memories are left out unless ``include_inactive`` (or ``statuses``)
    asks for them; ``include_superseded`` adds superseded memories to the statuses asked for (default
    active), each ranked below its successor. A missing, stale or foreign index is caught up or rebuilt
    first; if the index cannot be used at all the recall scans the files
    (``recall.fallbackScan``). Every recall appends one entry to the audit ledger
    (``result.audit_id``). With ``xray=True`` (or ``recall.xrayCapture``) the
    result carries ``.xray``, a :class:`remnic.render.snapshot.RecallXraySnapshot`; capture
    never changes the hits and a failure inside it is logged, not raised.
    ``clock`` (epoch ms) or ``REMNIC_XRAY_CLOCK`` pins the recall's clock. ``project`` (from
    :meth:`Memory.project_context`) gives that project's memories ``recall.projectBoost``.
    With ``spaces`` (and ``spaces.recallReadOnly``) the read-only spaces of the user's registry are
    searched too and each hit names its space (:mod:`.spaces`); ``audit=False`` leaves no audit entry.
    ``tags`` keeps memories tagged with any (``tag_match="all"``: all) of them, ``as_of`` (an ISO time or
    epoch seconds) memories valid then: stages of the ladder, before the result limit and the budget.
    An empty recall in a ``namespace`` that holds no memory file says so in ``result.warnings``, naming
    the namespaces that do (those ``readable`` admits, when given).
    """
    check_query(_check.text(query, "query"))
    check_recall_args(top_k=top_k, namespace=namespace, category=category, budget_chars=budget_chars, statuses=statuses)
    statuses = admitted_statuses(statuses, include_superseded=include_superseded, include_inactive=include_inactive)
    at = _as_of(as_of)
    if tag_match not in TAG_MATCHES:
        raise ValidationError.single("tagMatch", f"unknown tag match {tag_match!r}", options=TAG_MATCHES)
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags or ()):
        raise ValidationError.single("tags", "must be a list of strings")
    if tag_match == "all" and not tags:
        # As the CLI's --tag-match without --tag: "all of no tags" would run the recall unfiltered.
        raise ValidationError.single("tagMatch", "all needs at least one tag (tags) to match")
    if any(not t.strip().lstrip("#").strip() for t in tags or ()):
        # Ignoring it would run the recall unfiltered: not what a caller asking for a tag meant.
        raise ValidationError.single("tags", "a tag must not be empty or blank (nor only '#')")
    try:
        clk = resolve_clock(clock)
    except ValueError as exc:
        raise ValidationError.single("clock", str(exc)) from None
    started = clk.perf_ms()
    options = RecallOptions(
        top_k=top_k,
        namespace=namespace,
        category=category,
        budget_chars=budget_chars,
        statuses=statuses,
        include_inactive=include_inactive,
        project=project,
        tags=tags,
        tag_match=tag_match,
        as_of=at,
    )
    mem.settle_index()
    try:
        result = _indexed_recall(mem, query, options, clk, progress)
    except EmbeddingError as exc:  # the model (or its tokenizer) failed, not the index: no rebuild cures it
        result = _without_model(mem, query, options, clk, exc)
    except IndexDirError as exc:  # no index can be built where it belongs: scan the files, no rebuild tried
        result = _scanned(mem, query, options, clk, exc, exc.message)
    except _RAISE_AS_IS:
        raise
    except Exception as exc:
        if by_interrupt(exc):  # Ctrl-C inside a native import: the user's stop, not a damaged index
            raise KeyboardInterrupt from exc
        reason = f"{type(exc).__name__}: {exc}".strip()[:200]
        from .health import unwritable

        read_only = unwritable(mem.root)  # no rebuild can be written there: none is promised, the files are scanned
        if read_only is None:
            log.warning("the index failed during recall (%s); rebuilding it", reason)
        try:
            if read_only is not None:
                result = _scanned(mem, query, options, clk, exc, f"{reason}; {read_only}")
            else:
                mem.index.rebuild(mem.files, mem.ledger, progress, reason=f"failed during recall: {reason}")
                result = _indexed_recall(mem, query, options, clk, progress)
        except EmbeddingError as again:  # the rebuild needs the model, which fails
            result = _without_model(mem, query, options, clk, again)
        except IndexDirError as again:
            result = _scanned(mem, query, options, clk, again, again.message)
        except RemnicError:
            raise
        except Exception as again:
            if by_interrupt(again):
                raise KeyboardInterrupt from again
            result = _scanned(mem, query, options, clk, again, f"{type(again).__name__}: {again}".strip()[:200])
    result.session_key, result.trace_id = session_key, trace_id
    if spaces:
        from .spaces import span_recall

        nested: dict[str, Any] = {"top_k": top_k, "namespace": namespace, "category": category, "clock": clk}
        nested.update(budget_chars=budget_chars, include_inactive=include_inactive, statuses=statuses)
        nested.update(tags=tags, tag_match=tag_match, as_of=at)
        result = span_recall(mem, result, query, nested)
    result.options_key = options_key(
        top_k=result.result_limit,
        budget_chars=result.budget_chars,
        category=category,
        tags=tags,
        tag_match=tag_match,
        as_of=at,
        statuses=statuses,
        include_inactive=include_inactive,
        project=getattr(project, "project_id", None),
        spaces=spaces,
    )
    _warn_namespace(mem, result, namespace, readable)
    if audit and mem.settings.recall.audit:
        result.audit_id = _audit_recall(mem, result, clk, clk.perf_ms() - started, source)
    if xray or mem.settings.recall.xray_capture:
        result.xray = _capture_xray(mem, result, clk, namespace)
    return result


def _without_model(mem: Memory, query: str, options: RecallOptions, clk: Any, exc: EmbeddingError) -> Any:
    """The recall when the embedding model fails (a file missing or unloadable, a tokenizer that is not the
    model's): the index is left as it is, and the files are scanned (``recall.fallbackScan``) or the error,
    which names the setting and the file, is raised."""
    if not mem.settings.recall.fallback_scan:
        raise exc
    reason = f"the embedding model failed, not the index (left as it is): {exc.message}"[:600]
    log.warning("%s; recalling from the files", reason)
    records = mem.files.scan().records
    result = scan_recall(records, query, options, mem.settings.recall, reason=reason, clock=clk)
    result.index["model"] = exc.message[:600]  # the footer says the model is at fault, the index fine
    return result


def _scanned(mem: Memory, query: str, options: RecallOptions, clk: Any, exc: BaseException, reason: str) -> Any:
    """The recall from the files when the index cannot be used (``recall.fallbackScan``; else ``exc`` is raised)."""
    if not mem.settings.recall.fallback_scan:
        raise exc
    log.warning("index unavailable (%s); recalling from the files", reason)
    records = mem.files.scan().records
    return scan_recall(records, query, options, mem.settings.recall, reason=reason, clock=clk)


_RAISE_AS_IS = (RemnicError, UnicodeError, OverflowError, MemoryError, RecursionError)
"""Errors no rebuild cures, so never taken for a damaged index: remnic's own (a bad argument, a
malformed file) and those a recall's own values cause (text that cannot be encoded, a number out
of range). Rebuilding the whole index for them would cost every such call a full rebuild."""

EARLIEST_S, LATEST_S = -62_135_596_800.0, 253_402_300_799.0
"""Epoch seconds of 0001-01-01 and 9999-12-31T23:59:59Z: the times a timestamp can spell."""


def _as_of(value: str | float | None) -> float | None:
    """Epoch seconds of ``asOf`` (an ISO 8601 time, or epoch seconds already); a ValidationError naming it otherwise."""
    if value is None:
        return None
    if isinstance(value, str):
        _check.text(value, "asOf")
    elif not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ValidationError.single("asOf", f"must be an ISO 8601 time or epoch seconds, got {type(value).__name__}")
    try:
        when = float(value) if isinstance(value, (int, float)) else parse_time(value)
    except OverflowError:  # an int too large for a float
        when = float("inf")
    if when is None or when != when:  # NaN: no time at all
        shown = str(value)[:64]
        raise ValidationError.single("asOf", f"{shown!r} is not an ISO 8601 time (e.g. 2026-04-25T18:32:11Z)")
    if not EARLIEST_S <= when <= LATEST_S:
        shown = str(value)[:64]
        raise ValidationError.single("asOf", f"{shown} is outside the years 1 to 9999 (epoch seconds)")
    return when


def warm_up(mem: Memory) -> None:
    """One whole recall through the pipeline, unaudited and thrown away: the model, the index
    readers and every stage's first-call costs are paid before a server's first request."""
    clk = resolve_clock(None)
    _indexed_recall(mem, "warm up", RecallOptions(), clk, None)


def _indexed_recall(mem: Memory, query: str, options: RecallOptions, clk: Any, progress: Progress | None) -> Any:
    fresh = mem.index.ensure_fresh(mem.files, mem.ledger, progress).to_dict()
    edits = follow_edits(mem)
    if edits is not None:
        note = edits.note()
        if edits.dirty and not edits.deferred:
            broken = unsearchable_edits(mem)
            if broken:
                note = _unsearchable_note(edits, broken)
                edits.problems = _with_broken(edits.problems, broken)
                fresh["problems"] = _with_broken(fresh.get("problems", []), broken)
        fresh["worktree"] = edits.to_dict()
        fresh["note"] = note
    return run_recall(mem.index, query, options, mem.settings.recall, fresh, clock=clk)


def _with_broken(problems: list[str], broken: list[tuple[str, str]]) -> list[str]:
    """``problems`` and the broken edits not named there yet: the first ten and a count (a vault with
    hundreds of broken notes must not fill a recall's answer)."""
    from remnic.index.rebuild import capped_problems

    shown = [p for p in problems if not p.startswith("... and ")]
    new = [
        why if why.startswith(path) else f"{path}: {why}"
        for path, why in broken
        if not any(f"{path}:" in p for p in shown)  # the scan named it already, in its own words
    ]
    if not new:
        return list(problems)
    return capped_problems(list(dict.fromkeys([*shown, *new])))


_MAX_CHECKED = 200
_checked_lock = threading.Lock()
_checked: dict[tuple[str, str, int, int], str | None] = {}
"""(root, path, mtime_ns, size) → why the file cannot be read as a memory (None: it can): a recall
with uncommitted edits re-reads only files that changed since the last one looked."""


def unsearchable_edits(mem: Memory) -> list[tuple[str, str]]:
    """(path, why) of the uncommitted memory files the recall could not search as they are on disk:
    malformed ones (bad YAML, wrong types), which no index holds in their edited form."""
    import json

    from remnic.index.build import WORKTREE_KEY

    with mem.index.lock:
        catalog = mem.index.view()[2]
        try:
            listed = json.loads(catalog.meta_value(WORKTREE_KEY) or "[]")
        except ValueError:
            return []
    out = []
    for path in listed[:_MAX_CHECKED] if isinstance(listed, list) else ():
        try:
            st = mem.files.abspath(str(path)).stat()
        except OSError:
            continue  # deleted: nothing on disk to search
        key = (str(mem.root), str(path), st.st_mtime_ns, st.st_size)
        with _checked_lock:
            why = _checked.get(key, "")
        if why == "":
            checked = mem.files.check(str(path))
            why = "; ".join(p.describe() for p in checked.problems) or None
            with _checked_lock:
                _checked[key] = why
                while len(_checked) > 4 * _MAX_CHECKED:
                    _checked.pop(next(iter(_checked)))
        if why is not None:
            out.append((str(path), why))
    return out


def _unsearchable_note(edits: Any, broken: list[tuple[str, str]]) -> str:
    shown = ", ".join(path for path, _ in broken[:3]) + (", …" if len(broken) > 3 else "")
    cannot = f"could not search {len(broken)} malformed file(s) as on disk ({shown}): fix them, then `remnic sync run`"
    if edits.indexed:
        return f"{edits.note()}; {cannot}"
    searched = max(0, edits.dirty - len(broken))
    return f"searched {searched} of {edits.dirty} uncommitted edit(s) as they are on disk; {cannot}"


def admitted_statuses(
    statuses: Sequence[str] | None, *, include_superseded: bool, include_inactive: bool
) -> list[str] | None:
    """The statuses a recall admits (None: active only, or every status with ``include_inactive``).

    ``include_superseded`` adds superseded to those asked for (default: active); ``include_inactive``
    already admits every status and contradicts an explicit list (a ValidationError naming both, so no
    surface silently runs a recall other than the one asked for)."""
    if include_inactive and statuses:
        raise ValidationError.single(
            "includeInactive",
            # Spelled alike on every surface: the field is renamed per caller, the rest of the message is not.
            "admits every status and statuses only those named; give one of them "
            "(to add superseded memories to those statuses, name superseded among them)",
        )
    out = list(statuses or ())
    if include_superseded and not include_inactive:
        out = [*(out or ["active"]), "superseded"]
    return list(dict.fromkeys(out)) or None


def recall_xray(
    mem: Memory,
    query: str,
    *,
    namespace: str | None = None,
    session_key: str | None = None,
    budget_chars: int | None = None,
    top_k: int | None = None,
    trace_id: str | None = None,
    clock: Any = None,
    source: str = "api",
    project: Any = None,
    **filters: Any,
) -> RecallXraySnapshot | None:
    """A fresh recall of ``query`` with its X-ray: a RecallXraySnapshot, or None if capture failed.

    Scoped exactly like :meth:`recall` (no namespace: every namespace), so the X-ray explains
    the recall a caller would get; ``filters`` are :meth:`recall`'s (``category``, ``statuses``,
    ``include_superseded``, ``include_inactive``, ``tags``, ``tag_match``, ``as_of``). Calls are serialised by one lock per
    memory root shared by every surface (CLI, HTTP, MCP), as the X-ray contract specifies.
    """
    with xray_lock(mem.root):
        result = mem.recall(
            query,
            top_k=top_k,
            namespace=namespace,
            budget_chars=budget_chars,
            xray=True,
            session_key=session_key,
            trace_id=trace_id,
            clock=clock,
            source=source,
            project=project,
            **filters,
        )
    snapshot: RecallXraySnapshot | None = result.xray
    return snapshot


def audit_show(mem: Memory, audit_id: str) -> dict[str, Any]:
    """One recall-audit entry by id (``audit-YYYYMMDD-<12 hex>``)."""
    return AuditLog(mem.settings.durable_dir).show(audit_id)


def audit_recent(mem: Memory, limit: int = 20) -> list[dict[str, Any]]:
    """The newest recall-audit entries, newest first."""
    return AuditLog(mem.settings.durable_dir).recent(limit)


def _audit_recall(mem: Memory, result: Any, clk: Any, total_ms: float, source: str) -> str | None:
    """The entry's ``latencyMs`` is the recall's own time, the one the CLI prints; the index catch-up or
    rebuild before it (``indexMs``) and the whole call (``totalMs``) are apart, so a recall that waited
    for the index does not look slow itself. A pinned clock's latencies are 0, for identical entries."""
    own = index_ms = 0.0
    if not clk.pinned:
        own = float(result.timings_ms.get("total", total_ms))
        if result.index.get("action") in ("catch-up", "rebuild"):
            index_ms = float(result.index.get("seconds") or 0.0) * 1000.0
    return record_audit(
        mem.settings.durable_dir,
        result,
        clock=clk,
        latency_ms=own,
        source=source,
        retention_days=mem.settings.recall.audit_retention_days,
        index_ms=index_ms,
        total_ms=total_ms,
    )


def _capture_xray(mem: Memory, result: Any, clk: Any, namespace: str | None) -> Any:
    return capture(result, clock=clk, namespace=namespace, read_text=mem.files.read_text_cached)


def citations(mem: Memory, hits: Iterable[Any]) -> str:
    """An ``<oai-mem-citation>`` block pointing at the files of these recall hits (Codex reads it)."""
    cited = []
    for hit in hits:
        try:
            text = mem.files.read_text_cached(hit.path)
        except (OSError, MemoryFormatError):
            continue
        session = hit.frontmatter.get("sessionKey")
        sessions = tuple(sessions_of(hit.frontmatter))
        cited.append(Cited(hit.path, text, hit.content, hit.category, str(session) if session else None, sessions))
    return citation_block(cited)


REVIEW_HEADING = (
    "Not reviewed (safety: requires-review): suggestions or doubtful memories, not confirmed facts; "
    "do not act on them as true:"
)
REVIEW_MARK = "[requires-review]"


def context_text(hits: Iterable[Any]) -> str:
    """What an agent is handed as context (recall's ``context``, the SessionStart hook): the safe
    hits' text, one paragraph each, best first; then, under a heading that says so, the hits that
    need review (a pending suggestion, a disputed, stale or low-confidence memory), each marked.
    Unreviewed text must never read as plain fact. Blocked hits are left out."""
    safe, review = [], []
    for hit in hits:
        text = str(getattr(hit, "content", "") or "").strip()
        safety = getattr(hit, "safety", "safe")
        if not text or safety == "blocked":
            continue
        if safety == "safe":
            safe.append(text)
        else:
            reasons = ", ".join(getattr(getattr(hit, "verdict", None), "reasons", ()) or ()) or safety
            review.append(f"{REVIEW_MARK} ({reasons}) {text}")
    if review:
        safe += [REVIEW_HEADING, *review]
    return "\n\n".join(safe)


def namespace_warning(
    mem: Memory, namespace: str | None, *, readable: Callable[[str], bool] | None = None
) -> str | None:
    """A warning when ``namespace`` holds no memory file (a typo looks like "nothing relevant"), naming
    the namespaces that do; None when it is unset or holds one. ``readable`` (a server's principal)
    keeps the list to the namespaces its caller may read: a principal held to one must not learn the others."""
    note = namespace_note(mem, namespace, readable=readable)
    return None if note is None else f"--namespace {namespace!r}: {note}"


def namespace_note(mem: Memory, namespace: str | None, *, readable: Callable[[str], bool] | None = None) -> str | None:
    """:func:`namespace_warning` without the flag's name: what every surface says about it."""
    from remnic.memfile.schema import DEFAULT_NAMESPACE, NAMESPACES_DIR

    if not namespace:
        return None
    default = {DEFAULT_NAMESPACE, mem.settings.namespaces.default}
    base = mem.root / NAMESPACES_DIR

    def holds(directory: Path) -> bool:
        return directory.is_dir() and any(p.is_file() for p in directory.rglob("*.md"))

    if namespace in default or holds(base / namespace):
        return None
    others = sorted(default | {d.name for d in (base.iterdir() if base.is_dir() else ()) if holds(d)})
    others = [name for name in others if readable is None or readable(name)]
    return f"no memory file is in that namespace (namespaces here: {', '.join(others) or 'none you may read'})"


def _warn_namespace(mem: Memory, result: Any, namespace: str | None, readable: Callable[[str], bool] | None) -> None:
    """An empty recall in a namespace that holds no memory file says so: in ``result.warnings`` and in
    the X-ray's ``namespace-scope`` reason, on every surface (the CLI also prints it on stderr)."""
    if not namespace or result.hits:
        return
    note = namespace_note(mem, namespace, readable=readable)
    if note is None:
        return
    result.warnings.append(f"namespace {namespace!r}: {note}")
    for stage in result.stages:
        if stage.name == "namespace-scope":
            stage.reason = f"{stage.reason}; {note}" if stage.reason else note
