"""The memory repository on disk: files, the git ledger, the write lock, the scan memo.

- :mod:`.files`: where memory files live, reading and scanning them (``MemoryStore``);
- :mod:`.ledger`: git as the version ledger (commits with trailers, history, diffs);
- :mod:`.history`: a memory's versions, diffs and timeline read from the ledger;
- :mod:`.lock`: the repository write lock shared by every process;
- :mod:`.scan_memo`: each valid file's parse keyed by its stat, so listing reads only what changed.
"""
