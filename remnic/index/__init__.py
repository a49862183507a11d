"""The search index: tantivy BM25 + exact-cosine vectors + a SQLite catalog, all rebuildable.

- :mod:`.search`: ``SearchIndex``, what the service talks to (apply, ensure_fresh, rebuild, health),
  with its writes and rebuilds in :mod:`.build`;
- :mod:`.embed`, :mod:`.embed_cache`: the local ONNX model and its content-hash cache;
- :mod:`.bm25`, :mod:`.vectors`, :mod:`.catalog`, :mod:`.manifest`: the stores and their manifest;
- :mod:`.rows`, :mod:`.text`: what is indexed for each memory.

Importing this package loads no model: the embedder is created on first use.
"""

from __future__ import annotations

from .manifest import SCHEMA_VERSION, Manifest
from .search import SearchIndex
from .state import FreshReport, IndexHealth

__all__ = ["SCHEMA_VERSION", "FreshReport", "IndexHealth", "Manifest", "SearchIndex"]
