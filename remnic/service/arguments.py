"""Argument checks at the service boundary.

A caller's wrong type or value (``get(None)``, ``limit=-1``, a lone surrogate in a query) becomes
a :class:`ValidationError` naming the argument before any layer below sees it: otherwise it
surfaces as a builtin error from deep inside (or, in recall, looks like a damaged index).
"""

from __future__ import annotations

import functools
import inspect
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from remnic.config import CEILINGS
from remnic.errors import RemnicError, ValidationError
from remnic.memfile.validate import normalize_tags, text_problems
from remnic.memfile.values import tag_key

T = TypeVar("T")

CLOSED_MESSAGE = "this Memory is closed; open a new one with Memory.open(...)"


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


def text(value: object, name: str) -> str:
    """A string holding no lone surrogate, which no file, index or response can encode (a NUL is
    left to the writes, which refuse it: a query may hold one)."""
    if not isinstance(value, str):
        raise ValidationError.single(name, f"must be a string, got {_kind(value)}")
    problems = text_problems(value.replace("\x00", " "), name)  # same length: the offset still holds
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)
    return value


def optional_text(value: object, name: str) -> str | None:
    return None if value is None else text(value, name)


def reference(value: object, name: str = "id") -> str:
    """A memory id or a repo-relative memory file path: a non-empty string."""
    ref = text(value, name)
    if not ref.strip():
        raise ValidationError.single(name, "must be a memory id or a memory file path, got an empty string")
    return ref


def count(value: object, name: str, *, minimum: int = 0) -> int:
    """A whole number of at least ``minimum`` (a negative one would silently slice from the end)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        want = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
        raise ValidationError.single(name, f"must be {want}, got {value!r}")
    return value


TOP_K_MAX = CEILINGS["recall.topK"]
"""The most results one recall may ask for, as the CLI and ``recall.topK`` allow: tantivy sizes its
top-k heap by it, and a larger one aborts the process with an allocation failure."""


def top_k(value: object, name: str = "top_k") -> int | None:
    """None (the setting) or a whole number from 1 to :data:`TOP_K_MAX`."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= TOP_K_MAX:
        raise ValidationError.single(name, f"must be from 1 to {TOP_K_MAX}, got {value!r}")
    return value


def query(value: object, name: str = "query") -> str:
    """A recall query: text that is not empty or blank."""
    if not text(value, name).strip():
        raise ValidationError.single(name, "must not be empty or blank")
    assert isinstance(value, str)
    return value


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(value: object, name: str) -> str | None:
    """None, or text of one line without control characters (a code kept as one frontmatter value)."""
    if value is None:
        return None
    found = _CONTROL.search(text(value, name))
    if found:
        raise ValidationError.single(
            name, f"must be one line without control characters, got {found.group()!r} at offset {found.start()}"
        )
    assert isinstance(value, str)
    return value


UPDATE_OPERATIONS = ("update", "forget", "review", "feedback", "citation")
"""What a change of one memory's frontmatter may be recorded as (``Remnic-Operation``): the timeline,
history and space checks read it, so it names one of remnic's own operations."""

TRAILER_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
"""A git trailer token: letters, digits and hyphens (anything else ends the trailer block for git)."""
OWN_TRAILERS = ("Operation", "Memory-Id", "Memory-Count", "Namespace", "Source")
"""Trailers every write sets itself; an extra one of the same name would contradict them."""


def operation(value: object, name: str = "operation") -> str:
    if not isinstance(value, str) or value not in UPDATE_OPERATIONS:
        raise ValidationError.single(name, f"unknown operation {value!r}", options=UPDATE_OPERATIONS)
    return value


def trailers(value: object, name: str = "extra_trailers") -> dict[str, str] | None:
    """Extra commit trailers (``Remnic-`` is prefixed): each key a git trailer token that no standard
    trailer has, each value a string (its newlines are folded into the one trailer line)."""
    if value is None:
        return None
    out: dict[str, str] = {}
    for key, item in mapping(value, name).items():
        if not isinstance(key, str) or not TRAILER_KEY.fullmatch(key):
            raise ValidationError.single(
                name,
                f"key {key!r} is not a git trailer token (letters, digits and hyphens, starting with a letter or digit)",
            )
        if key.casefold() in {k.casefold() for k in OWN_TRAILERS}:
            raise ValidationError.single(
                name, f"key {key!r} is a trailer every write sets itself", options=OWN_TRAILERS
            )
        out[key] = text(item, f"{name}[{key!r}]")
    return out


def changes_tags(changes: Mapping[str, Any]) -> Mapping[str, Any]:
    """``changes`` with its ``tags`` held to the rule store and import apply: strings (numbers become
    strings), stripped, once each; a comma-separated string is a list."""
    tags = changes.get("tags")
    if tags is None or not isinstance(tags, (str, list, tuple)):
        return changes  # a removal, or a value the update's own check refuses by name
    normal, problems = normalize_tags(tags)
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)
    return {**changes, "tags": normal}


def choice(value: object, name: str, options: Sequence[str]) -> str | None:
    """None (no filter) or one of ``options``."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in options:
        raise ValidationError.single(name, f"unknown {name} {value!r}", options=options)
    return value


def tag_filter(value: object, name: str = "tag") -> str | None:
    """A tag to filter by, folded as recall's tag filter compares tags (``tag_key``: no leading '#', NFC,
    case-folded); None or '' is no filter."""
    if value is None or value == "":
        return None
    tag = text(value, name).strip().lstrip("#").strip()
    if not tag:
        raise ValidationError.single(name, f"{value!r} names no tag")
    return tag_key(tag)


def has_tag(tags: Iterable[str], wanted: str | None) -> bool:
    return wanted is None or any(tag_key(t) == wanted for t in tags)


def mapping(value: object, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValidationError.single(name, f"must be a mapping (a dict), got {_kind(value)}")
    return value


def optional_mapping(value: object, name: str) -> Mapping[str, Any] | None:
    return None if value is None else mapping(value, name)


def import_items(items: object, line_numbers: object) -> tuple[list[Any], list[int] | None]:
    """An import batch as a list (each item is checked by the import itself, naming its line) and its
    line numbers, one per item."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise ValidationError.single("items", f"must be a list of JSON objects (one per memory), got {_kind(items)}")
    batch = list(items)
    if line_numbers is None:
        return batch, None
    if isinstance(line_numbers, (str, bytes)) or not isinstance(line_numbers, Iterable):
        raise ValidationError.single("line_numbers", f"must be a list of integers, got {_kind(line_numbers)}")
    numbers = list(line_numbers)
    if len(numbers) != len(batch) or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise ValidationError.single(
            "line_numbers", f"must be one integer per item ({len(batch)}), got {len(numbers)} value(s)"
        )
    return batch, numbers


def where(value: object, name: str = "path") -> str | os.PathLike[str] | None:
    """A directory argument of ``Memory.open``/``Memory.init``: a path, or None to discover it."""
    if value is None or isinstance(value, (str, os.PathLike)):
        return value
    raise ValidationError.single(name, f"must be a path (str or os.PathLike) or None, got {_kind(value)}")


def subdirectory_note(root: Path, outer: Path) -> str:
    return f"{root} is inside the memory repository {outer}, not a memory repository itself: open {outer}"


# --- every public method: a closed handle, and its text arguments ---


def guard(cls: type[T], exempt: Collection[str]) -> type[T]:
    """Wrap every public method of ``cls`` (its mixins' too) so that it refuses a closed handle,
    checks each argument annotated ``str`` (or ``str | None``) with :func:`text`, and refuses a
    string for an argument annotated as a list (``Sequence[str]``…), which would be read one
    character at a time (``statuses="active"`` as the statuses a, c, t…). A refusal from inside names
    the method's own keyword (``reason_code``) where the service named the request's field
    (``reasonCode``); the server names the request's fields again (:func:`request_names`).

    One check in one place rather than a line in every method. A closed Memory would otherwise
    reopen its index and restart its indexer thread lazily, and work queued then is abandoned at
    exit. The flag is ``_released``, set at the very end of ``close()``, so a background pass
    that close() waits for still finishes."""
    done: set[str] = set()
    for klass in cls.__mro__[:-1]:
        for name, value in vars(klass).items():
            if name.startswith("_") or name in exempt or name in done or not inspect.isfunction(value):
                continue
            done.add(name)
            setattr(cls, name, _guarded(value))
    return cls


_LISTS = ("Sequence[", "Iterable[", "Collection[", "list[", "tuple[")


def _kind_of(note: str) -> str | None:
    """How a parameter with this annotation is checked: as text, as a list (a string is refused), or not."""
    if note in ("str", "str | None"):
        return "text"
    parts = [part.strip() for part in _top_level_union(note)]
    if "str" not in parts and any(part.startswith(_LISTS) for part in parts):
        return "list"
    return None


def _top_level_union(note: str) -> list[str]:
    """The members of ``A[x | y] | B`` outside brackets: ``A[x | y]``, ``B``."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(note):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "|" and depth == 0:
            parts.append(note[start:i])
            start = i + 1
    return [*parts, note[start:]]


def _checked_params(method: Callable[..., Any]) -> list[tuple[int | None, str, bool, str]]:
    """(position or None if keyword-only, name, None allowed, kind) of each parameter checked here."""
    out: list[tuple[int | None, str, bool, str]] = []
    params = list(inspect.signature(method).parameters.values())[1:]  # without self
    for i, p in enumerate(params):
        note = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
        kind = _kind_of(note)
        if kind is not None:
            positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            out.append((i if positional else None, p.name, note != "str", kind))
    return out


def not_a_string(value: object, name: str) -> None:
    """Refuse a string (or bytes) where a list of values is wanted."""
    if isinstance(value, (str, bytes)):
        shown = repr(value[:40])
        raise ValidationError.single(name, f"must be a list, got the string {shown} (for one value pass [{shown}])")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _python_names(method: Callable[..., Any]) -> dict[str, str]:
    """The field a refusal inside ``method`` may name as a request spells it (``reasonCode``), and the
    method's keyword for it (``reason_code``); a ``memory_id`` is resolved by :meth:`Memory.memory_id`,
    whose own parameter is ``id_or_path``."""
    params = list(inspect.signature(method).parameters)[1:]
    names = {_camel(p): p for p in params if "_" in p}
    if "memory_id" in params and "id_or_path" not in params:
        names["id_or_path"] = "memory_id"
    for field, keyword in _SPELLED_OTHERWISE:
        if keyword in params and field not in params:
            names[field] = keyword
    return names


# Request fields spelled otherwise than the Python keyword, not just in case (the seed's routes name them).
_SPELLED_OTHERWISE = (("date", "day"), ("to", "to_space"))


def rename_fields(exc: ValidationError, names: Mapping[str, str]) -> ValidationError:
    """``exc`` with each problem's field (or the head of ``field.key`` / ``field[i]``) renamed by ``names``,
    and its message with it when the message is its one problem's: the caller's surface names what the
    caller gave (a Python keyword, a request field). Changed in place, so the traceback stays."""
    for problem in exc.problems:
        head = re.split(r"[.\[]", problem.field, maxsplit=1)[0]
        if head not in names:
            continue
        before = problem.describe()
        problem.field = names[head] + problem.field[len(head) :]
        if exc.message == before or exc.message.startswith(f"{head}: "):
            message = problem.describe() if exc.message == before else names[head] + exc.message[len(head) :]
            exc.message, exc.args = message, (message, *exc.args[1:])
    return exc


def request_names(exc: ValidationError, fields: Iterable[str]) -> ValidationError:
    """``exc`` naming each of ``fields`` (a request's camelCase fields) where the service named the Python
    keyword for it (``reason_code`` for ``reasonCode``): the reverse of what :func:`guard` does."""
    fields = set(fields)
    names = {python: field for field in fields if (python := _snake(field)) != field}
    names.update((keyword, field) for field, keyword in _SPELLED_OTHERWISE if field in fields)
    return rename_fields(exc, names)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    checked = _checked_params(method)
    python_names = _python_names(method)

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("_released"):
            raise RemnicError(CLOSED_MESSAGE)
        for at, name, optional, kind in checked:
            if at is not None and at < len(args):
                value = args[at]
            elif name in kwargs:
                value = kwargs[name]
            else:
                continue  # the default
            if kind == "list":
                not_a_string(value, name)
            elif value is not None or not optional:
                text(value, name)
        try:
            return method(self, *args, **kwargs)
        except ValidationError as exc:
            # The service names a field as requests spell it (reasonCode); a Python caller gave a keyword.
            rename_fields(exc, python_names)
            raise

    return call
