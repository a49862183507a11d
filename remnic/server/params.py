"""Operation parameters: declared once (name, JSON type, bounds, options), checked by ``validate``
with every problem named by its field, and turned into the JSON Schema MCP clients see."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from remnic.errors import FieldProblem, ValidationError
from remnic.memfile.model import NAMESPACE_RE
from remnic.memfile.validate import strings_problems

_JSON_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    """JSON type: string, integer, number, boolean, array or object."""
    description: str
    required: bool = False
    options: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    min_length: int | None = None
    """The fewest characters a string may have (a required string has at least 1 without it)."""
    items: str | None = None
    """Element type of an array."""
    item_schema: Mapping[str, Any] | None = None
    """The elements' whole JSON Schema, advertised instead of ``{"type": items}`` (checked by the service)."""
    nullable: bool = False
    """null is a meaningful value (it clears something): advertised as ``["<kind>", "null"]``. An
    optional parameter's null is read as "not given" too, but its schema keeps the one type: clients
    that turn typed-in text into arguments by the schema's ``type`` (the MCP Inspector) and models'
    function-calling schemas take a single type only."""
    pattern: str | None = None
    """A regular expression the whole string must match (advertised as the JSON Schema ``pattern``)."""
    default: Any = None
    compat: bool = False
    """Accepted for compatibility with Remnic clients; has no effect here."""
    enforced_by: str | None = None
    """The service setting that enforces ``max_length`` (e.g. store.maxContentChars): the bound is
    advertised in the JSON Schema but left to the service's own check, so there is one limit with
    one message on every surface."""

    object_schema: Mapping[str, Any] | None = None
    """An object's ``properties``/``required``/``additionalProperties``, advertised (checked by the service)."""

    def schema(self) -> dict[str, Any]:
        null = self.nullable
        out: dict[str, Any] = {"type": [self.kind, "null"] if null else self.kind}
        out["description"] = self.description
        if self.options is not None:
            # An enum constrains every value, null included: list it or the type's null means nothing.
            out["enum"] = [*self.options, None] if null else list(self.options)
        if self.object_schema is not None:
            out.update(self.object_schema)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.max_length is not None:
            out["maxLength" if self.kind == "string" else "maxItems"] = self.max_length
        if self.min_length is not None:
            out["minLength"] = self.min_length
        elif self.kind == "string" and self.required:
            out["minLength"] = 1
        if self.pattern is not None:
            out["pattern"] = self.pattern
        if self.item_schema is not None:
            out["items"] = dict(self.item_schema)
        elif self.items is not None:
            out["items"] = {"type": self.items}
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    params: tuple[Param, ...] = ()
    write: bool = False
    tool: bool = True
    """Exposed as an MCP tool (remnic_<name>, remnic.<name>, engram.<name>)."""
    aliases: tuple[tuple[str, str], ...] = ()
    """(other name, parameter) pairs: the original Remnic's names for a parameter (``maxResults``)."""
    destructive: bool = False
    """A write that may take something out of use (review_disposition rejects a memory). Every other write
    only adds: a new file, a count raised, a status moved with the old file kept, all one revertible commit."""
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(p.name for p in self.params) + tuple(a for a, _ in self.aliases))

    def input_schema(self) -> dict[str, Any]:
        properties = {p.name: p.schema() for p in self.params}
        for alias, name in self.aliases:
            properties[alias] = {**properties[name], "description": f"same as {name} (the original Remnic's name)"}
            properties[alias].pop("default", None)
        return {
            "type": "object",
            "properties": properties,
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }


def _whole(value: Any, kind: str) -> Any:
    """5.0 as 5 where an integer is declared: JSON Schema's integer is any number with no fraction,
    and clients that hold every number as a float send them so."""
    if kind == "integer" and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _type_ok(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    if kind == "number" and isinstance(value, float) and not math.isfinite(value):
        return False
    return isinstance(value, _JSON_TYPES[kind])


def _coerce(value: str, kind: str) -> Any:
    """A query-string value as the declared type; unchanged when it does not parse (validation reports it)."""
    if kind == "integer":
        try:
            return int(value, 10)
        except ValueError:
            return value
    if kind == "number":
        try:
            return float(value)
        except ValueError:
            return value
    if kind == "boolean" and value.lower() in ("true", "1", "false", "0"):
        return value.lower() in ("true", "1")
    if kind == "array":  # comma-separated (no list item here may hold a comma: tags, statuses)
        return [item.strip() for item in value.split(",")] if value.strip() else []
    return value


def validate(op: Operation, args: Any, *, from_query: bool = False) -> dict[str, Any]:
    """The arguments with defaults filled in, or a ValidationError naming every bad field."""
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ValidationError.single("", f"arguments must be a JSON object, got {type(args).__name__}")
    problems: list[FieldProblem] = []
    out: dict[str, Any] = {}
    declared = {p.name: p for p in op.params}
    if op.aliases:
        args = dict(args)
        for alias, name in op.aliases:
            if alias in args:
                if args.get(name) is not None:
                    problems.append(FieldProblem(alias, f"is another name for {name}; give one of them"))
                args[name] = args.pop(alias)
    for key in args:
        if key not in declared:
            problems.append(FieldProblem(str(key), "unknown field", options=op.names or ("(none)",)))
    for p in op.params:
        if p.name not in args or args[p.name] is None:
            if p.required:
                problems.append(FieldProblem(p.name, f"is required ({p.description})"))
            elif p.default is not None:
                out[p.name] = p.default
            continue
        value = args[p.name]
        if from_query and isinstance(value, str):
            value = _coerce(value, p.kind)
        value = _whole(value, p.kind)
        if p.items is not None and isinstance(value, list):
            value = [_whole(item, p.items) for item in value]
        if not _type_ok(value, p.kind):
            problems.append(
                FieldProblem(
                    p.name,
                    f"must be {'an' if p.kind[0] in 'aio' else 'a'} {p.kind}, got {type(value).__name__} {value!r}"[
                        :200
                    ],
                )
            )
            continue
        problems += _check_bounds(p, value)
        # NUL and lone surrogates (what undecodable bytes become) in any string, nested ones included.
        problems += strings_problems(value, p.name)
        out[p.name] = value
    if problems:
        summary = (
            problems[0].describe() if len(problems) == 1 else f"request validation failed ({len(problems)} problems)"
        )
        raise ValidationError(summary, problems=problems)
    return out


def _number(x: float) -> str:
    """1000000, not 1e+06; 0.5 as it is."""
    return str(int(x)) if float(x).is_integer() else repr(x)


def _shown(value: Any) -> str:
    """A refused number as a person reads it: 1e+30, not the 31 digits 1e30 becomes as an integer."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        return f"{value:.6g}"
    return repr(value)


def _check_bounds(p: Param, value: Any) -> list[FieldProblem]:
    problems = []
    if p.options is not None and value not in p.options:
        problems.append(FieldProblem(p.name, f"unknown value {value!r}", options=[str(o) for o in p.options]))
    if p.minimum is not None and isinstance(value, (int, float)) and value < p.minimum:
        problems.append(FieldProblem(p.name, f"must be at least {_number(p.minimum)}, got {_shown(value)}"))
    if p.maximum is not None and isinstance(value, (int, float)) and value > p.maximum:
        problems.append(FieldProblem(p.name, f"must be at most {_number(p.maximum)}, got {_shown(value)}"))
    if p.kind == "string" and p.required and not value.strip():
        problems.append(FieldProblem(p.name, "must not be empty"))
    # Counted as stored: the service trims the text, so padding must not make a short note long enough.
    text = value.strip() if isinstance(value, str) else ""
    if p.min_length is not None and text and len(text) < p.min_length:
        trimmed = " once surrounding whitespace is trimmed" if text != value else ""
        problems.append(
            FieldProblem(p.name, f"has {len(text)} characters{trimmed}; at least {p.min_length} are needed")
        )
    if p.pattern is not None and isinstance(value, str) and value and not re.fullmatch(p.pattern, value):
        problems.append(FieldProblem(p.name, f"{value[:80]!r} does not match {p.pattern} ({p.description})"))
    if (
        p.max_length is not None
        and p.enforced_by is None
        and isinstance(value, (str, list))
        and len(value) > p.max_length
    ):
        unit = "characters" if isinstance(value, str) else "items"
        problems.append(FieldProblem(p.name, f"has {len(value)} {unit}; the limit is {p.max_length}"))
    if p.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            if not _type_ok(item, p.items):
                problems.append(FieldProblem(f"{p.name}[{i}]", f"must be a {p.items}, got {type(item).__name__}"))
    return problems


NAMESPACE = Param(
    "namespace",
    "string",
    "namespace to act on (default: the caller's own namespace, else the default); lowercase letters, digits, "
    "'-' and '_'",
    max_length=64,
    pattern=NAMESPACE_RE.pattern,
)
# Two disjoint character classes (no Python \w, which overlaps the non-ASCII class): a refused value
# fails in linear time, where IdRule's pattern backtracks exponentially on a long non-ASCII run.
_ID_CHAR = r"(?:[A-Za-z0-9_.:-]|[^\x00-\x7f\s])"
_PATH_CHAR = r"(?:[A-Za-z0-9_ .:-]|[^\x00-\x7f\s])"
MEMORY_REF = (
    rf"^[A-Za-z0-9](?:{_ID_CHAR}{{0,127}}|{_PATH_CHAR}*(?:/(?:[A-Za-z0-9_]|[^\x00-\x7f\s]){_PATH_CHAR}*)*\.md)$"
)
"""A memory id (what ``IdRule.pattern`` of remnic.memfile.schema admits) or a repository path of a memory
file (``decisions/x.md``), as the CLI and the Python API take: every path segment opens with a letter,
digit or ``_``, so none is ``..`` or hidden."""
MEMORY_ID = Param(
    "memoryId",
    "string",
    "the memory's id (frontmatter `id`), or its file's path in the repository (a recall result's `path`)",
    required=True,
    max_length=512,
    pattern=MEMORY_REF,
)
