"""Paths ``git status`` shows only because git's own index lags behind HEAD.

When remnic commits while another git process holds ``.git/index.lock``, the commit
stands but git's index keeps the old entries until a later write repairs it
(:meth:`remnic.repo.ledger.Ledger.repair_index`). Meanwhile ``git status`` reports
those paths as staged, added or deleted although the files are exactly what HEAD
records: they are no hand edits, and sync must not report them as uncommitted ones
on every run.
"""

from __future__ import annotations

import os
from pathlib import Path

from remnic.repo.ledger import Ledger


def lagging_in_step(root: Path, ledger: Ledger, changed: set[str]) -> set[str]:
    """The paths of ``changed`` that git's index lags on and whose file on disk is HEAD's version."""
    lagging = set(ledger.index_repair_pending()) & changed if changed else set()
    out = set()
    for path in lagging:
        full = root / path
        if os.path.islink(full):
            continue
        try:
            on_disk: bytes | None = full.read_bytes()
        except FileNotFoundError:
            on_disk = None
        except OSError:
            continue
        if on_disk == ledger.committed_bytes(path):
            out.add(path)
    return out
