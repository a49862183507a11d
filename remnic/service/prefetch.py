"""Embedding a flush's facts while its later turns are still being extracted."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Prefetch"]

MIN_TURNS = 8  # a flush this long embeds its first facts while it extracts the rest
MIN_TEXTS = 8  # facts handed over at a time (an eighth of the flush's turns when more): enough for tight batches

Embed = Callable[[Sequence[str]], Any]


class Prefetch:
    """A flush's facts embedded on a worker thread while the turns after them are still being
    extracted, so the model and the extraction share the cores. ``embed`` (None without a model)
    then finds them memoised by the index; any the worker missed or failed are embedded there."""

    def __init__(self, embed: Embed | None, turns: int, *, warm: Callable[[], None] | None = None) -> None:
        self._embed = embed
        self._warm = warm  # run first on the worker (loading the model while the first facts are extracted)
        self.embed: Embed | None = self._embed_all if embed is not None else None
        self._chunk = max(MIN_TEXTS, turns // 8)
        self._waiting: list[str] = []
        self._queue: queue.SimpleQueue[list[str] | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        if embed is not None and turns >= MIN_TURNS:
            self._worker = threading.Thread(target=self._work, name="remnic-observe-embed", daemon=True)
            self._worker.start()

    def _work(self) -> None:
        assert self._embed is not None
        if self._warm is not None:
            try:
                self._warm()
            except Exception:  # noqa: BLE001 - the first embed() loads again and raises what it raises
                pass
        while (texts := self._queue.get()) is not None:
            try:
                self._embed(texts)
            except Exception:  # noqa: BLE001 - embed() tries again and raises what it raises
                pass

    def add(self, texts: Sequence[str]) -> None:
        if self._worker is None:
            return
        self._waiting += texts
        if len(self._waiting) >= self._chunk:
            self._queue.put(self._waiting)
            self._waiting = []

    def _embed_all(self, texts: Sequence[str]) -> Any:
        assert self._embed is not None
        self.close()
        return self._embed(texts)

    def close(self) -> None:
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join()
            self._worker = None

    def __enter__(self) -> Prefetch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
