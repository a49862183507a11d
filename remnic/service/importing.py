"""An import batch as every surface runs it (``Memory.import_records``, ``remnic import``).

First the batch is checked as a dry run checks it (:func:`.portable.prepare_import`): a line restoring
a file that is here byte for byte, a line whose text an active memory of its namespace already has (or,
for a line with another status, a memory with that text, status and category), and a line repeating an
earlier one's text are exact duplicates, named with their line and reason and left out, so an import
run again writes nothing new. Then the rest is written in one commit (:func:`.writes.import_records`):
all or nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from remnic.errors import FieldProblem, MemoryFormatError, RemnicError, ValidationError
from remnic.memfile.model import content_hash, parse_file
from remnic.memfile.schema import STATUSES
from remnic.memfile.values import own_id
from remnic.repo.gitlog import changed_paths
from remnic.sync.base import mark_index_behind

from . import writes as _writes
from .include_config import include_above, newly_adopted, own_include
from .portable import ImportCheck, Restore, Skip, adopted_patterns, prepare_import
from .reverting import SUPERSEDED, AlsoChanged
from .writes import WriteResult

if TYPE_CHECKING:
    from .memory import Memory

log = logging.getLogger("remnic")
_OTHER_STATUSES = tuple(s for s in STATUSES if s != "superseded")


@dataclass(frozen=True)
class ImportResult(WriteResult):
    """What an import did: a :class:`WriteResult` (``records`` written or restored, ``duplicates``: the id
    each skipped line duplicates) with the lines skipped as exact duplicates, each naming its reason."""

    skipped: tuple[Skip, ...] = ()
    """The lines found to be exact duplicates before writing, in line order: ``file`` (this very file
    is here), ``text`` (a memory here has its text) or ``batch`` (an earlier line has it)."""
    phases: Mapping[str, float] = field(default_factory=dict)
    """Seconds spent checking the batch (``validate``) and writing it (``write``)."""
    store_include: tuple[str, ...] = ()
    """The ``store.include`` patterns the import added to remnic.config.json (in its commit): those of
    the adopted notes it restored (their lines' ``storeInclude``) that this repository lacked."""
    also_adopted: tuple[str, ...] = ()
    """The files already here that those patterns made memories too (``remnic sync run`` takes them in)."""
    also_changed: tuple[Superseded, ...] = ()
    """The memories already here that the import's commit changed: each one a line's ``supersedes`` named,
    marked superseded by that line's memory (as ``versions revert`` lists its ``alsoChanged``)."""
    notes: tuple[FieldProblem, ...] = ()
    """Warnings about what it wrote, each naming its line (see :func:`stranded_restores`)."""

    def to_dict(self) -> dict[str, Any]:
        out = {
            **super().to_dict(),
            "skipped": [s.to_dict() for s in self.skipped],
            "storeIncludeAdded": list(self.store_include),
            "alsoAdopted": list(self.also_adopted),
            "alsoChanged": [a.to_dict() for a in self.also_changed],
        }
        if self.notes:
            out["warnings"] = [*out.get("warnings", []), *(n.to_dict() for n in self.notes)]
        return out


@dataclass(frozen=True)
class Superseded(AlsoChanged):
    """A memory already here that an import line's ``supersedes`` marked superseded, and by which memory."""

    by: str = ""

    def to_dict(self) -> dict[str, str]:
        return {**super().to_dict(), "by": self.by}


def import_batch(
    mem: Memory,
    items: Sequence[Any],
    *,
    line_numbers: Sequence[int] | None,
    namespace: str | None,
    source: str,
    progress: Callable[[int, int], None] | None = None,
) -> ImportResult:
    """Check the whole batch, skip its exact duplicates, write the rest in one commit; nothing is
    written unless every line is valid (a ValidationError names each problem's line and field)."""
    started = time.perf_counter()
    checked = prepare_import(mem, items, line_numbers, namespace, source)
    if checked.problems:
        summary = _writes.summary(checked.problems)
        raise ValidationError(f"{summary}; nothing was imported", problems=checked.problems)
    validated = time.perf_counter()
    patterns = adopted_patterns(checked.plan.items) if checked.plan is not None else []
    restored = [p.path for p in checked.plan.items if isinstance(p, Restore)] if checked.plan is not None else []
    also = newly_adopted(mem, patterns, restored)  # before the write: after it, they are memories already
    if checked.items:
        try:
            written: WriteResult = _writes.import_records(
                mem,
                checked.items,
                source=source,
                namespace=namespace,
                line_numbers=checked.line_numbers,
                progress=progress,
                checked=checked.plan,
            )
        except ValidationError as exc:
            raise _on_its_line(exc, checked.items, checked.line_numbers) from None
        if written.commit and patterns:
            _take_in_include(mem, patterns)
        _after_write(mem, written)
    else:
        written = WriteResult("import", (), None, changed=False)
    phases = {"validate": validated - started, "write": time.perf_counter() - validated}
    return ImportResult(
        "import",
        written.records,
        written.commit,
        written.changed,
        (*_skipped_ids(mem, checked, written), *written.duplicates),
        written.warnings,
        skipped=tuple(checked.skipped),
        phases=phases,
        store_include=tuple(patterns) if written.commit else (),
        also_adopted=tuple(also) if written.commit and patterns else (),
        also_changed=_superseded_here(mem, written),
        notes=tuple(checked.warnings),
    )


def _on_its_line(exc: ValidationError, items: Sequence[Any], lines: Sequence[int]) -> ValidationError:
    """A ``supersedes`` refusal the write made (the memory named is superseded already), named by the line
    whose ``supersedes`` names that memory, as every other import problem is named by its line."""
    problems = list(exc.problems)
    for i, problem in enumerate(problems):
        if problem.line is not None or problem.field != "supersedes":
            continue
        for item, line in zip(items, lines, strict=True):
            target = item.get("supersedes") if isinstance(item, Mapping) else None
            if isinstance(target, str) and target and problem.message.startswith(f"{target} "):
                problems[i] = replace(problem, line=line)
                break
    if problems == list(exc.problems):
        return exc
    return ValidationError(f"{_writes.summary(problems)}; nothing was imported", problems=problems)


def _superseded_here(mem: Memory, written: WriteResult) -> tuple[Superseded, ...]:
    """The memories the import's commit marked superseded besides those it wrote: read from the commit,
    so a line naming the id of a line skipped as a duplicate (whose memory it then supersedes) counts."""
    if not written.commit:
        return ()
    by = {r.id for r in written.records if r.frontmatter.get("supersedes")}
    if not by:
        return ()
    mine = {r.path for r in written.records}
    paths = [p for c, p in changed_paths(mem.ledger.git, written.commit) if c != "D" and p not in mine]
    paths = [p for p in paths if mem.files.paths.is_memory(p)]
    texts = mem.ledger.blob_texts([(written.commit, p) for p in paths]) if paths else []
    found: list[Superseded] = []
    for path, text in zip(paths, texts, strict=True):
        try:
            meta = parse_file(text or "", path).frontmatter
        except (MemoryFormatError, RemnicError):
            continue
        successor, memory_id = meta.get("supersededBy"), own_id(meta)
        if memory_id and successor in by:
            found.append(Superseded(memory_id, path, SUPERSEDED, by=str(successor)))
    return tuple(found)


def _take_in_include(mem: Memory, patterns: Sequence[str]) -> None:
    """This handle's rule takes in the patterns the import committed, so the files it restored are
    memories to it as they are to every process that reads the config from now on (the index step).
    A config file above the repository's that sets store.include keeps its list for this handle (the
    check let the import through only when that list makes the files memories already)."""
    if include_above(mem) is not None:
        return
    include = list(dict.fromkeys([*own_include(mem), *patterns]))  # as committed: the repository's list
    mem.settings.store = replace(mem.settings.store, include=include)
    mem.files.paths = replace(mem.files.paths, include=tuple(include))


def _after_write(mem: Memory, written: WriteResult) -> None:
    """The scan memo gets the parse of every file the import wrote, read back from disk and keyed by
    its stat (so the first ``status`` or ``list`` reads nothing again, and a hand edit since is read
    afresh). No sync base is recorded here: the index may hold text a hand edit put on disk during the
    import, so the first ``sync run`` reads every file (a full pass). Failing to memoise only leaves
    that parse to the next command."""
    if not written.commit or not written.records:
        return
    try:
        mem.files.memoise(r.path for r in written.records)
    except (RemnicError, OSError) as exc:
        log.debug("the imported files were not memoised: %s", exc)


def catch_up_index(mem: Memory, progress: Callable[[int, int], None] | None = None) -> tuple[Any, str | None]:
    """Bring the index up to the import's commit: (the index's report, None), or when that fails (its
    lock held past ``store.lockTimeoutS`` by a rebuild, a broken index) (None, why). The commit is made
    either way, so a failure is the caller's warning, not an error; the next ``sync run`` is marked to
    catch the index up (as a sync marks itself when its own index step fails), and a recall does anyway."""
    try:
        return mem.refresh_index(progress), None
    except KeyboardInterrupt:  # the commit stands: only the index is behind, and the next sync says so
        _mark_index_behind(mem)
        raise
    except Exception as exc:  # noqa: BLE001 - any index failure: the memories are committed regardless
        why = exc.describe() if isinstance(exc, RemnicError) else f"{type(exc).__name__}: {exc}"
    _mark_index_behind(mem)
    return None, why


def committed_before_interrupt(mem: Memory, head_before: str | None) -> str | None:
    """What an interrupted import committed all the same: the subject and sha of its commit when HEAD
    moved to it since ``head_before`` (the commit landed, and the rest of the import was cut short), with
    the index marked behind for the next sync; None when nothing was committed."""
    try:
        head = mem.head()
        if head is None or head == head_before:
            return None
        subject = mem.ledger.git("log", "-1", "--format=%s", head).strip()
    except Exception as exc:  # noqa: BLE001 - any failure: the plain interruption is said instead
        log.debug("the interrupted import's commit was not read: %s", exc)
        return None
    if not subject.startswith("remnic import"):  # another process's commit, not this import's
        return None
    _mark_index_behind(mem)
    return f"{subject.removeprefix('remnic import: ')}, {head[:8]}"


def _mark_index_behind(mem: Memory) -> None:
    try:
        with mem.files.lock():
            mark_index_behind(mem.root)
    except (RemnicError, OSError) as exc:
        log.debug("the sync state was not marked index-behind: %s", exc)


def _skipped_ids(mem: Memory, checked: ImportCheck, written: WriteResult) -> Iterable[str]:
    """The id each line skipped before writing duplicates (one the write skipped itself is in its own
    ``duplicates``); a ``batch`` line duplicates the memory its earlier line was written as."""
    by_text = {(r.namespace, content_hash(r.content)): r.id for r in written.records}
    for skip in checked.skipped:
        if skip.kept:
            continue
        if skip.id is not None:
            yield skip.id
            continue
        key = checked.texts[skip.line]
        found = by_text.get(key)
        if found is None:  # the earlier line was itself found a duplicate while writing
            record = mem.find_duplicate(*key)
            found = record.id if record is not None else None
        if found is not None:
            yield found


def with_later_problems(
    mem: Memory,
    batch: Sequence[Any],
    lines: Sequence[int],
    problems: list[FieldProblem],
    namespace: str | None,
    source: str,
) -> list[FieldProblem]:
    """``problems`` and those of the other lines, which the checks that need every line's fields valid
    (``supersedes``, a superseded line's successor) never reached: the lines without a problem checked
    on as a batch of their own, so one run names every line's problems. A problem only the lines left
    out cause (a ``supersedes`` naming one of their ids) is not one."""
    from .portable import prepare_import

    bad = {p.line for p in problems}
    rest = [(item, line) for item, line in zip(batch, lines, strict=True) if line not in bad]
    if None in bad or not rest:  # a problem of the whole batch (its source): nothing to check on
        return problems
    left_out = [item for item, line in zip(batch, lines, strict=True) if line in bad and isinstance(item, Mapping)]
    ids = {i["id"] for i in left_out if isinstance(i.get("id"), str)}
    named = {i["supersedes"] for i in left_out if isinstance(i.get("supersedes"), str)}
    items = dict((line, item) for item, line in rest)
    later = prepare_import(mem, [i for i, _ in rest], [n for _, n in rest], namespace, source).problems
    later = [p for p in later if not _caused_by_left_out(p, items.get(p.line or 0), ids, named)]
    return sorted(problems + later, key=lambda p: p.line or 0)


def _caused_by_left_out(problem: FieldProblem, item: Any, ids: set[str], named: set[str]) -> bool:
    if not isinstance(item, Mapping):
        return False
    if problem.field in ("supersedes", "supersededBy"):
        return item.get(problem.field) in ids  # names a line left out: there, not missing
    return problem.field == "status" and item.get("id") in named  # a line left out replaces it


def successor_problems(mem: Memory, kept: Sequence[Any], lines: Sequence[int], skipped: set[int]) -> list[FieldProblem]:
    """A new memory imported as superseded must name the memory that replaces it (``supersededBy``: one
    here, or one this import writes), or be named in a written line's ``supersedes`` (the import links
    them), as ``remnic update --status superseded`` requires: otherwise it leaves recall with no successor."""
    written: set[str] = set()
    named: set[str] = set()
    for planned, line in zip(kept, lines, strict=True):
        if isinstance(planned, Restore):
            written.add(planned.record.id)
        elif line not in skipped:
            written.add(planned[0]["id"])
            said = planned[0].get("supersedes")
            named.update(said if isinstance(said, list) else [said] if isinstance(said, str) else [])
    problems: list[FieldProblem] = []
    here: Mapping[str, str] | None = None
    for planned, line in zip(kept, lines, strict=True):
        if isinstance(planned, Restore) or line in skipped or planned[0].get("status") != "superseded":
            continue
        meta = planned[0]
        successor = meta.get("supersededBy")
        if not successor:
            if meta["id"] not in named:
                why = (
                    "superseded needs the memory that replaces this one: give supersededBy (the id of a memory "
                    "here or in this import), or give this line an id and name it in the replacing line's "
                    "supersedes, or use another status"
                )
                problems.append(FieldProblem("status", why, line=line, options=_OTHER_STATUSES))
            continue
        if not isinstance(successor, str):
            why = f"must be one memory id (the memory that replaces this one), got {successor!r}"
            problems.append(FieldProblem("supersededBy", why, line=line))
            continue
        here = mem.files.ids() if here is None else here
        if successor == meta["id"]:
            problems.append(FieldProblem("supersededBy", f"{successor} cannot replace itself", line=line))
        elif successor not in written and successor not in here:
            why = (
                f"no memory with id {successor!r} (not in this repository, not among the lines this import "
                "writes): name the memory that replaces this one, or use another status"
            )
            problems.append(FieldProblem("supersededBy", why, line=line))
    return problems


def stranded_restores(mem: Memory, kept: Sequence[Any], lines: Sequence[int], skipped: set[int]) -> list[FieldProblem]:
    """A restored file (``file`` kept) is restored as it is, superseded or not; but one marked superseded
    whose successor (``supersededBy``) is in neither the repository nor the import leaves its value with no
    current memory (``remnic doctor`` flags it): said as a warning, naming the line, rather than refused, so
    a partial export (one namespace, a few lines) still restores what it holds."""
    superseded = [
        (p, line)
        for p, line in zip(kept, lines, strict=True)
        if isinstance(p, Restore) and p.record.status == "superseded" and line not in skipped
    ]
    if not superseded:
        return []
    written = {
        p.record.id if isinstance(p, Restore) else p[0]["id"]
        for p, line in zip(kept, lines, strict=True)
        if line not in skipped
    }
    here = mem.files.ids()
    warnings = []
    for restore, line in superseded:
        successor = restore.record.frontmatter.get("supersededBy")
        if isinstance(successor, str) and successor and (successor in written or successor in here):
            continue
        said = f"names {successor!r} as its successor, which is" if successor else "names no successor, and"
        why = (
            f"{restore.path} is restored as superseded, but {said} in neither this repository nor this import: "
            "its value has no current memory. Import the successor's line too, or make this one current "
            f"again: `remnic update {restore.record.id} --status active`"
        )
        warnings.append(FieldProblem("supersededBy", why, line=line))
    return warnings
