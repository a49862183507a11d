"""The observation pipeline: conversation traces become durable memories, with no LLM.

- :mod:`.transcripts`: host transcripts and message dicts → :class:`~.records.Turn` lists
  (host-injected text cut out, per content block: :mod:`.injected`);
- :mod:`.records`: turns, extracted facts, importance, verdicts, ``MemoryObservation``;
- :mod:`.archive`: validated messages archived per session.
"""
