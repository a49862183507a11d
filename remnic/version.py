"""The package version, apart from everything else so any layer can name it."""

__version__ = "0.1.0"

RULES_REVISION = 2
"""Bump when the reading of a memory file changes between releases (ids, values): cached checks
(:mod:`remnic.repo.scan_memo`) are then redone. 2: the original Remnic's free text and accented entity ids."""
