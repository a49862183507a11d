"""A hook's place in a host transcript that grows: each run reads only what was appended since.

The cursor (``state/observe-cursors/<namespace>/<session>.json``) keeps

- ``lastIndex``: the last turn index handed over (a JSONL turn's index is its line number);
- ``offset`` and ``line``: the byte just past the last whole line read, and the lines before it,
  so the turns after it keep the indexes a read from the start would give them;
- ``fingerprint``: a hash of the file's first bytes and of the bytes just before ``offset``. A file
  that no longer has them (rewritten, truncated) is read from its start again, as is one whose
  cursor has only ``lastIndex`` (an older remnic's); turns at or before ``lastIndex`` are skipped
  either way, and the buffer keeps a turn taken twice once.

One run reads at most :data:`READ_LIMIT` bytes, in blocks of :data:`BLOCK` parsed one at a time, so
neither time nor memory grows with the file; what is left waits for the session's next hook. A
line longer than the limit (a huge tool result) is skipped. A last line without its newline is
read but the offset stays before it: the host may still be writing it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeGuard

from remnic.errors import ValidationError
from remnic.fsio import write_atomic
from remnic.observe.archive import archive_name
from remnic.observe.records import Turn
from remnic.observe.transcripts import parse_transcript

READ_LIMIT = 64 * 1024 * 1024
"""The most one hook run reads of a transcript, in bytes."""
BLOCK = 8 * 1024 * 1024
"""The most parsed at once (a longer line is parsed whole, up to :data:`READ_LIMIT`)."""
HOST_FORMATS = ("claude-code", "codex")
"""Formats read from an offset: JSON lines, each readable alone. Others are read whole each run."""
_PRINT_BYTES = 4096
# Line 1 of a block read from the middle of a file: a Claude Code line that is no turn, so the block
# is read as host JSON lines (each by its own shape) whatever its own first line looks like.
_HOST_SENTINEL = '{"type": "summary"}'


@dataclass(frozen=True)
class CursorState:
    last_index: int = -1
    offset: int | None = None
    """None: no place kept (a first run, or an older cursor): read from the start."""
    line: int = 0
    fingerprint: str = ""
    skipping: bool = False
    """``offset`` is inside a line longer than :data:`READ_LIMIT`, skipped up to its newline."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"lastIndex": self.last_index}
        if self.offset is not None:
            out.update(offset=self.offset, line=self.line, fingerprint=self.fingerprint)
            if self.skipping:
                out["skipping"] = True
        return out


class Cursor:
    """A session's cursor file."""

    def __init__(self, durable_dir: Path, session_key: str, namespace: str) -> None:
        self.path = durable_dir / "observe-cursors" / archive_name(namespace) / f"{archive_name(session_key)}.json"

    def load(self) -> CursorState:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return CursorState()
        if not isinstance(data, dict):
            return CursorState()
        last = data.get("lastIndex", -1)
        last = last if isinstance(last, int) and not isinstance(last, bool) else -1
        offset, line, fingerprint = data.get("offset"), data.get("line"), data.get("fingerprint")
        if not (_count(offset) and _count(line) and isinstance(fingerprint, str)):
            return CursorState(last)  # an older remnic's cursor (or a damaged one): read from the start
        return CursorState(last, offset, line, fingerprint, data.get("skipping") is True)

    def save(self, state: CursorState) -> None:
        # Another hook of the session may have gone further meanwhile: lastIndex never goes back.
        state = replace(state, last_index=max(state.last_index, self.load().last_index))
        write_atomic(self.path, json.dumps(state.to_json()) + "\n")

    def read(self) -> int:
        return self.load().last_index

    def write(self, index: int) -> None:
        """A text observer's place (no file offset): the offset kept, if any, stays valid."""
        self.save(replace(self.load(), last_index=index))


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass
class FileRead:
    """What one run read of a transcript file."""

    turns: list[Turn] = field(default_factory=list)
    state: CursorState = field(default_factory=CursorState)
    bytes_read: int = 0
    bytes_left: int = 0
    skipped_long_line: bool = False


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def _fingerprint(fd: int, offset: int) -> str:
    head = os.pread(fd, min(offset, _PRINT_BYTES), 0)
    start = max(0, offset - _PRINT_BYTES)
    tail = os.pread(fd, offset - start, start)
    return hashlib.sha256(b"%d:" % offset + head + b"\0" + tail).hexdigest()[:32]


def read_new_turns(path: str | Path, state: CursorState, *, limit: int = READ_LIMIT) -> FileRead:
    """The turns appended to the transcript at ``path`` since ``state``, and the cursor after them.

    A path that is not a regular file (a device such as /dev/zero, a pipe, a directory) is a
    ValidationError naming ``transcript_path``; an unreadable file an OSError."""
    name = str(path)
    fd = os.open(os.path.expanduser(name), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValidationError.single(
                "transcript_path", f"{name} is {_kind(info.st_mode)}; it must name the host's transcript file"
            )
        return _read(fd, info.st_size, state, limit, name)
    finally:
        os.close(fd)


def _read(fd: int, size: int, state: CursorState, limit: int, name: str) -> FileRead:
    kept = state.offset is not None and state.offset <= size and state.fingerprint == _fingerprint(fd, state.offset)
    pos, line, skipping = (state.offset or 0, state.line, state.skipping) if kept else (0, 0, False)
    out = FileRead(state=CursorState(state.last_index))
    budget = min(limit, size - pos)
    fmt: str | None = None if pos == 0 else HOST_FORMATS[0]
    if skipping:  # the rest of an over-long line: find its end, parse nothing of it
        while budget > 0 and skipping:
            block = os.pread(fd, min(BLOCK, budget), pos)
            if not block:
                break
            budget -= len(block)
            newline = block.find(b"\n")
            if newline >= 0:
                budget += len(block) - newline - 1  # the bytes after the line's end are read next
                block, line, skipping = block[: newline + 1], line + 1, False
            pos += len(block)
            out.bytes_read += len(block)
    pending = b""
    while budget > 0 and not skipping:
        block = os.pread(fd, min(BLOCK, budget), pos + len(pending))
        if not block:
            break
        budget -= len(block)
        out.bytes_read += len(block)
        newline = block.rfind(b"\n")
        if newline < 0:
            pending += block  # a line longer than a block: parsed once it ends
            continue
        whole = pending + block[: newline + 1]
        fmt = _take(out, whole, line, fmt, state.last_index)
        if fmt not in HOST_FORMATS:
            return _whole(fd, size, state, limit, name)
        line += whole.count(b"\n")
        pos += len(whole)
        pending = block[newline + 1 :]
    left = size - pos
    if pending and pos + len(pending) >= size:
        # The last line, its newline not written yet: read it, but start there again next time.
        fmt = _take(out, pending, line, fmt, state.last_index)
        left = 0
    elif pending and len(pending) >= limit:
        pos, skipping, out.skipped_long_line = pos + len(pending), True, True
        left = size - pos
    if fmt is not None and fmt not in HOST_FORMATS:
        return _whole(fd, size, state, limit, name)
    out.bytes_left = left
    last = max([state.last_index, *(t.index for t in out.turns)])
    out.state = CursorState(last, pos, line, _fingerprint(fd, pos), skipping)
    return out


def _take(out: FileRead, data: bytes, line: int, fmt: str | None, last_index: int) -> str:
    """Parse one block of whole lines starting after ``line`` lines; its turns past ``last_index``
    join ``out``. The format read (the file's own when the block is its start)."""
    text = data.decode("utf-8", errors="replace")
    if fmt is None and line == 0:
        parsed = parse_transcript(text, "auto", strict=False)
    else:
        parsed = parse_transcript(_HOST_SENTINEL + "\n" * max(line, 1) + text, "auto", strict=False)
    out.turns += [t for t in parsed.turns if t.index > last_index]
    return parsed.format if fmt is None else fmt


def _whole(fd: int, size: int, state: CursorState, limit: int, name: str) -> FileRead:
    """A transcript not in JSON lines (a message array, plain text): read whole, no offset kept."""
    if size > limit:
        raise ValidationError.single(
            "transcript_path",
            f"{name} is {size} bytes, over the {limit}-byte limit of one read, and not JSON lines "
            f"(formats read a part at a time: {', '.join(HOST_FORMATS)})",
        )
    text = os.pread(fd, size, 0).decode("utf-8", errors="replace")
    parsed = parse_transcript(text, "auto", strict=False)
    turns = [t for t in parsed.turns if t.index > state.last_index]
    last = max([state.last_index, *(t.index for t in parsed.turns)])
    return FileRead(turns, CursorState(last), bytes_read=size)
