"""The original Remnic's entity files, read in their own format.

``entities/<type>-<name>.md`` (also inside a namespace) with frontmatter of its own
(``created``, ``updated``, ``synthesis_updated_at``, ``synthesis_*`` counts, anything
else kept) and a body of ``# Name``, ``**Type:** person``, ``## Synthesis`` (or
``## Summary``), ``## Timeline``, ``## Connected to``, ``## Aliases``, … sections.
It has no ``id``: its id is its file name, as the original reads it. remnic indexes
such a file as an entity memory and never writes memory keys into it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .paths import TIER_DIRS
from .schema import NAMESPACES_DIR

ENTITY_DIR = "entities"
KNOWN_TYPES = frozenset({"company", "other", "person", "place", "project", "tool", "topic"})
_TYPE_LINE = re.compile(r"^\*\*Type:\*\*\s*(.+?)\s*$", re.MULTILINE)
_NAME_LINE = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SECTION = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)
_BULLET = re.compile(r"^\s*[-*+]\s+(.+?)\s*$")


def in_entity_folder(path: str) -> bool:
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        parts = parts[2:]
    if len(parts) >= 2 and parts[0] in TIER_DIRS:
        parts = parts[1:]
    return len(parts) >= 2 and parts[0] == ENTITY_DIR


def is_entity_file(path: str, frontmatter: Mapping[str, Any]) -> bool:
    """An entity file in the original's format: in an ``entities/`` folder, without an ``id`` (remnic's
    own entity memories carry one) or with the original's ``synthesis_*`` keys."""
    return in_entity_folder(path) and (
        "id" not in frontmatter or any(str(k).startswith("synthesis_") for k in frontmatter)
    )


def stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def entity_type(path: str, body: str) -> str:
    """``**Type:**`` in the body, else a known ``<type>-`` prefix of the file name, else ``entity``."""
    m = _TYPE_LINE.search(body)
    if m and m.group(1).strip():
        return m.group(1).strip().lower()
    prefix = stem(path).lower().split("-", 1)[0]
    return prefix if prefix in KNOWN_TYPES and "-" in stem(path) else "entity"


def entity_name(body: str) -> str | None:
    m = _NAME_LINE.search(body)
    return m.group(1).strip() if m else None


def section(body: str, *names: str) -> list[str]:
    """The lines of the first ``## <name>`` section (case-insensitive) among ``names``."""
    wanted = {n.lower() for n in names}
    heads = list(_SECTION.finditer(body))
    for i, head in enumerate(heads):
        if head.group(1).strip().lower() in wanted:
            end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
            return body[head.end() : end].splitlines()
    return []


def entity_aliases(body: str) -> list[str]:
    """The bullets of the ``## Aliases`` section."""
    out = []
    for line in section(body, "aliases"):
        m = _BULLET.match(line)
        if m:
            out.append(m.group(1))
    return out
