"""``remnic doctor``'s checks of the memories as parsed: ids held twice, supersession chains, values outside
remnic's vocabulary. Each reads the scan's records only (no git, no index) and returns one check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from remnic.memfile.model import MemoryRecord
from remnic.memfile.schema import STATUSES
from remnic.memfile.values import foreign_values, refused_tags_note, unknown_status
from remnic.observe.records import key_part

from .chain_links import hidden_by_flag, one_sided_links
from .chains import Links
from .pull_review import Fork, forks_among


def duplicate_ids_check(records: list[MemoryRecord]) -> dict[str, Any]:
    """Two files under one id (a hand copy, a memory moved to two folders by two clones): commands act on one
    of them only, so a forget leaves the other recalled as active."""
    paths: dict[str, list[str]] = {}
    for record in records:
        paths.setdefault(record.id, []).append(record.path)
    clashes = {i: sorted(p) for i, p in sorted(paths.items()) if len(p) > 1}
    if not clashes:
        return {"name": "duplicate-ids", "status": "ok", "detail": "every memory file has an id of its own"}
    detail = (
        f"{len(clashes)} id(s) held by more than one memory file; commands act on one file only. Keep one file "
        "per id: copy what the others add into it, delete the others, then `remnic sync run` (the text stays in "
        "git history)"
    )
    problems = [f"{i}: {', '.join(p)}" for i, p in clashes.items()]
    return {"name": "duplicate-ids", "status": "warn", "detail": detail, "problems": problems}


def stranded_check(records: list[MemoryRecord]) -> dict[str, Any]:
    """A value whose successor is rejected, forgotten or gone (a hand edit, a forget, a deleted file): it
    has no current memory. The name stays (scripts read it); rejected was the first case it found."""
    found = Links(records).stranded()
    hidden = hidden_by_flag(records)  # a flagged successor hides the value until it is decided
    if not found and not hidden:
        detail = "every superseded memory's successor is current, or superseded or merged in turn"
        return {"name": "superseded-by-rejected", "status": "ok", "detail": detail}
    detail = (
        f"{len(found) + len(hidden)} memory(ies) superseded by one that is rejected, forgotten, missing or "
        "quarantined: that value has no current memory; each line says how to make it current again"
    )
    problems = [s.describe() for s in found] + hidden
    return {"name": "superseded-by-rejected", "status": "warn", "detail": detail, "problems": problems}


def one_sided_check(records: list[MemoryRecord]) -> dict[str, Any]:
    """A supersession set on one side only (a hand edit, a revert of one of the two): recall and review
    read both sides, so one side alone leaves two current answers or a dismiss that revives nothing."""
    found = one_sided_links(records)
    if not found:
        return {"name": "supersession-links", "status": "ok", "detail": "every supersession is set on both sides"}
    forks = {(f.other.id, f.old.id): f for f in forks_among(records)}  # two successors: one command
    detail = (
        f"{len(found)} supersession link(s) set on one side only: set the other side "
        "(`supersedes` on the newer file, `status: superseded` and `supersededBy` on the older), or remove "
        "the one-sided key, then `remnic sync run`"
        + ("; a memory with two successors, both current: its line names the command" if forks else "")
    )
    problems = []
    for claimant, other, key, missing in found:
        if (fork := forks.get((claimant.id, other.id))) is not None:
            problems.append(_two_successors(fork))
            continue
        problems.append(f"{claimant.path} ({claimant.id}) has `{key}: {other.id}` but {other.path}: {missing}")
    return {"name": "supersession-links", "status": "warn", "detail": detail, "problems": problems}


def _two_successors(fork: Fork) -> str:
    """A fork as the files show it, whatever made it: two clones' merge (a pull says so itself), a hand
    edit, or a memory approved or updated after another replaced the same value."""
    old, kept, other = fork.old, fork.kept, fork.other
    return (
        f"{old.id} ({old.path}) has two current successors: it is superseded by {kept.id} ({kept.path}), and "
        f"{other.id} ({other.path}) names it in `supersedes` too, so its value has two answers. "
        f"`{fork.command}` leaves {kept.id} the one current memory; if {other.id}'s text is the right one, put "
        f"it in {kept.id} too (`remnic update {kept.id} --content TEXT`)"
    )


def foreign_check(records: list[MemoryRecord]) -> dict[str, Any]:
    """Values outside remnic's vocabulary and how they are read (never changed, never an error). A status naming
    none warns (it reads active, so a memory meant to leave recall is an answer), as does a tag writes refuse."""
    lines, unknown, bad = [], 0, 0
    for record in records:
        for key, (value, reading) in foreign_values(record.frontmatter, record.path).items():
            if key in ("tags", "tag") and (note := refused_tags_note(record.frontmatter)):
                bad += 1
                lines.append(f"{record.path}: {key} {value!r}: {note}")
            elif reading is None:  # a time key with no reading
                lines.append(
                    f"{record.path}: {key} {value!r} cannot be read as a time, so ranking, --as-of and "
                    "date filters see no time; write an ISO 8601 time such as 2026-04-02T10:00:00Z"
                )
            elif key == "status" and unknown_status(record.frontmatter):
                unknown += 1
                lines.append(
                    f"{record.path}: status {value!r} names no status, so it is read as {reading!r}"
                    f"{' (recalled)' if reading == 'active' else ''}; valid statuses: {', '.join(STATUSES)}"
                )
            else:
                lines.append(f"{record.path}: {key} {value!r} is read as {reading!r}")
    detail = f"{len(lines)} value(s) outside remnic's vocabulary, kept as written and read as listed"
    detail = detail if lines else "every known key holds a value in remnic's vocabulary"
    if unknown:
        detail += (
            f"; {unknown} status value(s) name no status (read as active unless archived): correct any meant otherwise"
        )
    detail += f"; {bad} file(s) hold a tag remnic's writes refuse: split or shorten it" if bad else ""
    return {"name": "foreign-values", "status": "warn" if unknown or bad else "ok", "detail": detail, "problems": lines}


def current_values_check(records: list[MemoryRecord]) -> dict[str, Any]:
    """Two or more active memories stating a value for one entity/attribute key (``entityRef`` and
    ``structuredAttributes``) in one namespace: recall answers with each, so a later value did not replace
    the earlier one (a chain forked by hand or by a sync's merge). One pass over the keyed memories."""
    holders: dict[tuple[str, str, str], list[tuple[MemoryRecord, str]]] = {}
    for record in records:
        entity, attributes = record.frontmatter.get("entityRef"), record.frontmatter.get("structuredAttributes")
        if record.status != "active" or not entity or not isinstance(attributes, Mapping):
            continue
        for attribute, value in attributes.items():
            key = (record.namespace, key_part(str(entity)), key_part(str(attribute)))
            holders.setdefault(key, []).append((record, str(value).strip().lower()))
    problems = []
    for (_, entity, attribute), found in sorted(holders.items()):
        if len(found) < 2:
            continue
        named = ", ".join(f"{r.id} ({r.path})" for r, _ in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        how = (
            "`remnic update NEWER --supersedes OLDER` for each older one leaves one current"
            if len({value for _, value in found}) > 1
            else "the same value more than once: `remnic update NEWER --supersedes OLDER` leaves one, keeping its history"
        )
        problems.append(f"{entity} {attribute}: {len(found)} current memories state it ({named}{more}); {how}")
    if not problems:
        detail = "each entity/attribute key has at most one current memory"
        return {"name": "current-values", "status": "ok", "detail": detail}
    detail = f"{len(problems)} entity/attribute key(s) with more than one current memory: recall answers with each"
    return {"name": "current-values", "status": "warn", "detail": detail, "problems": problems}
