"""Files another program holds open for writing: a save in progress, never replaced or committed.

A writer that keeps a file open and pauses (a script writing in two halves, an
``r+`` handle appending) writes through its handle; sync neither commits such a
file nor renames its normalised copy over it. How that is told (a Linux read
lease held across the compare-and-rename; compare, then rename where leases are
unavailable) lives in :mod:`remnic.fsio`, shared with the write transaction,
which replaces a file only if it still holds the bytes it read too.
"""

from __future__ import annotations

from remnic.fsio import CHANGED, HELD, REPLACED, held_open, replace_unless_held

__all__ = ["CHANGED", "HELD", "HELD_REASON", "REPLACED", "held_open", "replace_unless_held"]

HELD_REASON = "held open by another program; synced when it is closed"
