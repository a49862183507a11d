"""What a replacement keeps from the memory it supersedes when its writer does not say.

``remnic store "We cut releases every Wednesday" --supersedes <decision>`` is a decision about
releases, as important as the one it replaces: a new memory that names one in ``supersedes`` takes
that memory's category, tags and importance unless its caller gave them. Only values the caller left
out (None) are taken, so an explicit ``category="fact"`` (the HTTP and MCP defaults) stays a fact.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from remnic.errors import RemnicError
from remnic.memfile.values import frontmatter_tags, invalid_tags

if TYPE_CHECKING:
    from .memory import Memory


def inherited(mem: Memory, extra: Mapping[str, Any] | None, ns: str, *given: Any) -> tuple[Any, Any, Any]:
    """(category, tags, importance): each the caller left None is the superseded memory's (a decision's
    replacement is a decision of its weight), else fact and the store's defaults. Read before the lock."""
    category, tags, importance = given
    target = (extra or {}).get("supersedes")
    try:
        old = mem.get(target) if isinstance(target, str) and target.strip() and None in given else None
    except RemnicError:  # refused, naming the field, under the lock
        old = None
    if old is None or old.namespace != ns:
        return category or "fact", tags, importance
    fm = old.frontmatter
    if tags is None and "tag" not in (extra or {}):  # a ``tag:`` the caller gave is its tags (new_frontmatter)
        # As a reader takes them (``tags``, else ``tag``; a string split); one a write would refuse stays
        # on the old memory only: the caller did not send it, so it must not refuse the store.
        tags = [t for t in frontmatter_tags(fm) if t not in invalid_tags(fm)]
    return category or old.category, tags, fm.get("importanceScore") if importance is None else importance
