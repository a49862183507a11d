"""Three-way merge of one memory file: frontmatter key by key, the body line by line (pure).

What git's merge driver (``remnic merge-file``) and ``remnic space pull`` call when two
copies of a memory changed since their common version. The frontmatter is merged key
by key, each key by its own rule, only when *both* sides changed it differently (a key
changed on one side only takes that side's value; removed on one side and changed on
the other keeps the change):

- lists (``tags``, ``aliases``, ``links``, ``supersedes`` …): a three-way set merge —
  what either side added is kept, what either side removed goes;
- ``status``: the first in :data:`STATUS_PRECEDENCE` (forgotten > superseded > rejected >
  quarantined > archived > pending_review > active); a status remnic does not know
  loses to every known one; a memory in review approved on one side and dismissed on the
  other goes back to review (:data:`DISPUTED`);
- timestamps (``updated``, ``lastRecalledAt``, ``reviewedAt`` … any two values that read as
  times): the later one;
- numbers (``reinforcement_count``, ``accessCount``, ``confidence`` …): the larger one;
- ``contentHash``, ``confidenceTier``, ``importanceLevel``: recomputed from the result;
- anything else (``supersededBy``, ``forgottenReason``, keys remnic does not know): the
  value of the side whose ``updated`` is later (this side on a tie). No key is dropped.

The body goes through a line merge the caller provides (git's own, ``git merge-file``).
When the bodies truly conflict no conflict markers are written: this side's file keeps
its text, the other side's text becomes a second memory next to it (a new id), the two
name each other in ``conflictsWith`` and both wait in the review queue
(``status: pending_review``, unless the merge gives a status ranked before it). Two
files added at the same path on both sides (no common version) are one memory when
their texts hash the same (under two ids, the other side's is kept as superseded by this
side's, which names it in ``supersedes``, so both ids still resolve), else two. A side whose
frontmatter does not parse is merged line by line when that is clean and parses, else both
files are kept exactly as they are (``MergeOutcome.malformed`` says which side is malformed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from remnic.errors import MemoryFormatError, ValidationError

from .model import MemoryRecord, derived_fields, now_iso, parse_file, parse_time, serialize, split_file
from .normalize import render
from .validate import Checked
from .values import content_hash, own_id

STATUS_PRECEDENCE: tuple[str, ...] = (
    "forgotten",
    "superseded",
    "rejected",
    "quarantined",
    "archived",
    "pending_review",
    "active",
)
"""When both sides changed ``status``, the one listed first wins: a memory forgotten or superseded on
one machine stays so even if another machine edited it meanwhile (the edit is kept in its body and
in history)."""
REVIEW_STATUS = "pending_review"
DISPUTED = ("active", "rejected")
"""A memory in review approved (active) on one side and dismissed (rejected) on the other merges back to
``pending_review``, not to the precedence's ``rejected``: a conflict pair decided oppositely on two machines
would otherwise end with both memories rejected and nothing left to recall."""
CONFLICT_KEY = "conflictsWith"
DERIVED_KEYS = ("contentHash", "confidenceTier", "importanceLevel")
TIME_KEYS = ("updated", "lastRecalledAt", "reviewedAt", "supersededAt", "forgottenAt", "validAt", "lastAccessed")

LineMerge = Callable[[str, str, str], tuple[str, bool]]
"""(base, ours, theirs) → (merged text, clean); git merge-file's line merge."""
_ABSENT = object()


@dataclass(frozen=True)
class MergeOutcome:
    """The merged file text for this side's path, and the other side's version kept as a second
    memory (``copy_path``/``copy_text``, else None): for review when the bodies conflicted
    (``conflict``), or superseded by this side's when both stored the same text under two ids."""

    text: str
    memory_id: str | None
    conflict: bool = False
    copy_path: str | None = None
    copy_text: str | None = None
    copy_id: str | None = None
    same_content: bool = False
    """Added on both sides with the same text: resolved as one memory by its content hash."""
    malformed: tuple[str, ...] = ()
    """``ours``/``theirs``: the side(s) whose frontmatter does not parse; both kept exactly as they are (the
    copy is the other side's file byte for byte, its id included), nothing linked."""


def status_rank(value: Any) -> int:
    return (
        STATUS_PRECEDENCE.index(value)
        if isinstance(value, str) and value in STATUS_PRECEDENCE
        else len(STATUS_PRECEDENCE)
    )


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def merge_list(base: Any, ours: list[Any], theirs: list[Any]) -> list[Any]:
    """Three-way set merge, in this side's order then the other's additions."""
    base_keys = {_freeze(v) for v in base} if isinstance(base, list) else set()
    ours_keys = {_freeze(v) for v in ours}
    theirs_keys = {_freeze(v) for v in theirs}
    out: list[Any] = []
    seen: set[Any] = set()
    for value in [*ours, *theirs]:
        key = _freeze(value)
        if key in seen:
            continue
        in_both = key in ours_keys and key in theirs_keys
        added = key not in base_keys
        if in_both or added:
            out.append(value)
            seen.add(key)
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _later_side(ours_meta: Mapping[str, Any], theirs_meta: Mapping[str, Any]) -> str:
    ours_t, theirs_t = parse_time(ours_meta.get("updated")), parse_time(theirs_meta.get("updated"))
    if ours_t is not None and theirs_t is not None and theirs_t > ours_t:
        return "theirs"
    return "ours"


def merge_value(key: str, base: Any, ours: Any, theirs: Any, later: str) -> Any:
    """One key changed differently on both sides (``_ABSENT``: the key is not there)."""
    if ours is _ABSENT:
        return theirs
    if theirs is _ABSENT:
        return ours
    if key == "status":
        return ours if status_rank(ours) <= status_rank(theirs) else theirs
    if isinstance(ours, list) and isinstance(theirs, list):
        return merge_list(None if base is _ABSENT else base, ours, theirs)
    if _is_number(ours) and _is_number(theirs):
        return max(ours, theirs)
    if key in TIME_KEYS or (isinstance(ours, str) and isinstance(theirs, str)):
        ours_t, theirs_t = parse_time(ours), parse_time(theirs)
        if ours_t is not None and theirs_t is not None and (key in TIME_KEYS or _looks_like_time(ours, theirs)):
            return theirs if theirs_t > ours_t else ours
    return theirs if later == "theirs" else ours


def _looks_like_time(*values: str) -> bool:
    return all(len(v) >= 10 and v[:4].isdigit() and v[4] == "-" for v in values)


def merge_frontmatter(
    base: Mapping[str, Any] | None, ours: Mapping[str, Any], theirs: Mapping[str, Any]
) -> dict[str, Any]:
    """Key-by-key three-way merge (see the module docstring); derived keys are left to the caller."""
    base = base or {}
    later = _later_side(ours, theirs)
    out: dict[str, Any] = {}
    for key in [*ours, *(k for k in theirs if k not in ours), *(k for k in base if k not in ours and k not in theirs)]:
        b, o, t = base.get(key, _ABSENT), ours.get(key, _ABSENT), theirs.get(key, _ABSENT)
        if o == t:
            value = o
        elif o == b:
            value = t
        elif t == b:
            value = o
        elif key == "status" and b == REVIEW_STATUS and {o, t} == set(DISPUTED):
            value = REVIEW_STATUS  # approved on one machine, dismissed on another: the reviewers decide again
        else:
            value = merge_value(key, b, o, t, later)
        if value is not _ABSENT:
            out[key] = value
    return out


def copy_id_for(memory_id: str, body: str) -> str:
    """A stable id for the other side's copy: the same conflict resolved on two machines gives one file."""
    digest = hashlib.sha256(f"{memory_id}\0{body}".encode()).hexdigest()
    return f"mem_{digest[:20]}"


def copy_path_for(path: str, copy_id: str) -> str:
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    stem, ext = (stem, ext) if dot else (name, "md")
    return f"{folder + '/' if folder else ''}{stem}--conflict-{copy_id[-8:]}.{ext}"


def _parse(text: str | None, path: str) -> MemoryRecord | None:
    if text is None:
        return None
    try:
        return parse_file(text, path)
    except MemoryFormatError:
        return None


def _with_body(side_text: str, side: MemoryRecord, meta: Mapping[str, Any], body: str) -> str:
    """``side``'s file with ``meta`` as its frontmatter (only changed lines rewritten) and ``body``."""
    if dict(meta) == side.frontmatter:
        return side_text[: len(side_text) - len(side.body)] + body
    if not all(k in meta for k in side.frontmatter):
        return serialize(meta, body)
    changes = {k: v for k, v in meta.items() if side.frontmatter.get(k, _ABSENT) != v}
    fm_text, _, _ = split_file(side_text)
    checked = Checked(side.path, record=side, text=side_text, has_frontmatter=fm_text is not None)
    try:
        text, _meta = render(checked, changes)
    except ValidationError:
        return serialize(meta, body)
    return text[: len(text) - len(side.body)] + body


def _derived(meta: dict[str, Any], body: str) -> dict[str, Any]:
    fresh = derived_fields(meta, body)
    for key in DERIVED_KEYS:
        if key in meta and key in fresh:
            meta[key] = fresh[key]
    return meta


def _review(meta: dict[str, Any], other_id: str, now: str) -> dict[str, Any]:
    out = dict(meta)
    if status_rank(out.get("status", "active")) > status_rank(REVIEW_STATUS):
        out["status"] = REVIEW_STATUS
    linked = out.get(CONFLICT_KEY)
    linked = list(linked) if isinstance(linked, list) else ([linked] if linked else [])
    if other_id not in linked:
        linked.append(other_id)
    out[CONFLICT_KEY] = linked
    out["updated"] = now  # the resolution is a change of its own: recall and review see it as new
    return out


def merge_memory(
    base_text: str | None,
    ours_text: str,
    theirs_text: str,
    path: str,
    line_merge: LineMerge,
    *,
    now: str | None = None,
) -> MergeOutcome:
    """Merge three versions of the memory file at ``path`` (``base_text`` None: added on both sides)."""
    now = now or now_iso()
    base, ours, theirs = _parse(base_text, path), _parse(ours_text, path), _parse(theirs_text, path)
    if ours is None or theirs is None:
        return _unparsed(base_text or "", ours_text, theirs_text, path, line_merge, ours)
    if base is None and base_text is not None and base_text.strip():
        base_text = None  # a malformed common version: treat as added on both sides
    if base is None:
        same = content_hash(ours.content) == content_hash(theirs.content)
        if same and own_id(ours.frontmatter) == own_id(theirs.frontmatter):
            meta = _derived(merge_frontmatter(None, ours.frontmatter, theirs.frontmatter), ours.body)
            return MergeOutcome(_with_body(ours_text, ours, meta, ours.body), ours.id, same_content=True)
        if same and own_id(theirs.frontmatter):
            return _duplicate(ours_text, ours, theirs_text, theirs, path)
    meta = merge_frontmatter(base.frontmatter if base else None, ours.frontmatter, theirs.frontmatter)
    distinct_ids = base is None and own_id(ours.frontmatter) != own_id(theirs.frontmatter)
    body, clean = _merge_body(base.body if base else None, ours.body, theirs.body, line_merge)
    if clean and not distinct_ids:
        meta = _derived(meta, body)
        return MergeOutcome(_with_body(ours_text, ours, meta, body), ours.id)
    return _keep_both(ours_text, ours, theirs_text, theirs, meta, path, now, distinct_ids)


def _merge_body(base: str | None, ours: str, theirs: str, line_merge: LineMerge) -> tuple[str, bool]:
    if ours == theirs:
        return ours, True
    if base is not None and base == ours:
        return theirs, True
    if base is not None and base == theirs:
        return ours, True
    if base is None:
        return ours, False
    return line_merge(base, ours, theirs)


def _keep_both(
    ours_text: str,
    ours: MemoryRecord,
    theirs_text: str,
    theirs: MemoryRecord,
    meta: dict[str, Any],
    path: str,
    now: str,
    distinct_ids: bool,
) -> MergeOutcome:
    """A true body conflict: this side keeps the path, the other side's text becomes a linked memory."""
    copy_id = own_id(theirs.frontmatter) if distinct_ids and own_id(theirs.frontmatter) else None
    copy_id = copy_id or copy_id_for(ours.id, theirs.body)
    mine = _derived(_review(meta if not distinct_ids else dict(ours.frontmatter), copy_id, now), ours.body)
    if not ours.has_id:
        mine["id"] = ours.id
    other_meta = dict(meta if not distinct_ids else theirs.frontmatter)
    other_meta["id"] = copy_id
    other_meta.pop(CONFLICT_KEY, None)
    other = _derived(_review(other_meta, ours.id, now), theirs.body)
    copy_path = copy_path_for(path, copy_id)
    return MergeOutcome(
        _with_body(ours_text, ours, mine, ours.body),
        ours.id,
        conflict=True,
        copy_path=copy_path,
        copy_text=_with_body(theirs_text, theirs, other, theirs.body),
        copy_id=copy_id,
    )


def _duplicate(ours_text: str, ours: MemoryRecord, theirs_text: str, theirs: MemoryRecord, path: str) -> MergeOutcome:
    """The same text stored on both sides under two ids (two agents observed one fact): this side's
    memory stays; the other keeps its id (other memories may name it) as superseded by this one."""
    other_id = own_id(theirs.frontmatter)
    assert other_id is not None
    other = dict(theirs.frontmatter)
    other.update(status="superseded", supersededBy=ours.id)
    mine = dict(ours.frontmatter)  # the link on both sides, as every supersession has it
    named = mine.get("supersedes")
    named = list(named) if isinstance(named, list) else ([named] if isinstance(named, str) and named else [])
    mine["supersedes"] = named if other_id in named else [*named, other_id]
    return MergeOutcome(
        _with_body(ours_text, ours, mine, ours.body),
        ours.id,
        copy_path=copy_path_for(path, other_id),
        copy_text=_with_body(theirs_text, theirs, other, theirs.body),
        copy_id=other_id,
        same_content=True,
    )


def _unparsed(
    base_text: str, ours_text: str, theirs_text: str, path: str, line_merge: LineMerge, ours: MemoryRecord | None
) -> MergeOutcome:
    """A side whose frontmatter does not parse: git's line merge if it is clean and gives a file that
    parses, else both kept as they are (this side at the path, the other beside it)."""
    merged, clean = line_merge(base_text, ours_text, theirs_text)
    if clean and _parse(merged, path) is not None:
        return MergeOutcome(merged, ours.id if ours else None)
    copy_id = copy_id_for(ours.id if ours else path, theirs_text)
    bad = ("ours",) if ours is None else ()
    return MergeOutcome(
        ours_text,
        ours.id if ours else None,
        conflict=True,
        copy_path=copy_path_for(path, copy_id),
        copy_text=theirs_text,
        copy_id=copy_id,
        malformed=bad + (("theirs",) if _parse(theirs_text, path) is None else ()),
    )
