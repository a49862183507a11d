"""What a write answers (:class:`WriteResult`) and how its commit is described."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from remnic.errors import FieldProblem, NotFoundError
from remnic.memfile.model import DEFAULT_NAMESPACE, MemoryRecord
from remnic.repo.messages import trailers_for
from remnic.repo.transaction import CommitOutcome, PlanOutcome

UNGROUPED = "-"  # a key part that keeps a plan out of any group commit


@dataclass(frozen=True)
class Written:
    """One file a write staged: the memory it held before the write and the one its commit records."""

    path: str
    before: MemoryRecord | None
    """As the commit's parent has it (None: no such file, or no readable memory)."""
    after: MemoryRecord | None
    """As the commit records it (None: removed, or no readable memory)."""


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the memories it wrote (or found already there) and the commit that holds them."""

    operation: str
    records: tuple[MemoryRecord, ...]
    commit: str | None
    changed: bool = True
    """False when nothing was written: an exact duplicate of an active memory, an already forgotten one."""
    duplicates: tuple[str, ...] = ()
    """Import: for each item skipped as an exact duplicate, the id of the memory it duplicates; a dry-run
    store: the memory the real write would find as its exact duplicate (and so not write)."""
    warnings: tuple[str, ...] = ()
    """The write is done, but something needs the user's attention (git's index lagging behind HEAD)."""
    written: tuple[Written, ...] = field(default=(), compare=False, repr=False)
    """An update: every file it staged, its own included, as the transaction knew them (so what it changed
    besides its memory is known without reading the commit back from git)."""

    @property
    def record(self) -> MemoryRecord:
        """The (first) memory written or found; NotFoundError when the write named none (an empty import)."""
        if not self.records:
            raise NotFoundError(f"this {self.operation} wrote no memory (its records are empty)")
        return self.records[0]

    @property
    def id(self) -> str:
        return self.record.id

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "operation": self.operation,
            "changed": self.changed,
            "commit": self.commit,
            "ids": [r.id for r in self.records],
            "paths": [r.path for r in self.records],
        }
        if self.operation == "import":
            out.update(imported=len(self.records), duplicates=len(self.duplicates))
        if self.warnings:
            out["warnings"] = [{"field": "gitIndex", "message": w} for w in self.warnings]
        return out


def summary(problems: Sequence[FieldProblem]) -> str:
    """One line naming the first problem (and how many more), so str(error) alone is useful."""
    return problems[0].describe() + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else "")


def describe(key: tuple[str, ...], outcomes: Sequence[PlanOutcome]) -> tuple[str, dict[str, Any], str | None]:
    """The commit message for one plan, or for a group of plans of one kind."""
    operation, source = key[0], key[1]
    ids = [i for o in outcomes for i in o.ids]
    namespaces = ",".join(sorted({o.namespace for o in outcomes})) or DEFAULT_NAMESPACE
    if len(outcomes) == 1:
        only = outcomes[0]
        return (
            only.subject or f"remnic {operation}",
            trailers_for(operation, ids, namespaces, source, **only.trailers),
            None,
        )
    body = "\n".join(o.subject or "" for o in outcomes)
    return f"remnic {operation}: {len(outcomes)} writes", trailers_for(operation, ids, namespaces, source), body


def result_of(operation: str, outcome: PlanOutcome, commit: CommitOutcome) -> WriteResult:
    value = outcome.value
    if isinstance(value, WriteResult):
        return value
    records = tuple(value) if isinstance(value, list) else (value,)
    return WriteResult(
        operation, records, commit.sha, changed=outcome.subject is not None, warnings=tuple(commit.warnings)
    )
