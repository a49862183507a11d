"""The recall clock: live time, or a pinned instant for reproducible X-rays.

``REMNIC_XRAY_CLOCK=<epoch ms>`` (or ``clock=`` in the Python API) pins the
clock a recall reads: recency and staleness are judged at that instant, the
audit entry and the snapshot carry it, ids derived from it are deterministic
(uuid5 / a hash instead of random), and latencies measured by it are 0. That
is what golden tests and cross-surface comparisons need: the same query in
the same repository state gives the same bytes.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

ENV_VAR = "REMNIC_XRAY_CLOCK"
# A fixed uuid5 namespace for snapshot ids derived from a pinned clock.
_SNAPSHOT_NS = uuid.UUID("3f0c5a8e-7d4b-5b8e-9a61-2f1d0e6c4b7a")


@dataclass(frozen=True)
class RecallClock:
    """``pinned_ms`` None means live time."""

    pinned_ms: int | None = None

    @property
    def pinned(self) -> bool:
        return self.pinned_ms is not None

    def now_s(self) -> float:
        return self.pinned_ms / 1000.0 if self.pinned_ms is not None else time.time()

    def perf_ms(self) -> float:
        """A monotonic reading for latencies; a pinned clock does not move, so its latencies are 0."""
        return 0.0 if self.pinned_ms is not None else time.perf_counter() * 1000.0

    def snapshot_id(self, *parts: Any) -> str:
        if self.pinned_ms is None:
            return str(uuid.uuid4())
        key = "\x1f".join("" if p is None else str(p) for p in (*parts, self.pinned_ms))
        return str(uuid.uuid5(_SNAPSHOT_NS, key))

    def audit_id(self, *parts: Any) -> str:
        """The ledger's id for this recall, deterministic when the clock is pinned."""
        from .audit import new_audit_id

        if self.pinned_ms is None:
            return new_audit_id(self.now_s())
        return new_audit_id(self.now_s(), "\x1f".join("" if p is None else str(p) for p in (*parts, self.pinned_ms)))


LIVE = RecallClock()


MAX_CLOCK_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: the last instant dates can spell


def parse_clock(value: Any) -> int:
    """Epoch milliseconds from an int or a digit string; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"clock must be epoch milliseconds, got {value!r}")
    if isinstance(value, int):
        ms = value
    elif isinstance(value, float) and value.is_integer():
        ms = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        ms = int(value.strip())
    else:
        raise ValueError(f"clock must be epoch milliseconds (an integer), got {value!r}")
    if not 0 <= ms <= MAX_CLOCK_MS:
        raise ValueError(f"clock must be epoch milliseconds from 0 to {MAX_CLOCK_MS} (year 9999), got {ms}")
    return ms


def resolve_clock(clock: RecallClock | int | str | None = None, env: Mapping[str, str] | None = None) -> RecallClock:
    """The clock for one recall: an explicit ``clock`` wins, then ``REMNIC_XRAY_CLOCK``, then live time.

    A malformed environment value is logged and ignored (a recall must not fail over it);
    a malformed explicit ``clock`` raises ValueError.
    """
    if isinstance(clock, RecallClock):
        return clock
    if clock is not None:
        return RecallClock(parse_clock(clock))
    raw = (os.environ if env is None else env).get(ENV_VAR)
    if raw is None or not raw.strip():
        return LIVE
    try:
        return RecallClock(parse_clock(raw))
    except ValueError:
        log.warning("%s=%r is not epoch milliseconds; using the live clock", ENV_VAR, raw)
        return LIVE
