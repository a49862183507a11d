"""Error types shared by every layer and surface.

Each error knows its CLI exit code (2 = usage/input, 1 = runtime) and its
machine-readable ``code`` (the HTTP API's error codes), so surfaces map errors
without re-deciding what they mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

EXIT_OK = 0
EXIT_FAILURE = 1
"""The command ran and failed: not found, a refused or failed write, a malformed file, a failed check."""
EXIT_USAGE = 2
"""The command line or its input is wrong (a flag, an argument, a JSONL line); nothing was changed."""
EXIT_NOT_RUNNING = 3
"""``remnic daemon status``: no server runs for this memory directory (the LSB status convention)."""
EXIT_INTERRUPTED = 130
"""Stopped by Ctrl-C (SIGINT), as shells report it."""
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_FAILURE: "failure: not found, a refused or failed write, a malformed file, a check that failed",
    EXIT_USAGE: "usage or input error: a bad flag, argument or input line, or a request the memory's state rules out; nothing was changed",
    EXIT_NOT_RUNNING: "`remnic daemon status`: no server is running",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}
"""Every exit code of the CLI, documented in docs/cli.md (generated) and the README."""


@dataclass
class FieldProblem:
    """One thing wrong with one field of one input (a file, a JSONL line, a request)."""

    field: str
    message: str
    path: str | None = None
    line: int | None = None
    options: Sequence[str] | None = None
    instead: str | None = None
    """A value to give this field in place of the one refused, shown under the field's name as the
    caller's surface spells it (``--supersedes mem_…`` on the CLI, ``supersedes: mem_…`` in a request)."""

    def describe(self) -> str:
        where = ""
        if self.path:
            where = self.path + (f":{self.line}" if self.line else "") + ": "
        elif self.line:
            where = f"line {self.line}: "
        text = f"{where}{self.field}: {self.message}" if self.field else f"{where}{self.message}"
        if self.instead is not None:
            # A flag takes its value after a space; a request field is a key and its value.
            given = f"{self.field} {self.instead}" if self.field.startswith("-") else f"{self.field}: {self.instead}"
            text += f": `{given}`"
        if self.options:
            text += f" (valid options: {', '.join(self.options)})"
        return text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"field": self.field, "message": self.message}
        if self.path:
            out["path"] = self.path
        if self.line:
            out["line"] = self.line
        if self.options:
            out["options"] = list(self.options)
        if self.instead is not None:
            out["instead"] = self.instead
        return out


class RemnicError(Exception):
    """Base error: a runtime failure (exit 1)."""

    exit_code = 1
    code = "internal_error"
    http_status = 500

    def __init__(self, message: str, *, problems: Sequence[FieldProblem] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.problems = list(problems)

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt without calling __init__: a subclass's __init__ takes its own arguments (a path, problems)
        # and builds the message from them, so pickle's default ``cls(*args)`` would fail or repeat it (a
        # worker process's error must reach the parent whole). The attributes come back as they were.
        return (_rebuild_error, (type(self), self.args), self.__dict__)

    def describe(self) -> str:
        if not self.problems or (len(self.problems) == 1 and self.problems[0].describe() == self.message):
            return self.message
        lines = [self.message] + ["  " + p.describe() for p in self.problems]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.message, "code": self.code}
        if self.problems:
            out["details"] = [p.to_dict() for p in self.problems]
        return out


def _rebuild_error(cls: type[RemnicError], args: tuple[Any, ...]) -> RemnicError:
    """An unpickled remnic error: ``args`` as they were, the rest from its saved attributes."""
    return cls.__new__(cls, *args)


class UsageError(RemnicError):
    """Bad input from the caller: a flag, an argument, a request field (exit 2)."""

    exit_code = 2
    code = "input_error"
    http_status = 400


class ValidationError(UsageError):
    """Input that fails schema validation; ``problems`` name each field."""

    code = "validation_error"

    @classmethod
    def single(
        cls,
        field: str,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        options: Sequence[str] | None = None,
        instead: str | None = None,
    ) -> ValidationError:
        problem = FieldProblem(field, message, path=path, line=line, options=options, instead=instead)
        return cls(problem.describe(), problems=[problem])


class MemoryFormatError(RemnicError):
    """A memory file on disk that cannot be read (bad YAML, wrong types).

    A runtime error (exit 1) because the file, not the command line, is wrong.
    """

    code = "malformed_memory"
    http_status = 422  # the file on disk is wrong, not the server: a person fixes it (doctor names it)

    def __init__(self, path: str, problems: Sequence[FieldProblem]) -> None:
        summary = "; ".join(p.describe() for p in problems) or "malformed"
        super().__init__(f"malformed memory file {summary}", problems=problems)
        self.path = path

    def describe(self) -> str:
        return self.message if len(self.problems) <= 1 else super().describe()


class NotFoundError(RemnicError):
    code = "not_found"
    http_status = 404


class RepoBusyError(RemnicError):
    """The repository is in a state no write may commit in (a merge or rebase underway, a detached HEAD):
    an expected refusal until a person finishes it, not a failure of remnic (exit 1, HTTP 409)."""

    code = "repo_busy"
    http_status = 409


class ReadOnlyError(RepoBusyError):
    """The memory directory cannot be written (a read-only mount, no permission): nothing was written.
    Not ``repo_busy``: retrying does not help until a person makes it writable (exit 1, HTTP 503)."""

    code = "read_only"
    http_status = 503


class MemoryDirGoneError(RemnicError):
    """The memory directory (or its ``.git``) was deleted or moved while a process was using it: nothing
    was written, and nothing is recreated there (exit 1, HTTP 503)."""

    code = "memory_dir_missing"
    http_status = 503


class WriteConflictError(RemnicError):
    """A file a write was about to replace changed on disk after the write read it (a person's save), again
    on every retry, or another program holds it open for writing: nothing was committed, and trying again
    applies it to the new text (exit 1, HTTP 409). ``held``: open for writing (retrying helps only once it
    is closed); ``kept``: files a save landed on just after this write replaced them, left as saved (they
    may hold this write's change under the save: the one case where not all of it could be undone)."""

    code = "write_conflict"
    http_status = 409

    def __init__(self, path: str, *, held: bool = False, kept: Sequence[str] = ()) -> None:
        if held:
            cause = f"{path} is held open for writing by another program (an editor?)"
            retry = "try again once it is closed"
        else:
            cause, retry = f"{path} changed on disk while being written", "try again"
        if kept:
            names = ", ".join(kept)
            done = (
                f"nothing was committed, but {names} got a save from another program just after this write"
                f" replaced it: kept as saved, it may still hold this write's change under that save"
                f" (uncommitted; `remnic doctor` names a link left one-sided); check it, then {retry}"
            )
        else:
            done = f"nothing was written; {retry}"
        super().__init__(f"{cause}; {done}")
        self.path = path
        self.held = held
        self.kept = list(kept)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(path=self.path, reason="held" if self.held else "changed")
        if self.kept:
            out["kept"] = self.kept
        return out


class LockTimeoutError(RemnicError):
    code = "lock_timeout"
    http_status = 503


class LedgerError(RemnicError):
    """git refused or failed; the message carries git's own words."""

    code = "ledger_error"


class RemoteUnreachableError(LedgerError):
    """git could not fetch from or push to the remote: a wrong or moved URL, the network, credentials."""

    code = "remote_unreachable"
    http_status = 502


class PushRejectedError(LedgerError):
    """The remote refused the push for its own reasons (a hook, a protected branch), not because it moved."""

    code = "push_rejected"
    http_status = 409


class UncommittedChangesError(LedgerError):
    """A pull refused because the merge would overwrite files with uncommitted changes; nothing was merged."""

    code = "uncommitted_changes"
    http_status = 409


class RemoteMovedError(RemnicError):
    """A push refused because the remote has commits this repository does not have yet."""

    code = "remote_moved"
    http_status = 409


_JSON_KINDS = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
}


def by_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised while handling, a Ctrl-C (an extension module's import that the
    signal broke fails with ImportError "initialization failed"): to be raised as the interrupt it is,
    never taken for a damaged index or a missing package."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def json_kind(value: object) -> str:
    """How a JSON value is named in a message (``got null``, ``got an array``): what was read is JSON, so
    not Python's type names."""
    return "null" if value is None else _JSON_KINDS.get(type(value), type(value).__name__)
