"""Share and promote memories between spaces (and namespaces), and the audit of what arrived from whom.

A shared or promoted memory is a new memory (a new id) whose frontmatter points back at
its source: ``sourceMemoryId`` (shown in the X-ray's provenance), ``sourceSpace`` and
``sourceCommit``. It is written by one plan of the write transaction of the *target*
repository, validated by the same rules as ``store`` (secrets refused), so it is one
commit there whose trailers name the source too.

Only an active memory is copied: a quarantined, unvetted or rejected one would skip review (the
copy is written active), a forgotten, superseded or archived one would come back to life. An
entity page is refused too: it is compiled from the memories of its namespace, not one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.config.spaces import load_registry
from remnic.errors import LedgerError, UsageError, ValidationError
from remnic.memfile.model import MemoryRecord, body_for, content_hash, new_id, now_iso, serialize
from remnic.memfile.secrets import subject_excerpt
from remnic.memfile.validate import check_content, check_namespace, file_problems, new_frontmatter
from remnic.repo import remote as _remote
from remnic.repo.messages import TRAILER_PREFIX, parse_trailers
from remnic.repo.transaction import Plan, PlanOutcome, Transaction

from .writes import WriteResult, check_writable, result_of, summary

if TYPE_CHECKING:
    from .memory import Memory

SHARED = "shared"
"""The namespace ``promote`` writes to when it names none (the seed's default)."""
_CARRIED = ("entityRef", "validAt", "invalidAt", "sourceTurnId", "episodeId")


def copy_to_space(
    mem: Memory, memory_id: str, to_space: str, *, namespace: str | None, operation: str, source: str
) -> WriteResult:
    """``memory_id`` copied into the registered space ``to_space`` (see the module docstring)."""
    registry = load_registry()
    if to_space not in registry.spaces:
        raise ValidationError.single(
            "to", f"no space named {to_space!r} in {registry.path}", options=sorted(registry.spaces) or None
        )
    space = registry.spaces[to_space]
    if space.read_only:
        raise UsageError(f"space {to_space!r} is read-only; share and promote do not write to it")
    record = mem.get(memory_id)
    here = registry.named_for(mem.root)
    if here is not None and here.name == to_space:
        raise UsageError(f"{memory_id} is already in space {to_space!r}; name another space")
    provenance = {
        "sourceSpace": here.name if here else str(mem.root),
        "sourceMemoryId": record.id,
        "sourceCommit": mem.head(),
    }
    target = mem.space_handle(space)
    return write_copy(target, record, namespace or record.namespace, provenance, operation, source)


def promote_here(mem: Memory, memory_id: str, namespace: str, *, source: str) -> WriteResult:
    """``memory_id`` copied into ``namespace`` of this repository (the seed's ``memory_promote``)."""
    record = mem.get(memory_id)
    if record.namespace == namespace:
        raise UsageError(f"{memory_id} is already in namespace {namespace!r}; name another targetNamespace")
    provenance = {"sourceMemoryId": record.id, "sourceNamespace": record.namespace, "sourceCommit": mem.head()}
    return write_copy(mem, record, namespace, provenance, "promote", source)


def _check_copyable(record: MemoryRecord, operation: str) -> None:
    """Refuse what must not become a new active memory elsewhere (see the module docstring)."""
    from .entities import is_page  # not at import: the entity rules compile on import, every command paid

    done = f"{operation}d"
    if is_page(record):
        raise ValidationError.single(
            "memoryId",
            f"{record.id} is an entity page, not a memory; entity pages are not {done}: {operation} the memories "
            "it cites (each namespace builds its own pages from its memories)",
        )
    if record.status == "active":
        return
    fm = record.frontmatter
    if record.status in ("pending_review", "quarantined", "rejected"):
        fix = f"a person approves it first (`remnic review approve {record.id}`, or review-disposition status active)"
    elif record.status == "superseded" and fm.get("supersededBy"):
        fix = f"{operation} the memory that replaced it ({fm['supersededBy']}) instead"
    elif record.status == "archived" and fm.get("mergedInto"):
        fix = f"{operation} the memory it was merged into ({fm['mergedInto']}) instead"
    else:
        fix = f"make it active again first if it still holds (`remnic update {record.id} --status active`)"
    raise ValidationError.single(
        "memoryId", f"{record.id} is {record.status}; only an active memory can be {done}: {fix}"
    )


def write_copy(
    target: Memory,
    record: MemoryRecord,
    namespace: str,
    provenance: dict[str, Any],
    operation: str,
    source: str,
) -> WriteResult:
    """One plan in ``target``'s write transaction: the record's text and metadata as a new memory."""
    _check_copyable(record, operation)
    content = record.content
    extra = {k: record.frontmatter[k] for k in _CARRIED if k in record.frontmatter}
    extra.update({k: v for k, v in provenance.items() if v is not None})
    problems = check_content(content, target.settings.store) + check_namespace(namespace, None)
    meta, more = new_frontmatter(
        memory_id=new_id(),
        now=now_iso(),
        content=content,
        category=record.category,
        settings=target.settings.store,
        tags=record.tags,
        confidence=record.confidence,
        importance=record.importance,
        source=source,
        extra=extra,
    )
    problems += more
    if not problems:
        problems += file_problems(meta, content, record.category, namespace, target.settings.store)
    if problems:
        raise ValidationError(f"{summary(problems)}; nothing was {operation}d", problems=problems)

    def run(tx: Transaction) -> PlanOutcome:
        existing = target.find_duplicate(namespace, content_hash(content.strip()), tx)
        if existing is not None:
            return PlanOutcome(WriteResult(operation, (existing,), None, changed=False))
        check_writable(target)
        rel = target.files.allocate_path(record.category, content, namespace, taken=tx.exists)
        copy = MemoryRecord(rel, meta, body_for(content), namespace)
        tx.put(rel, serialize(meta, copy.body), copy)
        trailers = {"Source-Memory-Id": record.id}
        if provenance.get("sourceSpace"):
            trailers["Source-Space"] = str(provenance["sourceSpace"])
        subject = f"remnic {operation}: {subject_excerpt(content)}"
        return PlanOutcome(copy, subject, [copy.id], namespace, trailers)

    outcome, commit = target.committer.submit(Plan((operation, source, record.id), run))
    return result_of(operation, outcome, commit)


# --- audit ---

_FIELDS = ("%H", "%P", "%an", "%ae", "%aI", "%cn", "%s", "%(trailers:only,unfold)")
_SEP, _END = "\x1f", "\x1e"


def audit(mem: Memory, since: str | None, limit: int) -> list[dict[str, Any]]:
    """Commits reachable from HEAD and not from ``since``, newest first, each with its author and trailers."""
    if mem.head() is None:
        return []
    if since is not None and mem.ledger.commit_exists(since) is False:
        raise ValidationError.single("since", f"{since!r} is not a commit in {mem.root}")
    spec = [f"{since}..HEAD"] if since else ["HEAD"]
    local = _git(mem, "config", "user.email").strip()
    out = _git(mem, "log", f"-n{limit}", f"--format={_SEP.join(_FIELDS)}{_END}", *spec, "--")
    rows = []
    for chunk in out.split(_END):
        parts = chunk.strip("\n").split(_SEP)
        if len(parts) != len(_FIELDS):
            continue
        sha, parents, name, email, date, committer, subject, trailer_text = parts
        trailers = {
            k[len(TRAILER_PREFIX) :]: v for k, v in parse_trailers(trailer_text).items() if k.startswith(TRAILER_PREFIX)
        }
        rows.append(
            {
                "sha": sha,
                "date": date,
                "author": name,
                "email": email,
                "committer": committer,
                "subject": subject,
                "merge": len(parents.split()) > 1,
                "operation": (trailers.get("Operation") or ["git-commit"])[0],
                "memoryIds": trailers.get("Memory-Id", []),
                "sourceSpace": next(iter(trailers.get("Source-Space", [])), None),
                "sourceMemoryId": next(iter(trailers.get("Source-Memory-Id", [])), None),
                "trailers": trailers,
                "local": bool(local) and email == local,
            }
        )
    return rows


def _git(mem: Memory, *args: str) -> str:
    result = _remote.run_git(mem.root, args)
    if not result.ok and args[0] != "config":
        raise LedgerError(f"git {args[0]} failed: {result.err.strip()}")
    return result.out
