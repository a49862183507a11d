"""A pull's index step that fails is never recorded as done: the index then says it reflects HEAD while a
memory the pull brought is missing from it, and no catch-up ever adds it (``path_of`` None for a live file)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import tantivy
from test_space_sync import pair  # noqa: F401 - the fixture

from remnic.index.manifest import read_current
from remnic.service.memory import Memory


class _ReleaseOnFailure(logging.Handler):
    """Lets go of the tantivy writer held over the index once an index update has failed for it: the failure
    is transient, as a writer that finishes meanwhile makes it, so what the pull does next succeeds."""

    def __init__(self, writer: Any) -> None:
        super().__init__(logging.WARNING)
        self.writer: Any = writer

    def emit(self, record: logging.LogRecord) -> None:
        if self.writer is not None and "index update failed" in record.getMessage():
            self.release()

    def release(self) -> None:
        if self.writer is not None:
            self.writer.wait_merging_threads()  # consumes the writer: tantivy's lock file is free again
            self.writer = None


def test_a_pull_whose_index_step_failed_never_records_head(pair: tuple[Memory, Memory]) -> None:  # noqa: F811
    ana, ben = pair
    new = ben.store("Staging is refreshed every night", category="fact").record
    ben.space_push()
    ana.settle_index()
    build = read_current(ana.index.root)
    assert build is not None
    held = _ReleaseOnFailure(tantivy.Index.open(str(Path(ana.index.root) / build / "tantivy")).writer(15_000_000, 1))
    logger = logging.getLogger("remnic.index.search")
    logger.addHandler(held)
    try:
        report = ana.space_pull()  # the merge lands; the index step's failure is reported, not raised
    finally:
        logger.removeHandler(held)
        held.release()
    assert ana.get(new.id).path == new.path
    if report.index_behind is None:
        assert ana.index.path_of(new.id) == new.path  # the index followed: with what the pull brought
    else:
        assert ana.index.manifest().commit != ana.head()  # never stamped current without the pull's files
        assert report.to_dict()["indexBehind"] == report.index_behind
    assert [h.id for h in ana.recall("how often is staging refreshed", top_k=1)] == [new.id]  # catch-up
    assert ana.index.path_of(new.id) == new.path and ana.index.manifest().commit == ana.head()
