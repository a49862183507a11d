"""Whether hand-edited memories' texts differ from the versions sync last reconciled.

A body edit gets ``updated``/``contentHash`` stamped; a frontmatter-only edit does not. A fitting
``contentHash`` answers without git; the rest are compared with their committed versions, all read
by one git process (a burst of hand edits asked git once a file before).

Every comparison is with the commits the run started from: ``head`` is the sha sync read before
``git status``, never the symbolic ``HEAD``. A plain ``git commit`` landing while sync runs would
otherwise make the edit it holds look unchanged (the blob read is already the edited text), and the
edit would never be stamped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from remnic.errors import MemoryFormatError
from remnic.memfile.model import MemoryRecord, parse_file
from remnic.memfile.values import hash_matches
from remnic.repo.ledger import Ledger

__all__ = ["BodyCheck"]


class BodyCheck:
    """``head``: the commit HEAD was at when the run began (what ``status`` compares with);
    ``status``: git's status letters by path; ``bases``: the commits sync last reconciled;
    ``is_new(path)``: whether the file is seen for the first time (it is then taken as it is);
    ``since``: path → the commit to compare it with first (a commit that landed during an earlier
    run changed it after that run's base moved past it)."""

    def __init__(
        self,
        ledger: Ledger,
        head: str | None,
        status: Mapping[str, str],
        bases: Sequence[str],
        is_new: Callable[[str], bool],
        since: Mapping[str, str] | None = None,
    ) -> None:
        self.ledger, self.head, self.status, self.bases, self.is_new = ledger, head, status, list(bases), is_new
        self.since = dict(since or {})
        self.texts: dict[tuple[str, str], str | None] = {}

    def load(self, files: Iterable[tuple[str, MemoryRecord, str | None]]) -> None:
        """Read every committed version :meth:`changed` will ask for: (path, record, renamed-from path)."""
        specs: list[tuple[str, str]] = []
        for path, record, partner in files:
            asked = self.refs(path, record, partner)
            if asked is not None:
                specs += [(ref, asked[0]) for ref in asked[1]]
        specs = [s for s in dict.fromkeys(specs) if s not in self.texts]
        if specs:
            self.texts.update(zip(specs, self.ledger.blob_texts(specs), strict=True))

    def changed(self, path: str, record: MemoryRecord, partner: str | None) -> bool:
        """Whether the memory's text differs from the version sync last reconciled."""
        asked = self.refs(path, record, partner)
        if asked is None:
            return False
        before, refs = asked
        missing = [(ref, before) for ref in refs if (ref, before) not in self.texts]
        if missing:  # not loaded beforehand
            self.texts.update(zip(missing, self.ledger.blob_texts(missing), strict=True))
        for ref in refs:
            text = self.texts.get((ref, before))
            if text is None:
                continue
            try:
                return parse_file(text, before).content != record.content
            except MemoryFormatError:
                return True
        return False

    def refs(self, path: str, record: MemoryRecord, partner: str | None) -> tuple[str, list[str]] | None:
        """(the path it had, the commits to read it from, in order) when only git can tell whether the
        text changed; None when the answer is "unchanged" without asking."""
        if "id" not in record.frontmatter:
            return None
        # An uncommitted file's fitting hash may be remnic's own (an update carrying the user's edit
        # aside fits it to their text): only HEAD tells whether the text changed.
        if path not in self.status and hash_matches(record.frontmatter.get("contentHash"), record.content):
            return None
        at_head = [self.head] if self.head else []
        if partner is None:
            refs = at_head if path in self.status else self.bases
        else:
            # A rename in the working tree leaves its old path in HEAD; one committed with git
            # (`git mv` + an edit) has it only in the commit sync last reconciled.
            refs = [*at_head, *self.bases] if path in self.status else self.bases
        first = self.since.get(partner or path)
        if first is not None:
            refs = [first, *refs]
        if (partner is None and self.is_new(path)) or not refs:
            return None
        return partner or path, refs
