"""Write rate limiting and idempotency replay, shared by HTTP and MCP.

Both live in the server process (not on disk): they protect a running server,
and a restart is a clean slate. Dry runs and idempotency replays never count
against the write limit (seed 003), and a dry run's answer is never recorded under
its idempotency key: the real write that follows with that key runs.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from remnic.errors import ValidationError

from .errors import IdempotencyConflict, RateLimited


class RateLimiter:
    """A sliding window of ``limit`` writes per ``window_s`` seconds per principal."""

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def acquire(self, principal: str) -> None:
        """Count one write, or raise RateLimited (before anything is written)."""
        now = self.clock()
        with self._lock:
            hits = self._hits.setdefault(principal, deque())
            while hits and hits[0] <= now - self.window_s:
                hits.popleft()
            if len(hits) >= self.limit:
                # Whole seconds, rounded up: the message and Retry-After say the same, never "0s".
                retry = max(1, math.ceil(hits[0] + self.window_s - now))
                raise RateLimited(
                    f"write rate limit exceeded: {self.limit} writes per {self.window_s:g}s for "
                    f"principal {principal!r}; retry in {retry}s (server.writeRateLimit)",
                    retry_after_s=retry,
                )
            hits.append(now)

    def refund(self, principal: str) -> None:
        """Give back the last slot: the write turned out not to happen (validation failed)."""
        with self._lock:
            hits = self._hits.get(principal)
            if hits:
                hits.pop()


@dataclass
class _Entry:
    fingerprint: str
    expires: float
    done: threading.Event
    result: Any = None


def fingerprint(operation: str, payload: dict[str, Any]) -> str:
    """What a replay must match: the operation and its arguments (minus the key itself)."""
    body = {k: v for k, v in payload.items() if k != "idempotencyKey"}
    return hashlib.sha256(json.dumps([operation, body], sort_keys=True, default=str).encode()).hexdigest()


class IdempotencyCache:
    """Remembers the response of each (principal, idempotencyKey) for ``window_s`` seconds.

    A second request with the same key and the same body gets the original
    response back (flagged as a replay) without running again; concurrent
    duplicates wait for the first to finish. The same key with a different body
    is refused, because silently returning the other request's answer would lie.
    """

    def __init__(self, window_s: float, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def run(self, principal: str, key: str, print_: str, fn: Callable[[], Any]) -> tuple[Any, bool]:
        """(result, replayed). Exceptions from ``fn`` are not cached: the key stays usable."""
        now = self.clock()
        with self._lock:
            self._expire(now)
            entry = self._entries.get((principal, key))
            if entry is not None and entry.fingerprint != print_:
                raise _conflict(key)
            if entry is None:
                entry = _Entry(print_, now + self.window_s, threading.Event())
                self._entries[(principal, key)] = entry
                owner = True
            else:
                owner = False
        if not owner:
            entry.done.wait(timeout=120)
            if entry.result is not None:
                return entry.result, True
            return self.run(principal, key, print_, fn)  # the first attempt failed; try for real
        try:
            entry.result = fn()
            return entry.result, False
        except BaseException:
            with self._lock:
                if self._entries.get((principal, key)) is entry:
                    del self._entries[(principal, key)]
            raise
        finally:
            entry.done.set()

    def check(self, principal: str, key: str, print_: str) -> None:
        """The conflict :meth:`run` would raise for this key, recording nothing (a dry run)."""
        with self._lock:
            self._expire(self.clock())
            entry = self._entries.get((principal, key))
        if entry is not None and entry.fingerprint != print_:
            raise _conflict(key)

    def _expire(self, now: float) -> None:
        while self._entries:
            key, first = next(iter(self._entries.items()))
            if first.expires > now and len(self._entries) <= self.max_entries:
                break
            if not first.done.is_set():  # never drop an in-flight entry
                break
            del self._entries[key]


def _conflict(key: str) -> ValidationError:
    """An ``IdempotencyConflict`` (409) naming the key."""
    return IdempotencyConflict.single(
        "idempotencyKey", f"{key!r} was already used with a different request body; use a new key"
    )
