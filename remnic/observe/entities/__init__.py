"""Entities: people, projects, tools and places the memories name, as pages in ``entities/``.

- :mod:`.rules`: which entities one memory is about (frontmatter and text, by rules);
- :mod:`.page`: the original Remnic's entity page format, parsed and rendered;
- :mod:`.build`: the pages a set of memories calls for, merged with the pages on disk.

Pure functions: the service (``remnic.service.entities``) reads the memories and writes
the pages through the write transaction.
"""

from __future__ import annotations

from .page import (
    ENTITY_TYPES,
    EntityPage,
    TimelineEntry,
    cited_ids,
    entity_id,
    name_key,
    parse_page,
    render_page,
    slugify,
)
from .rules import KNOWN_TOOLS, Mention, mentions

__all__ = [
    "ENTITY_TYPES",
    "KNOWN_TOOLS",
    "EntityPage",
    "Mention",
    "TimelineEntry",
    "cited_ids",
    "entity_id",
    "mentions",
    "name_key",
    "parse_page",
    "render_page",
    "slugify",
]
