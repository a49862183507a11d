"""A package's exports loaded on first use (PEP 562), so importing one light submodule does not load
its heavy siblings (the recall pipeline, tantivy, numpy) into every command's start-up; and a module
loaded on first use (:class:`LazyModule`), for a class whose methods call into many."""

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


class LazyModule:
    """A module imported on its first attribute use: ``_health = LazyModule("remnic.service.health")``
    keeps a heavy module a class calls into out of every command's start-up (annotate through a
    ``TYPE_CHECKING`` import of the module itself)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        module = self.__dict__.get("_module")
        if module is None:
            module = self.__dict__["_module"] = importlib.import_module(self.__dict__["_name"])
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"
