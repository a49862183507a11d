"""The search index: tantivy BM25 + exact-cosine vectors + a SQLite catalog, all rebuildable.

- :mod:`.search`: ``SearchIndex``, what the service talks to (apply, ensure_fresh, rebuild, health),
  with its writes and rebuilds in :mod:`.build`;
- :mod:`.embed`, :mod:`.embed_cache`: the local ONNX model and its content-hash cache;
- :mod:`.bm25`, :mod:`.vectors`, :mod:`.catalog`, :mod:`.manifest`: the stores and their manifest;
- :mod:`.rows`, :mod:`.text`: what is indexed for each memory.

Importing this package loads no model: the embedder is created on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from remnic.lazy import lazy_exports

if TYPE_CHECKING:
    from .manifest import SCHEMA_VERSION, Manifest
    from .search import SearchIndex
    from .state import FreshReport, IndexHealth

# Loaded on first use: importing a light submodule (``remnic.index.dates``) must not load tantivy and numpy.
_WHERE = {
    "SCHEMA_VERSION": "manifest",
    "Manifest": "manifest",
    "SearchIndex": "search",
    "FreshReport": "state",
    "IndexHealth": "state",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())


__all__ = ["SCHEMA_VERSION", "FreshReport", "IndexHealth", "Manifest", "SearchIndex"]
