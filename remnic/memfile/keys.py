"""Near-miss keys: a caller's key one slip away from a key remnic acts on (``Status``, ``tag``, ``categroy``).

A foreign key is a feature (the file keeps it as it is), but a key that only *looks* foreign because of
a typo makes a write silently do nothing: ``update(id, {"Status": "forgotten"})`` would commit and leave
the memory active. So the keys a caller hands to a write (update changes, import lines, store's
``extra``) are held to this rule; files edited by hand or synced never are. Pure, like the rest of memfile.

What is *not* a slip: a key the memory's own file already holds (an adopted note's ``Status:``: the
update changes the note's key, as asked), a key next to the one it would be a slip of (``Status``
beside ``status``: both are meant), every key of an exported memory's line (its ``contentHash`` fits its
text: the keys are a file's, as written), and keys remnic reads (``tag``, ``alias``, the time keys).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from remnic.errors import FieldProblem

from .schema import KEY_ORDER
from .values import CREATED_KEYS, OTHER_TIME_KEYS, UPDATED_KEYS, hash_matches

TARGET_KEYS: tuple[str, ...] = (*KEY_ORDER, "content", "namespace", "importance")
"""The keys and write arguments a typo is measured against: the ones remnic acts on."""

OWN_KEYS = frozenset(
    {
        *CREATED_KEYS,
        *UPDATED_KEYS,
        *OTHER_TIME_KEYS,
        # read as tags and aliases (docs/remnic-compat.md, "Values"): one slip from ``tags``, but no slip
        "tag",
        "alias",
        # written by remnic's own operations (review, archive, recall, approval, observe, consolidate)
        "archivedAt",
        "reviewedAt",
        "reviewReasonCode",
        "lastRecalledAt",
        "structuredAttributes",
        "sourceTurnIds",
        "sessionKey",
        "sessionKeys",
        "last_reinforced_at",
        "derived_via",
        # the original Remnic's (docs/remnic-compat.md)
        "forgetReason",
        "sources",
        "derived_from",
        "lineage",
        "lastAccessed",
        "accessCount",
        "temporalBoostScore",
    }
)
"""Keys remnic (or the original Remnic) reads or writes itself, spelled so: never a near miss (another
spelling, ``Tag``, is one: remnic does not read it)."""

COMMON_KEYS = frozenset(
    {
        "aliases", "title", "subtitle", "date", "author", "authors", "url", "source_url",
        "sourceUrl", "type", "kind", "link", "context", "categories", "description", "summary",
        "draft", "slug", "lang", "layout", "permalink", "keywords", "topic", "topics", "project",
        "people", "related", "parent", "priority", "state", "version", "cssclasses", "publish",
        "uid", "rating", "due", "name", "createdBy", "updatedBy", "superseded", "archived",
    }
)  # fmt: skip
"""Keys other tools often put in a vault's frontmatter that happen to be one slip from a remnic key
(``link``/``links``, ``context``/``content``, ``sources``/``source`` …): kept as they are, in any letter
case or separator (``Context``, as Notion exports it): remnic reads none of them in any spelling."""


def _norm(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "").replace(" ", "")


_COMMON_NORMS = frozenset({_norm(k) for k in COMMON_KEYS} - {_norm(k) for k in TARGET_KEYS})


def _one_slip(a: str, b: str) -> bool:
    """One letter inserted, dropped, replaced, or two neighbours swapped (``categroy``). A tighter rule
    than a difflib ratio, which also matches real words (``related``/``created``, ``createdBy``)."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diffs) == 1 or (
            len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]
        )
    short, long = sorted((a, b), key=len)
    i = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def near_miss(key: str, targets: Iterable[str] = TARGET_KEYS) -> str | None:
    """The remnic key ``key`` is most likely a misspelling of (a case or separator variant, or one slip
    from it), or None for a key remnic knows or a foreign key kept as it is."""
    targets = tuple(targets)
    if not isinstance(key, str) or key in targets or key in OWN_KEYS:
        return None
    norm = _norm(key)
    if norm in _COMMON_NORMS:
        return None
    for target in targets:
        if _norm(target) == norm:
            return target
    for target in targets:
        if len(_norm(target)) >= 3 and _one_slip(norm, _norm(target)):
            return target
    return None


def near_miss_problems(
    keys: Iterable[str],
    *,
    line: int | None = None,
    prefix: str = "",
    hints: Mapping[str, str] | None = None,
    held: Collection[str] = (),
) -> list[FieldProblem]:
    """One problem per near-miss key, naming it and the key meant (``hints``: what to say about a
    suggested key that is an argument rather than a key, e.g. ``importance``). ``held``: the keys the
    memory's file already has (its own, whatever their spelling). A key given beside the key it is close
    to is no slip either: the caller set both."""
    given = list(keys)
    problems = []
    for key in given:
        meant = near_miss(key)
        if meant is None or key in held or meant in given:
            continue
        hint = (hints or {}).get(meant)
        problems.append(
            FieldProblem(
                f"{prefix}{key}",
                f"is not a key remnic knows but is close to its {meant!r} (letter case, a separator or "
                f"one letter off): did you mean {meant!r}?" + (f" ({hint})" if hint else "") + " Keys of your "
                "own that are not this close to one of remnic's are kept as they are",
                line=line,
            )
        )
    return problems


def line_key_problems(fields: Mapping[str, Any], line: int | None) -> list[FieldProblem]:
    """The near-miss keys of an import line, unless the line is an exported memory's: its ``contentHash``
    fits its ``content`` (only a memory file carries that), so its keys are that file's as written, as
    ``remnic export`` gave them (an adopted note's ``Tags:``), and the line imports again."""
    if isinstance(fields.get("content"), str) and hash_matches(fields.get("contentHash"), fields["content"]):
        return []
    return near_miss_problems(fields, line=line)


def change_key_problems(
    changes: Mapping[str, Any], held: Collection[str], hints: Mapping[str, str] | None = None
) -> list[FieldProblem]:
    """The near-miss keys an update sets (a removal, None, is never one), against the file's own keys
    ``held``: changing an adopted note's ``Status:`` is no slip, ``Status`` on a memory without one is."""
    return near_miss_problems([k for k, v in changes.items() if v is not None], hints=hints, held=held)
