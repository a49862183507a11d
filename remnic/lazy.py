"""A package's exports loaded on first use (PEP 562), so importing one light submodule does not load
its heavy siblings (the recall pipeline, tantivy, numpy) into every command's start-up."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, where: Mapping[str, str], namespace: Mapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``: ``where`` maps each exported name to the submodule
    that defines it; ``namespace`` is the package's ``globals()`` (what ``dir()`` lists besides them)."""

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(f".{where[name]}", package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})  # help() and completion list the lazy names too

    return __getattr__, __dir__
