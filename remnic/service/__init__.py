"""The service: the one API every surface (CLI, HTTP, MCP, hooks, Python) calls.

- :mod:`.memory`: the ``Memory`` facade;
- :mod:`.browse`: filtered, paged listing and the review queue;
- :mod:`.health`: ``status`` and ``doctor``.
"""

from __future__ import annotations

from .memory import ImportResult, Memory

__all__ = ["ImportResult", "Memory"]
