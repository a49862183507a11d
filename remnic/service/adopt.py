"""Adopting a folder that already holds notes: which patterns make notes memories, and what is left alone."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from remnic.config import REPO_CONFIG_FILE
from remnic.errors import UsageError
from remnic.repo.files import MemoryStore

from .health import skipped_files


def with_include(current: bytes | None, patterns: Sequence[str], root: Path) -> bytes:
    """The repository's remnic.config.json with ``patterns`` added to ``store.include``."""
    try:
        data = json.loads(current or b"{}")
    except ValueError:
        raise UsageError(f"{root / REPO_CONFIG_FILE} is not valid JSON; fix it before adopting notes") from None
    if not isinstance(data, dict):
        raise UsageError(f"{root / REPO_CONFIG_FILE} must hold a JSON object")
    store = data.setdefault("store", {})
    store["include"] = list(dict.fromkeys([*store.get("include", []), *patterns]))
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def summary(files: MemoryStore, include: Sequence[str]) -> dict[str, Any]:
    """What ``sync run`` would adopt: how many memory files, and every other file left alone, with why."""
    return {
        "memoryFiles": sum(1 for _ in files.iter_paths()),
        "skipped": skipped_files(files),
        "include": list(include),
    }
