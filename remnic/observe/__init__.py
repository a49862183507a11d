"""The observation pipeline: conversation traces become durable memories, with no LLM.

Everything up to persisting, as pure functions plus the durable per-session buffer
(docs/observe.md describes the rules and the measurements):

- :mod:`.transcripts`: host transcripts and message dicts → :class:`~.records.Turn` lists
  (host-injected text cut out, per content block: :mod:`.injected`);
- :mod:`.buffer`: the crash-safe per-session journal and its idempotent flush plans;
- :mod:`.triggers`: when to flush (host events, turn count, time, topic shift);
- :mod:`.text`, :mod:`.cues`, :mod:`.normalize`, :mod:`.dates`, :mod:`.extract`: sentences →
  standalone ``ExtractedFact`` candidates;
- :mod:`.importance`, :mod:`.judge`: importance and the accept/reject/defer verdict;
- :mod:`.pipeline`: ``plan_observations``, the one entry point to ``MemoryObservation`` records;
- :mod:`.ledger`: the verdict ledger (telemetry for ``doctor``);
- :mod:`.records`: the record types;
- :mod:`.archive`: validated messages archived per session, in the durable ``state/``;
- :mod:`.lcm`: that transcript archive and its rebuildable search index;
- :mod:`.entities`: entity pages built by rules from the memories.
"""
