"""A hook's place in a host transcript that grows: each run reads only what was appended since.

The cursor (``state/observe-cursors/<namespace>/<session>.json``) keeps

- ``lastIndex``: the last turn index handed over (a JSONL turn's index is its line number);
- ``offset`` and ``line``: the byte just past the last whole line read, and the lines before it,
  so the turns after it keep the indexes a read from the start would give them;
- ``fingerprint``: a hash of the file's first bytes and of the bytes just before ``offset``;
- ``file`` and ``path``: the device and inode of the file read, and the path it was read as.

A cursor with only ``lastIndex`` (an older remnic's) is read from the start once, skipping the turns
at or before ``lastIndex``. A file that no longer has the fingerprinted bytes (rewritten, truncated)
or is another file (another inode: a new transcript under the same session id) is read from its start
again *without* that filter, since its line numbers say nothing about what was handed over: the
buffer drops the turns it has seen by host id (a Claude Code ``uuid``, a Codex ``payload.id``), and
the service those without one (``L<line>``) whose words are already in the session's archive
(:func:`remnic.service.observing.observe_transcript_file`). :attr:`FileRead.rewritten` says why.

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
from remnic.observe.jsonlines import parse_host_lines
from remnic.observe.records import Turn
from remnic.observe.transcripts import parse_transcript

READ_LIMIT = 64 * 1024 * 1024
"""The most one hook run reads of a transcript, in bytes."""
BLOCK = 8 * 1024 * 1024
"""The most parsed at once (a longer line is parsed whole, up to :data:`READ_LIMIT`)."""
HOST_FORMATS = ("claude-code", "codex")
"""Formats read from an offset: JSON lines, each readable alone. Others are read whole each run."""
_PRINT_BYTES = 4096


@dataclass(frozen=True)
class CursorState:
    last_index: int = -1
    offset: int | None = None
    """None: no place kept (a first run, or an older cursor): read from the start."""
    line: int = 0
    fingerprint: str = ""
    skipping: bool = False
    """``offset`` is inside a line longer than :data:`READ_LIMIT`, skipped up to its newline."""
    file: str = ""
    """``<device>:<inode>`` of the file read ('' in a cursor written before it was kept: not checked)."""
    path: str = ""
    recheck: bool = False
    """A rewritten file's backlog is still being read: its turns without a host id are checked
    against the archive (see :func:`remnic.service.observing.observe_transcript_file`)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"lastIndex": self.last_index}
        if self.offset is not None:
            out.update(offset=self.offset, line=self.line, fingerprint=self.fingerprint)
            out.update({k: v for k, v in (("file", self.file), ("path", self.path)) if v})
            for key, flag in (("skipping", self.skipping), ("recheck", self.recheck)):
                if flag:
                    out[key] = True
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
        file, path = data.get("file"), data.get("path")
        return CursorState(
            last,
            offset,
            line,
            fingerprint,
            data.get("skipping") is True,
            file if isinstance(file, str) else "",
            path if isinstance(path, str) else "",
            data.get("recheck") is True,
        )

    def save(self, state: CursorState, *, restarted: bool = False) -> None:
        """Keep ``state``. Another hook of the session may have gone further meanwhile: lastIndex never
        goes back, unless ``state`` begins a rewritten or other file (its numbers start again)."""
        if not restarted:
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
    rewritten: str | None = None
    """Why the file was read from its start again though a cursor was kept (None: it was not)."""
    recheck: bool = False
    """The turns come from a rewritten file: those without a host id may have been handed over."""


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
        return _read(fd, info, state, limit, name)
    finally:
        os.close(fd)


def _changed(fd: int, info: os.stat_result, state: CursorState, file: str, name: str) -> str | None:
    """Why the file at the cursor's place is not the one it was left in (None: it is)."""
    assert state.offset is not None
    if state.file and state.file != file:
        was = f" (the cursor is for {state.path})" if state.path and state.path != name else ""
        return f"transcript_path {name} is another file than the one this session's last hook read{was}"
    if state.offset > info.st_size or state.fingerprint != _fingerprint(fd, state.offset):
        return f"transcript {name} was rewritten or truncated since this session's last hook"
    return None


def _read(fd: int, info: os.stat_result, state: CursorState, limit: int, name: str) -> FileRead:
    size, file = info.st_size, f"{info.st_dev}:{info.st_ino}"
    rewritten = _changed(fd, info, state, file, name) if state.offset is not None else None
    kept = state.offset is not None and rewritten is None
    pos, line, skipping = (state.offset or 0, state.line, state.skipping) if kept else (0, 0, False)
    if rewritten is not None:
        # Its line numbers say nothing of what was handed over: every turn goes to the buffer's checks.
        state = CursorState()
    out = FileRead(state=CursorState(state.last_index), rewritten=rewritten)
    out.recheck = rewritten is not None or (kept and state.recheck)
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
            return _whole(fd, size, state, limit, name, out)
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
        return _whole(fd, size, state, limit, name, out)
    out.bytes_left = left
    last = max([state.last_index, *(t.index for t in out.turns)])
    recheck = out.recheck and left > 0
    out.state = CursorState(last, pos, line, _fingerprint(fd, pos), skipping, file, name, recheck)
    return out


def _take(out: FileRead, data: bytes, line: int, fmt: str | None, last_index: int) -> str:
    """Parse one block of whole lines starting after ``line`` lines; its turns past ``last_index``
    join ``out``. The format read (the file's own when the block is its start)."""
    text = data.decode("utf-8", errors="replace")
    if fmt is None and line == 0:
        parsed = parse_transcript(text, "auto", strict=False)
    else:
        # Numbered from ``line`` on: the cost follows this block, not the lines before it.
        parsed = parse_host_lines(text, line)
    out.turns += [t for t in parsed.turns if t.index > last_index]
    return parsed.format if fmt is None else fmt


def _whole(fd: int, size: int, state: CursorState, limit: int, name: str, begun: FileRead) -> FileRead:
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
    return FileRead(turns, CursorState(last), bytes_read=size, rewritten=begun.rewritten, recheck=begun.recheck)
