"""Observation operations of the ``Memory`` facade: conversations become memories (see
:mod:`.observing` for the pipeline, :mod:`.consolidate` for the later merge of near-duplicates)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remnic.observe.transcripts import SOURCE_FORMATS

    from .consolidate import ConsolidationResult
    from .memory import Memory
    from .observing import ObserveResult


__all__ = ["SOURCE_FORMATS", "ConversationOps"]


def __getattr__(name: str) -> Any:
    """``SOURCE_FORMATS``, loaded with the transcript readers on first use (the server's schema)."""
    if name == "SOURCE_FORMATS":
        from remnic.observe.transcripts import SOURCE_FORMATS

        return SOURCE_FORMATS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ConversationOps:
    """Mixed into :class:`remnic.service.memory.Memory`."""

    # Set by Memory.__init__: the background consolidation after flushes (see schedule_consolidation).
    _consolidation: threading.Thread | None
    _consolidate_again: bool
    _consolidation_lock: threading.Lock
    _tended_head: str | None
    _closed: bool
    on_consolidated: Callable[[ConsolidationResult], None] | None = None
    """Told each background consolidation pass's result (the watcher prints it as an event)."""

    def observe(
        self: Memory,
        session_key: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        namespace: str | None = None,
        source: str = "api",
        flush: bool = False,
        event: str | None = None,
        dry_run: bool = False,
        extract: bool = True,
    ) -> ObserveResult:
        """Take conversation messages (``{role, content, speaker?, turnId?, timestamp?}``) into the session's
        buffer; a flush (asked for, or decided by the triggers) turns them into memories in one commit.
        ``extract=False`` only archives them."""
        from . import observing as _observing

        return _observing.observe(
            self,
            session_key,
            messages,
            namespace=namespace,
            source=source,
            flush=flush,
            event=event,
            dry_run=dry_run,
            extract=extract,
        )

    def observe_transcript(
        self: Memory,
        session_key: str,
        text: str,
        *,
        fmt: str = "auto",
        name: str = "transcript",
        namespace: str | None = None,
        source: str = "api",
        flush: bool = False,
        event: str | None = None,
        dry_run: bool = False,
        strict: bool = True,
        only_new: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> ObserveResult:
        """Observe a transcript file's text (claude-code, codex, openai, anthropic, plain, or auto).

        ``only_new`` skips the turns an earlier call already took (a hook re-reading a growing file);
        ``progress(done, total)`` hears each turn of a flush extracted."""
        from . import observing as _observing

        return _observing.observe_transcript(
            self,
            session_key,
            text,
            fmt=fmt,
            name=name,
            namespace=namespace,
            source=source,
            flush=flush,
            event=event,
            dry_run=dry_run,
            strict=strict,
            only_new=only_new,
            progress=progress,
        )

    def flush_idle_sessions(
        self: Memory,
        *,
        idle_minutes: float | None = None,
        source: str = "api",
        skip: str | None = None,
        deadline: float | None = None,
    ) -> list[ObserveResult]:
        """Flush the buffers of sessions idle for ``idle_minutes`` (default observe.bufferMaxMinutes);
        an agent hook's ``deadline`` (``time.monotonic()``) bounds the flushes it begins."""
        from . import observing as _observing

        return _observing.flush_idle_sessions(
            self, idle_minutes=idle_minutes, source=source, skip=skip, deadline=deadline
        )

    def embedder_for_observe(self: Memory, *, facts: bool = False) -> Callable[[Sequence[str]], Any] | None:
        """Cached embeddings for the flush triggers (turns) or, with ``facts``, for near-duplicates (each
        fact as the index will embed it: its sentences, so storing it embeds nothing more); None when no
        model can load."""
        try:
            self.index.embedder.dim  # noqa: B018 - loads the model now, or fails here
        except Exception:  # noqa: BLE001 - topic shift and near-duplicates are skipped, nothing else
            return None
        return self.index.embed_as_memories if facts else self.index.embed_texts

    def index_later(self: Memory) -> contextlib.AbstractContextManager[None]:
        """A block whose writes are acknowledged at their commit and indexed when it ends, in one
        coalesced update (a recall inside it catches the index up first). Duplicates and supersession
        still see the held writes: they are compared directly, as any write not yet indexed is."""
        return self.indexer.hold()

    def schedule_consolidation(self: Memory) -> None:
        """After a flush, in a long-running process (``background_work``): consolidate on a background
        thread. Flushes that land while it runs make it run once more, not once each."""
        if not self.background_work:
            return
        with self._consolidation_lock:
            if self._closed:
                return
            if self._consolidation is not None:  # a pass is under way: it runs once more
                self._consolidate_again = True
                return
            thread = threading.Thread(target=self._consolidate_rounds, name="remnic-consolidate")
            self._consolidation = thread
            thread.start()

    def _consolidate_rounds(self: Memory) -> None:
        while True:
            try:
                result = self.consolidate()
                logging.getLogger("remnic").info("%s", result.summary())  # a pass that merged nothing too
                listener = self.on_consolidated
                if listener is not None:
                    listener(result)
                if self.settings.entities.enabled:  # reads never write pages: the long-running process does
                    self.refresh_entities(source="background")
            except Exception:  # a background pass: logged, the next flush tries again
                logging.getLogger("remnic").exception("consolidation after a flush failed")
            with self._consolidation_lock:
                if not self._consolidate_again or self._closed:
                    self._consolidation = None  # the next flush starts a pass of its own
                    return
                self._consolidate_again = False

    def tend_observations(self: Memory, *, source: str) -> dict[str, Any]:
        """What a long-running process (the server, the watcher) does between requests: flush the
        buffers of sessions idle past ``observe.bufferMaxMinutes`` (a host that never said the session
        ended: Codex, a closed terminal) and consolidate when a flush was committed since the last
        look, by this process or another (the agent hooks run in their own)."""
        flushed = self.flush_idle_sessions(source=source)  # each flush schedules its consolidation itself
        head = self.head()
        seen, self._tended_head = self._tended_head, head
        wanted = self.background_work and self.settings.observe.consolidate_after_flush
        landed = bool(flushed)
        if wanted and not landed and head is not None and seen != head:
            span = [f"{seen}..{head}"] if seen else ["-n", "200", head]
            landed = bool(self.ledger.git("log", "--format=%H", "-F", "--grep=Remnic-Flush-Id: ", *span).strip())
            if landed:
                self.schedule_consolidation()
        return {"flushed": [r.session_key for r in flushed], "consolidating": wanted and landed}
