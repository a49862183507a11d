"""The memory primitive: records, the frontmatter schema, parsing and validation.

A memory file is YAML frontmatter between ``---`` lines followed by a markdown
body. The body is kept byte-for-byte: a metadata update rewrites only the
frontmatter. Unknown keys are preserved, known keys keep a stable order.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets as _secrets
import time
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from remnic.errors import FieldProblem, MemoryFormatError, ValidationError

CATEGORIES: tuple[str, ...] = (
    "fact",
    "preference",
    "correction",
    "entity",
    "decision",
    "relationship",
    "principle",
    "commitment",
    "moment",
    "skill",
    "rule",
    "procedure",
    "reasoning_trace",
)
CATEGORY_DIRS: dict[str, str] = {
    "fact": "facts",
    "preference": "preferences",
    "correction": "corrections",
    "entity": "entities",
    "decision": "decisions",
    "relationship": "relationships",
    "principle": "principles",
    "commitment": "commitments",
    "moment": "moments",
    "skill": "skills",
    "rule": "rules",
    "procedure": "procedures",
    "reasoning_trace": "reasoning-traces",
}
DIR_CATEGORIES: dict[str, str] = {v: k for k, v in CATEGORY_DIRS.items()}
STATUSES: tuple[str, ...] = (
    "active",
    "pending_review",
    "rejected",
    "quarantined",
    "superseded",
    "archived",
    "forgotten",
)
CONFIDENCE_TIERS: tuple[tuple[float, str], ...] = (
    (0.95, "explicit"),
    (0.70, "implied"),
    (0.40, "inferred"),
    (0.0, "speculative"),
)
IMPORTANCE_LEVELS: tuple[tuple[float, str], ...] = (
    (0.90, "critical"),
    (0.70, "high"),
    (0.40, "normal"),
    (0.20, "low"),
    (0.0, "trivial"),
)
DEFAULT_NAMESPACE = "default"
NAMESPACES_DIR = "namespaces"

# Known keys in the order they are written; unknown keys follow in their own order.
KEY_ORDER: tuple[str, ...] = (
    "id",
    "category",
    "created",
    "updated",
    "source",
    "confidence",
    "confidenceTier",
    "tags",
    "status",
    "importanceScore",
    "importanceLevel",
    "supersedes",
    "supersededBy",
    "supersededAt",
    "validAt",
    "invalidAt",
    "entityRef",
    "links",
    "episodeId",
    "sourceTurnId",
    "contentHash",
    "reinforcement_count",
    "forgottenAt",
    "forgottenReason",
)

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
NAMESPACE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
TAG_RE = re.compile(r"^[^\s,][^,\n]{0,63}$")
_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


# --- YAML: keep timestamps as strings so a rewrite never changes their spelling ---

# libyaml's C loader/emitter when present: byte-identical output, ~10x faster on large repos.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Loader(_SafeLoader):  # type: ignore[misc, valid-type]
    pass


class _Dumper(_SafeDumper):  # type: ignore[misc, valid-type]
    pass


def _without_timestamps(cls: type) -> None:
    cls.yaml_implicit_resolvers = {  # type: ignore[attr-defined]
        ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


_without_timestamps(_Loader)
_without_timestamps(_Dumper)


def _represent_list(dumper: Any, data: list) -> yaml.Node:
    # Short scalar lists (tags, links) read best inline: tags: [ops, release]
    flow = all(isinstance(x, (str, int, float, bool)) and len(str(x)) < 60 for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _represent_str(dumper: Any, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(str, _represent_str)


class _Handler(YAMLHandler):
    def load(self, fm: str, **kwargs: object) -> Any:
        return yaml.load(fm, Loader=_Loader)

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        return yaml.dump(
            metadata,
            Dumper=_Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=100,
        ).strip()


HANDLER = _Handler()


# --- time, ids, hashes ---


def now_iso() -> str:
    """UTC now as ``2026-04-20T17:30:00.000Z`` (the spelling JavaScript's toISOString uses)."""
    return format_time(time.time())


def format_time(epoch_s: float) -> str:
    dt = datetime.fromtimestamp(epoch_s, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_time(value: Any) -> float | None:
    """Epoch seconds from an ISO-ish string, or None when it cannot be read."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace("Z", "+00:00")
    if " " in text and "T" not in text:
        text = text.replace(" ", "T", 1)
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def new_id() -> str:
    """``mem_`` + 12 hex of milliseconds + 8 random hex: sortable by creation, unique."""
    return f"mem_{int(time.time() * 1000):012x}{_secrets.token_hex(4)}"


def provisional_id(path: str) -> str:
    """The id a file without one gets: derived from its path, so it is stable until sync writes it."""
    return "mem_p" + hashlib.sha1(path.encode("utf-8")).hexdigest()[:19]


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def confidence_tier(confidence: float) -> str:
    for floor, name in CONFIDENCE_TIERS:
        if confidence >= floor:
            return name
    return "speculative"


def importance_level(score: float) -> str:
    for floor, name in IMPORTANCE_LEVELS:
        if score >= floor:
            return name
    return "trivial"


def slugify(text: str, max_len: int = 60) -> str:
    """A readable file-name slug from the first words of a memory (ASCII when the text has any,
    else its own letters: a Japanese memory gets a Japanese name, not "memory-7.md")."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    if not words:
        words = [w for w in re.findall(r"\w+", unicodedata.normalize("NFC", text).lower()) if w != "_"]
        max_len = min(max_len, 30)
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > max_len:
            break
        slug = candidate
    return slug or (words[0][:max_len] if words else "memory")


# --- the record ---


@dataclass
class MemoryRecord:
    """One memory file: its frontmatter (the source of truth, unknown keys included) and body.

    ``body`` is the raw text after the frontmatter, exactly as on disk;
    ``content`` is that text stripped, which is what recall returns.
    """

    path: str
    frontmatter: dict[str, Any]
    body: str
    namespace: str = DEFAULT_NAMESPACE

    @property
    def id(self) -> str:
        value = self.frontmatter.get("id")
        return str(value) if value else provisional_id(self.path)

    @property
    def content(self) -> str:
        return self.body.strip()

    @property
    def category(self) -> str:
        value = self.frontmatter.get("category")
        return str(value) if value else category_for_path(self.path)

    @property
    def status(self) -> str:
        return str(self.frontmatter.get("status") or "active")

    @property
    def tags(self) -> list[str]:
        tags = self.frontmatter.get("tags") or []
        return [str(t) for t in tags] if isinstance(tags, list) else []

    @property
    def confidence(self) -> float:
        return _num(self.frontmatter.get("confidence"), 0.9)

    @property
    def importance(self) -> float:
        return _num(self.frontmatter.get("importanceScore"), 0.5)

    @property
    def created(self) -> str | None:
        value = self.frontmatter.get("created")
        return str(value) if value is not None else None

    @property
    def updated(self) -> str | None:
        value = self.frontmatter.get("updated") or self.frontmatter.get("created")
        return str(value) if value is not None else None

    @property
    def has_id(self) -> bool:
        return bool(self.frontmatter.get("id"))

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


def _num(value: Any, default: float) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return default


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


# --- paths ---


def namespace_for_path(path: str) -> str:
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        return parts[1]
    return DEFAULT_NAMESPACE


def category_for_path(path: str) -> str:
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        parts = parts[2:]
    return DIR_CATEGORIES.get(parts[0], "fact") if len(parts) > 1 else "fact"


def category_dir(category: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    base = CATEGORY_DIRS[category]
    return base if namespace == DEFAULT_NAMESPACE else f"{NAMESPACES_DIR}/{namespace}/{base}"


def check_relpath(path: str, *, field: str = "path") -> str:
    """A repo-relative posix path that stays inside the repo, or a ValidationError."""
    norm = path.replace("\\", "/")
    parts = norm.split("/")
    if (
        not norm
        or norm.startswith("/")
        or re.match(r"^[A-Za-z]:", norm)
        or any(p in ("", ".", "..") for p in parts)
        or parts[0] in (".git", ".remnic")
        or "\x00" in norm
    ):
        raise ValidationError.single(field, f"{path!r} is not a path inside the memory repository")
    return norm


_SKIP_DIRS = {".git", ".remnic", "state", "node_modules", "__pycache__"}  # state/: remnic's own records
_SKIP_FILES = {"readme.md", "changelog.md", "license.md", "contributing.md"}


def is_memory_path(rel: str) -> bool:
    """Whether a repo-relative path names a memory file (not README, not state, not hidden)."""
    parts = rel.split("/")
    if not rel.endswith(".md") or parts[-1].lower() in _SKIP_FILES:
        return False
    return not any(p.startswith(".") or p in _SKIP_DIRS for p in parts)


# --- parse & serialize ---

_OPEN_RE = re.compile(r"\A(\ufeff)?---[ \t]*\r?\n")
_CLOSE_RE = re.compile(r"^---[ \t]*\r?$\n?", re.MULTILINE)


def split_file(text: str) -> tuple[str | None, str, int]:
    """(frontmatter YAML or None, raw body, line number where the YAML starts)."""
    m = _OPEN_RE.match(text)
    if not m:
        return None, text, 0
    close = _CLOSE_RE.search(text, m.end())
    if not close:
        raise MemoryFormatError("", [FieldProblem("frontmatter", "opening '---' has no closing '---' line", line=1)])
    return text[m.end() : close.start()], text[close.end() :], 2


def parse_file(text: str, path: str) -> MemoryRecord:
    """Parse and validate a memory file; MemoryFormatError names the path, line and field."""
    try:
        fm_text, body, first_line = split_file(text)
    except MemoryFormatError as exc:
        raise MemoryFormatError(
            path, [FieldProblem(p.field, p.message, path=path, line=p.line) for p in exc.problems]
        ) from None
    meta: dict[str, Any] = {}
    if fm_text is not None and fm_text.strip():
        try:
            loaded = HANDLER.load(fm_text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            context = getattr(exc, "context_mark", None)
            if context is not None and "flow" in str(getattr(exc, "context", "")):
                mark = context  # an unclosed [ or {: the line where it opened is the one to fix
            line = first_line + mark.line if mark is not None else first_line
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise MemoryFormatError(
                path, [FieldProblem("frontmatter", f"invalid YAML: {problem}", path=path, line=line)]
            ) from None
        except RecursionError:
            raise MemoryFormatError(
                path, [FieldProblem("frontmatter", "nested too deeply to read", path=path, line=first_line)]
            ) from None
        if loaded is not None and not isinstance(loaded, dict):
            raise MemoryFormatError(
                path, [FieldProblem("frontmatter", "must be a mapping of key: value lines", path=path, line=first_line)]
            )
        shape = _shape_problem(loaded)
        if shape:
            raise MemoryFormatError(path, [FieldProblem("frontmatter", shape, path=path, line=first_line)])
        meta = dict(loaded or {})
    problems = validate_frontmatter(meta, path=path, text=fm_text or "", first_line=first_line)
    if problems:
        raise MemoryFormatError(path, problems)
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
    """The file text for frontmatter + raw body. Known keys first, in KEY_ORDER."""
    ordered = order_keys(meta)
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
    """Type and vocabulary checks for known keys; unknown keys are allowed as they are."""
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
        bad("id", f"{meta['id']!r} is not a valid id (letters, digits, '.', '_', ':', '-'; no '/' or '..')")
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
            if not isinstance(value, list) or not all(isinstance(x, (str, int)) for x in value):
                bad(key, "must be a list of strings, e.g. [a, b]")
    for key in ("created", "updated", "supersededAt", "validAt", "invalidAt", "forgottenAt"):
        if key in meta and meta[key] is not None:
            value = meta[key]
            if not isinstance(value, str) or not _ISO_RE.match(value.strip()) or parse_time(value) is None:
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
    """Fields remnic keeps in step with others: tiers from scores, the content hash."""
    out: dict[str, Any] = {}
    conf = meta.get("confidence")
    if isinstance(conf, (int, float)) and not isinstance(conf, bool):
        out["confidenceTier"] = confidence_tier(float(conf))
    imp = meta.get("importanceScore")
    if isinstance(imp, (int, float)) and not isinstance(imp, bool):
        out["importanceLevel"] = importance_level(float(imp))
    out["contentHash"] = content_hash(body.strip())
    return out
