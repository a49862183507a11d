"""Near-miss keys: a caller's key one slip away from a key remnic acts on (``Status``, ``tag``, ``categroy``).

A foreign key is a feature (the file keeps it as it is), but a key that only *looks* foreign because of
a typo makes a write silently do nothing: ``update(id, {"Status": "forgotten"})`` would commit and leave
the memory active. So the keys a caller hands to a write (update changes, import lines, store's
``extra``) are held to this rule; files edited by hand or synced never are. Pure, like the rest of memfile.
"""

from __future__ import annotations

from collections.abc import Iterable

from remnic.errors import FieldProblem

from .schema import KEY_ORDER
from .values import CREATED_KEYS, OTHER_TIME_KEYS, UPDATED_KEYS

TARGET_KEYS: tuple[str, ...] = (*KEY_ORDER, "content", "namespace", "importance")
"""The keys and write arguments a typo is measured against: the ones remnic acts on."""

OWN_KEYS = frozenset(
    {
        *CREATED_KEYS,
        *UPDATED_KEYS,
        *OTHER_TIME_KEYS,
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
"""Keys remnic (or the original Remnic) reads or writes itself: never a near miss."""

COMMON_KEYS = frozenset(
    {
        "aliases", "alias", "title", "subtitle", "date", "author", "authors", "url", "source_url",
        "sourceUrl", "type", "kind", "link", "context", "categories", "description", "summary",
        "draft", "slug", "lang", "layout", "permalink", "keywords", "topic", "topics", "project",
        "people", "related", "parent", "priority", "state", "version", "cssclasses", "publish",
        "uid", "rating", "due", "name", "createdBy", "updatedBy", "superseded", "archived",
    }
)  # fmt: skip
"""Keys other tools often put in a vault's frontmatter that happen to be one slip from a remnic key
(``link``/``links``, ``context``/``content``, ``sources``/``source`` …): kept as they are."""


def _norm(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "").replace(" ", "")


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
    if not isinstance(key, str) or key in targets or key in OWN_KEYS or key in COMMON_KEYS:
        return None
    norm = _norm(key)
    for target in targets:
        if _norm(target) == norm:
            return target
    for target in targets:
        if len(_norm(target)) >= 3 and _one_slip(norm, _norm(target)):
            return target
    return None


def near_miss_problems(
    keys: Iterable[str], *, line: int | None = None, prefix: str = "", hints: dict[str, str] | None = None
) -> list[FieldProblem]:
    """One problem per near-miss key, naming it and the key meant (``hints``: what to say about a
    suggested key that is an argument rather than a key, e.g. ``importance``)."""
    problems = []
    for key in keys:
        meant = near_miss(key)
        if meant is None:
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
