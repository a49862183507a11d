"""The memory primitive: the record, parsing and serialising files, and the rule for remnic's own writes.

A memory file is YAML frontmatter between ``---`` lines (or TOML between ``+++``
lines, read as it is) followed by a markdown body. The body is kept byte-for-byte:
a metadata update rewrites only the frontmatter. Unknown keys are preserved, known
keys keep a stable order. A file is malformed only when its frontmatter does not
parse: the values in it are the user's, read by :mod:`.values`.

Values are written so that the original Remnic's line-by-line reader reads them
back: one line per scalar, string lists as ``["a", "b"]``, ``forgottenReason``
JSON-quoted, no wrapping.
"""

from __future__ import annotations

import math
import re
import secrets as _secrets
import time
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from datetime import time as clock_time
from typing import Any

import yaml

from remnic.errors import FieldProblem, MemoryFormatError

from .entity import in_entity_folder, is_entity_file
from .original import has_original_id, load_original_lines, read_like_original, written_by_original
from .paths import category_dir as category_dir
from .paths import category_for_path as category_for_path
from .paths import check_relpath as check_relpath
from .paths import is_memory_path as is_memory_path
from .paths import namespace_for_path
from .schema import (
    CATEGORIES,
    CONFIDENCE_TIERS,
    IMPORTANCE_LEVELS,
    KEY_ORDER,
    STATUSES,
    confidence_tier,
    importance_level,
)
from .schema import CATEGORY_DIRS as CATEGORY_DIRS
from .schema import DEFAULT_NAMESPACE as DEFAULT_NAMESPACE
from .schema import DIR_CATEGORIES as DIR_CATEGORIES
from .schema import ID_RE as ID_RE
from .schema import NAMESPACE_RE as NAMESPACE_RE
from .schema import NAMESPACES_DIR as NAMESPACES_DIR
from .schema import TAG_RE as TAG_RE
from .secrets import redact
from .slugs import make_slug
from .times import format_time as format_time
from .times import is_iso
from .times import now_iso as now_iso
from .times import parse_time as parse_time
from .values import (
    CREATED_KEYS,
    UPDATED_KEYS,
    aliases_of,
    category_of,
    confidence_of,
    first_of,
    hash_like,
    importance_of,
    own_id,
    record_id,
    status_of,
    tags_of,
    text_of,
)
from .values import content_hash as content_hash
from .values import original_hash as original_hash
from .values import provisional_id as provisional_id
from .yamlio import HANDLER as HANDLER
from .yamlio import HUGE_INT, DuplicateKey, HugeInt, HugeTomlInt, check_toml_int, huge_toml_int, top_key_at
from .yamlio import JSON_QUOTED as JSON_QUOTED
from .yamlio import Quoted as Quoted

# --- ids and slugs ---


def new_id() -> str:
    """``mem_`` + 12 hex of milliseconds + 8 random hex: sortable by creation, unique."""
    return f"mem_{int(time.time() * 1000):012x}{_secrets.token_hex(4)}"


def slugify(text: str, max_len: int = 60) -> str:
    """A readable file-name slug from the first words of a memory (Latin words in ASCII, other scripts'
    in their own letters: a Japanese memory gets a Japanese name, not "memory-7.md"; see :func:`make_slug`)."""
    text = redact(text, " ")  # a file name is in every listing and log: a password said in words stays out
    return make_slug(text, max_len)


# --- the record ---


@dataclass
class MemoryRecord:
    """One memory file: its frontmatter (the source of truth, unknown keys included) and body.

    ``body`` is the raw text after the frontmatter, exactly as on disk; ``content`` is that text
    stripped (a note that is only frontmatter: its title and description), which is what recall
    returns. The other properties read the frontmatter as :mod:`.values` does, never changing it.
    """

    path: str
    frontmatter: dict[str, Any]
    body: str
    namespace: str = DEFAULT_NAMESPACE

    @property
    def id(self) -> str:
        return record_id(self.frontmatter, self.path)

    @property
    def content(self) -> str:
        return text_of(self.frontmatter, self.body, self.path)

    @property
    def category(self) -> str:
        return category_of(self.frontmatter, self.path)

    @property
    def status(self) -> str:
        return status_of(self.frontmatter, self.path)

    @property
    def tags(self) -> list[str]:
        return tags_of(self.frontmatter, self.body, self.path)

    @property
    def aliases(self) -> list[str]:
        return aliases_of(self.frontmatter, self.body, self.path)

    @property
    def confidence(self) -> float:
        return confidence_of(self.frontmatter)

    @property
    def importance(self) -> float:
        return importance_of(self.frontmatter)

    @property
    def created(self) -> str | None:
        value = first_of(self.frontmatter, CREATED_KEYS)
        return str(value) if value is not None else None

    @property
    def updated(self) -> str | None:
        value = first_of(self.frontmatter, UPDATED_KEYS)
        return str(value) if value is not None else self.created

    @property
    def has_id(self) -> bool:
        """Whether the file names its own (usable) id."""
        return own_id(self.frontmatter) is not None

    @property
    def is_entity_file(self) -> bool:
        """An entity file in the original Remnic's own format (its id is its file name)."""
        return is_entity_file(self.path, self.frontmatter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "namespace": self.namespace,
            "category": self.category,
            "status": self.status,
            "content": self.content,
            "frontmatter": jsonable(self.frontmatter),
        }


def jsonable(value: Any) -> Any:
    """Frontmatter values made JSON-safe (YAML can hold dates, sets, bytes)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


# --- parse & serialize ---

_OPEN_RE = re.compile(r"\A(\ufeff)?(---|\+\+\+)[ \t]*\r?\n")
_CLOSE_RE = {
    "---": re.compile(r"^---[ \t]*\r?$\n?", re.MULTILINE),
    "+++": re.compile(r"^\+\+\+[ \t]*\r?$\n?", re.MULTILINE),
}


def front_kind(text: str) -> str | None:
    """``yaml`` (``---``), ``toml`` (``+++``, as Hugo writes it) or None for a file without frontmatter."""
    m = _OPEN_RE.match(text)
    return None if m is None else "toml" if m.group(2) == "+++" else "yaml"


def split_file(text: str) -> tuple[str | None, str, int]:
    """(frontmatter text or None, raw body, line number where the frontmatter starts)."""
    m = _OPEN_RE.match(text)
    if not m:
        return None, text, 0
    fence = m.group(2)
    close = _CLOSE_RE[fence].search(text, m.end())
    if not close:
        raise MemoryFormatError(
            "", [FieldProblem("frontmatter", f"opening '{fence}' has no closing '{fence}' line", line=1)]
        )
    return text[m.end() : close.start()], text[close.end() :], 2


_YAML_LINE = re.compile(
    r"""^(?:(?:"([^"\\\n]*)"|'([^'\n]*)'|([^\s\-?:,\[\]{}#&*!|>'"%@`](?:[^:#\r\n]|:(?=\S)|(?<=\S)#)*?))[ \t]*:"""
    r"(?:[ \t](.*))?|[ \t]+\S.*|-[ \t].*|(#.*|[ \t]*))\r?$"
)
"""One line of a frontmatter block: a key (bare or quoted) and its value (group 4), an indented or ``- ``
continuation, or a comment or blank line (group 5)."""
_OWN_ID = re.compile(r"mem_p?[0-9a-f]{12,32}|[a-z][a-z_]*-\d{10,16}-[a-z0-9]{4,8}")
"""The ids remnic writes (``mem_`` + hex) and the original's (``fact-1778750467412-q7kd``)."""
_OWN_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
"""A timestamp as remnic and the original write them (a time of day, not only a date as notes have)."""
_OWN_TIME_KEYS = frozenset({"created", "updated", "validAt", "invalidAt", "supersededAt", "archivedAt", "forgottenAt"})


def _yaml_key(m: re.Match[str]) -> str | None:
    return m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)


def _own_pair(key: str, raw: str | None) -> bool:
    """Whether ``key: raw`` is a pair remnic's own frontmatter could hold, value included: ``status:
    draft`` or ``created: 2024-05-01`` in a note's header is no evidence of a lost fence."""
    value = re.sub(r"[ \t]+#.*", "", (raw or "").strip())
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    if key == "id":
        return _OWN_ID.fullmatch(value) is not None
    if key == "category":
        return value in CATEGORIES
    if key == "status":
        return value in STATUSES
    return key in _OWN_TIME_KEYS and _OWN_TIME.fullmatch(value) is not None


_NEAR_FENCE = re.compile(r"[ \t]*(?:(?:-[ \t]*){2,}|[\u2013\u2014][-\u2013\u2014 \t]*)\r?")
"""A mistyped opening fence: ``--``, ``----``, ``- - -``, an editor's dash (``—``), or ``---`` indented."""
_HEADING = re.compile(r"#{1,6}[ \t]+\S.*")
"""A Markdown ATX heading (``# Title``); YAML reads it as a comment, which remnic never writes."""


def mistyped_fence(text: str) -> bool:
    """Whether the file's first non-blank line is a near-fence (``----``, ``- - -``, ``—``): the fix for a
    :func:`lost_open_fence` file is then to replace that line, not to add one."""
    first = next((line for line in text.removeprefix("\ufeff").split("\n") if line.strip()), "")
    return _NEAR_FENCE.fullmatch(first) is not None


def lost_open_fence(text: str) -> bool:
    """Whether a file without frontmatter is one whose opening ``---`` line was deleted, blanked or mistyped
    (``----``, ``- - -``): every line up to a lone ``---`` is a YAML key, continuation, comment or blank
    line, the first that is none of the last two a key, and the keys show it is remnic's own frontmatter:
    an ``id`` of remnic's or the original's shape, or two of ``category``, ``status`` and the timestamps
    with values remnic writes. Without the fence its keys would be read as body text and the file adopted
    again under a new id; a note opening with ``status: draft`` or ``Title: x`` above a rule, or with
    prose before it, is a note. A note's ``# Heading`` first is a note unless an ``id`` of remnic's shape
    follows (a comment a user put under the fence now opening the file): two pairs are not enough there."""
    lines = text.removeprefix("\ufeff").split("\n")
    first = lines[0]
    if _YAML_LINE.match(first) is None and _NEAR_FENCE.fullmatch(first) is None:
        return False  # cheap: most notes open with prose
    close = _CLOSE_RE["---"].search(text.removeprefix("\ufeff"))
    if close is None:
        return False
    block = text.removeprefix("\ufeff")[: close.start()].splitlines()
    lead = next((i for i, line in enumerate(block) if line.strip()), len(block))
    heading = False
    if lead < len(block) and _NEAR_FENCE.fullmatch(block[lead]) is not None:
        del block[lead]
    elif lead < len(block):
        heading = _HEADING.fullmatch(block[lead].rstrip("\r")) is not None
    matches = [_YAML_LINE.match(line) for line in block]
    if not all(matches):
        return False
    keyed = [(key, m.group(4)) for m in matches if m is not None and (key := _yaml_key(m)) is not None]
    opening = next((m for m in matches if m is not None and m.group(5) is None), None)
    if opening is None or _yaml_key(opening) is None:  # a list first: no frontmatter block
        return False
    own = {key for key, value in keyed if _own_pair(key, value)}
    return "id" in own or (not heading and len(own) >= 2)


_PLACEHOLDER_RE = re.compile(r"\{\{[^{}\n]{1,60}\}\}")
"""A note template's placeholder (Obsidian's ``{{date}}``, Templater's ``{{title}}``)."""


def _load_yaml(fm_text: str, path: str, first_line: int) -> Any:
    try:
        return HANDLER.load(fm_text)
    except DuplicateKey as exc:
        line = first_line + exc.problem_mark.line
        problem = f"duplicate key (first on line {first_line + exc.first_line}); YAML keeps one value, so keep one"
        raise MemoryFormatError(path, [FieldProblem(exc.key, problem, path=path, line=line)]) from None
    except HugeInt as exc:
        key, line = top_key_at(fm_text, exc.problem_mark.line), first_line + exc.problem_mark.line
        huge = FieldProblem(key or "frontmatter", f"invalid YAML: {exc.problem}", path=path, line=line)
        raise MemoryFormatError(path, [huge]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        context = getattr(exc, "context_mark", None)
        field = "frontmatter"
        if context is not None and "flow" in str(getattr(exc, "context", "")):
            mark = context  # an unclosed [ or {: the line where it opened is the one to fix
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if context is not None and "quoted scalar" in str(getattr(exc, "context", "")):
            mark = context  # an unclosed quote: YAML notices only at the end; the line it opened on is the one to fix
            lines = fm_text.splitlines()
            opened = lines[mark.line] if mark.line < len(lines) else ""
            quote = opened[mark.column : mark.column + 1] or '"'
            problem = f"a quoted value is never closed (its closing {quote} is missing)"
            field = top_key_at(fm_text, mark.line) or field
        line = first_line + mark.line if mark is not None else first_line
        placeholder = _PLACEHOLDER_RE.search(fm_text)
        if placeholder is not None:  # a note template (Obsidian's {{date}}): YAML's own words would not say so
            line = first_line + fm_text.count("\n", 0, placeholder.start())
            problem = (
                f"a template placeholder `{placeholder.group(0)}` is not YAML; exclude templates with "
                'store.exclude, e.g. "Templates/**"'
            )
            raise MemoryFormatError(path, [FieldProblem("frontmatter", problem, path=path, line=line)]) from None
        raise MemoryFormatError(path, [FieldProblem(field, f"invalid YAML: {problem}", path=path, line=line)]) from None
    except RecursionError:
        raise MemoryFormatError(
            path, [FieldProblem("frontmatter", "nested too deeply to read", path=path, line=first_line)]
        ) from None


def _toml_value(value: Any, key: str | None = None) -> Any:
    """TOML dates and times as the strings they were written as (frontmatter values stay JSON-able)."""
    if isinstance(value, dict):
        return {k: _toml_value(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_toml_value(v, key) for v in value]
    check_toml_int(value, key)
    if isinstance(value, (datetime, date, clock_time)):
        return value.isoformat().replace("+00:00", "Z")
    return value


def _load_toml(fm_text: str, path: str, first_line: int) -> Any:
    try:
        return _toml_value(tomllib.loads(fm_text))
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        line = first_line + int(m.group(1)) - 1 if m else first_line
        raise MemoryFormatError(
            path, [FieldProblem("frontmatter", f"invalid TOML: {str(exc).split(' (at')[0]}", path=path, line=line)]
        ) from None
    except ValueError as exc:  # an integer past Python's digit limit: tomllib's refusal names no key, ours does
        if not isinstance(exc, HugeTomlInt) and "digits" not in str(exc):
            raise
        field, row = huge_toml_int(fm_text, exc.key if isinstance(exc, HugeTomlInt) else None)
        problem = FieldProblem(field, f"invalid TOML: {HUGE_INT}", path=path, line=first_line + row)
        raise MemoryFormatError(path, [problem]) from None


def parse_file(text: str, path: str) -> MemoryRecord:
    """Parse a memory file; MemoryFormatError (naming path, line and field) only when its frontmatter
    does not parse as YAML (or TOML) mapping. The values in it are never refused."""
    try:
        fm_text, body, first_line = split_file(text)
    except MemoryFormatError as exc:
        raise MemoryFormatError(
            path, [FieldProblem(p.field, p.message, path=path, line=p.line) for p in exc.problems]
        ) from None
    meta: dict[str, Any] = {}
    if fm_text is not None and fm_text.strip():
        kind = front_kind(text)
        try:
            loaded = _load_toml(fm_text, path, first_line) if kind == "toml" else _load_yaml(fm_text, path, first_line)
        except MemoryFormatError:
            by_lines = written_by_original(fm_text, path) or in_entity_folder(path)  # only where YAML fails
            loaded = load_original_lines(fm_text) if kind == "yaml" and by_lines else None
            if loaded is None:
                raise
        else:
            if kind == "yaml" and isinstance(loaded, dict) and written_by_original(fm_text, path):
                loaded = read_like_original(fm_text, loaded)
        if loaded is not None and not isinstance(loaded, dict):
            raise MemoryFormatError(
                path, [FieldProblem("frontmatter", "must be a mapping of key: value lines", path=path, line=first_line)]
            )
        problem = _shape_problem(loaded)
        if problem:
            raise MemoryFormatError(path, [FieldProblem("frontmatter", problem, path=path, line=first_line)])
        meta = dict(loaded or {})
    return MemoryRecord(path=path, frontmatter=meta, body=body, namespace=namespace_for_path(path))


MAX_NESTING = 16
MAX_VALUES = 10_000


def _shape_problem(value: Any) -> str | None:
    """Why loaded frontmatter cannot be handled safely: a recursive YAML alias, absurd nesting, or
    aliases that expand to a huge document ("billion laughs") once written back or indexed."""
    sizes: dict[int, int] = {}

    def walk(node: Any, depth: int, ancestors: set[int]) -> int:
        if not isinstance(node, (dict, list)):
            return 1
        key = id(node)
        if key in ancestors:
            raise ValueError("contains a recursive YAML alias (an anchor that refers to itself)")
        if key in sizes:
            return sizes[key]
        if depth > MAX_NESTING:
            raise ValueError(f"is nested more than {MAX_NESTING} levels deep")
        ancestors.add(key)
        total = 1
        for child in node.values() if isinstance(node, dict) else node:
            total += walk(child, depth + 1, ancestors)
            if total > MAX_VALUES:
                raise ValueError(f"expands to more than {MAX_VALUES} values (YAML aliases?)")
        ancestors.discard(key)
        sizes[key] = total
        return total

    try:
        walk(value, 0, set())
    except ValueError as exc:
        return str(exc)
    return None


def serialize(meta: Mapping[str, Any], body: str) -> str:
    """The file text for frontmatter + raw body. Known keys first, in KEY_ORDER. A file with the original's
    id gets no ``key: null`` line (that file's plain ``null`` reads as the text "null"): a null is left out."""
    ordered = order_keys(meta)
    if has_original_id(ordered):
        ordered = {k: v for k, v in ordered.items() if v is not None}
    if not ordered:
        return body
    return "---\n" + HANDLER.export(ordered) + "\n---\n" + body


def order_keys(meta: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: meta[k] for k in KEY_ORDER if k in meta}
    out.update((k, v) for k, v in meta.items() if k not in out)
    return out


def body_for(content: str) -> str:
    """The raw body written for new content: one blank line after the frontmatter, newline at end."""
    return "\n" + content.strip() + "\n"


def _line_of(text: str, key: str, first_line: int) -> int | None:
    for i, line in enumerate(text.splitlines()):
        if line.startswith(f"{key}:"):
            return first_line + i
    return first_line or None


def validate_frontmatter(
    meta: Mapping[str, Any],
    *,
    path: str | None = None,
    text: str = "",
    first_line: int = 0,
) -> list[FieldProblem]:
    """remnic's own rule for the values it writes (store, import, update): types and vocabulary of known
    keys; unknown keys are allowed as they are. Files are never held to it (see :func:`parse_file`)."""
    problems: list[FieldProblem] = []

    def bad(key: str, message: str, options: Iterable[str] | None = None) -> None:
        problems.append(
            FieldProblem(
                key,
                message,
                path=path,
                line=_line_of(text, key, first_line),
                options=tuple(options) if options else None,
            )
        )

    if "id" in meta and not (isinstance(meta["id"], str) and ID_RE.match(meta["id"])):
        bad("id", f"{meta['id']!r} is not a valid id ({ID_RE.rule})")
    if "category" in meta and not (isinstance(meta["category"], str) and meta["category"] in CATEGORIES):
        bad("category", f"unknown category {meta['category']!r}", CATEGORIES)
    if "status" in meta and not (isinstance(meta["status"], str) and meta["status"] in STATUSES):
        bad("status", f"unknown status {meta['status']!r}", STATUSES)
    for key in ("confidence", "importanceScore"):
        if key in meta:
            value = meta[key]
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                bad(key, f"must be a number from 0 to 1, got {value!r}")
            elif not 0.0 <= value <= 1.0:
                bad(key, f"must be from 0 to 1, got {value!r}")
    if "confidenceTier" in meta and not (
        isinstance(meta["confidenceTier"], str) and meta["confidenceTier"] in {t for _, t in CONFIDENCE_TIERS}
    ):
        bad("confidenceTier", f"unknown tier {meta['confidenceTier']!r}", [t for _, t in CONFIDENCE_TIERS])
    if "importanceLevel" in meta and not (
        isinstance(meta["importanceLevel"], str) and meta["importanceLevel"] in {t for _, t in IMPORTANCE_LEVELS}
    ):
        bad("importanceLevel", f"unknown level {meta['importanceLevel']!r}", [t for _, t in IMPORTANCE_LEVELS])
    for key in ("tags", "links", "supersedes"):
        if key in meta and meta[key] is not None:
            value = meta[key]
            if key == "supersedes" and isinstance(value, str):
                continue
            if key == "links" and isinstance(value, list) and all(isinstance(x, Mapping) for x in value):
                continue  # the original Remnic's link objects
            if not isinstance(value, list) or not all(isinstance(x, (str, int)) for x in value):
                bad(key, "must be a list of strings, e.g. [a, b]")
    for key in ("created", "updated", "supersededAt", "validAt", "invalidAt", "forgottenAt"):
        if key in meta and meta[key] is not None:
            value = meta[key]
            if not is_iso(value):
                bad(key, f"must be an ISO 8601 timestamp like 2026-04-20T17:30:00.000Z, got {value!r}")
    for key in ("entityRef", "sourceTurnId", "episodeId", "supersededBy", "source", "contentHash"):
        if key in meta and meta[key] is not None and not isinstance(meta[key], (str, int)):
            bad(key, f"must be a string, got {type(meta[key]).__name__}")
    if "reinforcement_count" in meta and (
        not isinstance(meta["reinforcement_count"], int)
        or isinstance(meta["reinforcement_count"], bool)
        or meta["reinforcement_count"] < 0
    ):
        bad("reinforcement_count", f"must be a non-negative integer, got {meta['reinforcement_count']!r}")
    return problems


def derived_fields(meta: Mapping[str, Any], body: str) -> dict[str, Any]:
    """Keys remnic keeps in step after one of its own writes: a tier it wrote (one of its tier names)
    follows its score, and ``contentHash`` follows the text in the spelling the file uses (the
    original's bare hex when there is none). A user's own tier word is left alone."""
    out: dict[str, Any] = {}
    for score_key, tier_key, tier_of, tiers in (
        ("confidence", "confidenceTier", confidence_tier, CONFIDENCE_TIERS),
        ("importanceScore", "importanceLevel", importance_level, IMPORTANCE_LEVELS),
    ):
        score = meta.get(score_key)
        if (
            isinstance(score, (int, float))
            and not isinstance(score, bool)
            and meta.get(tier_key, tiers[0][1]) in {name for _, name in tiers}
        ):
            out[tier_key] = tier_of(float(score))
    text = text_of(meta, body, "")
    fresh = hash_like(meta.get("contentHash"), text)
    if fresh is not None:
        out["contentHash"] = fresh
    return out
