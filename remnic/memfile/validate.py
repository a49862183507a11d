"""Validation: caller input for writes (store arguments, import lines, secrets) and memory files.

Everything here is pure: it turns untrusted input into frontmatter or a list of
FieldProblems naming the field and the valid options. Nothing touches disk.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from remnic.config import StoreSettings
from remnic.errors import FieldProblem, MemoryFormatError, ValidationError, json_kind

from .id_clash import PlannedMemory as PlannedMemory
from .id_clash import duplicate_ids
from .keys import line_key_problems, near_miss_problems
from .model import (
    CATEGORIES,
    ID_RE,
    NAMESPACE_RE,
    STATUSES,
    TAG_RE,
    MemoryRecord,
    body_for,
    category_dir,
    confidence_tier,
    importance_level,
    lost_open_fence,
    mistyped_fence,
    namespace_for_path,
    new_id,
    original_hash,
    parse_file,
    serialize,
    split_file,
    validate_frontmatter,
)
from .secrets import SECRET_WAY_OUT, describe_secret, find_secrets  # one scanner: observe redacts with it
from .values import nfc, stated_tags, tag_key, tag_refusal


def _bad(field: str, message: str, line: int | None, options: Sequence[str] | None = None) -> FieldProblem:
    return FieldProblem(field, message, line=line, options=options)


# --- text every write stores: no NUL, no lone surrogates ---
# Git refuses a NUL in a commit message (and treats a file holding one as binary); a lone
# surrogate is not Unicode at all and cannot be encoded as UTF-8 for a file, an index or a
# response. Undecodable input bytes arrive as lone surrogates too (U+DC80..U+DCFF, Python's
# surrogateescape), so one check covers NUL bytes, bad JSON escapes and non-UTF-8 input.

_BAD_TEXT = re.compile(r"[\x00\ud800-\udfff]")


def _bad_char(char: str, offset: int) -> str:
    code = ord(char)
    if code == 0:
        return f"contains a NUL character at character offset {offset}; text must not contain NUL (U+0000)"
    if 0xDC80 <= code <= 0xDCFF:
        return (
            f"is not valid UTF-8 text at character offset {offset}: U+{code:04X} is a lone surrogate "
            f"(the undecodable byte 0x{code - 0xDC00:02X}, or half of a UTF-16 pair); send UTF-8 text"
        )
    return (
        f"is not valid Unicode text at character offset {offset}: U+{code:04X} is a lone surrogate "
        "(half of a UTF-16 pair); send UTF-8 text"
    )


# What text taken from elsewhere (a transcript) is cleaned of, where a caller's write is refused: the above,
# and each other C0/C1 control but tab, newline and U+0085 (NEL, a line break JavaScript writes raw), a
# terminal escape whole ("\x1b[31m", not just its ESC); \r\n, \r, \v and \f become "\n".
_UNCLEAN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff]")
_ESCAPES = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~]?)|\x9b[0-?]*[ -/]*[@-~]?"
)


def clean_text(text: str) -> str:
    """``text`` without the characters a stored text must not hold (see ``_UNCLEAN``); a lone
    surrogate becomes U+FFFD, as a memory's ``contentHash`` reads it."""
    if not _UNCLEAN.search(text):
        return text
    text = re.sub(r"\r\n?|[\x0b\x0c]", "\n", _ESCAPES.sub("", text))
    return _BAD_TEXT.sub("\ufffd", re.sub(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]", "", text))


def text_problems(value: str, field: str, line: int | None = None) -> list[FieldProblem]:
    """The first NUL or lone surrogate in one text value, naming the field and the character offset."""
    m = _BAD_TEXT.search(value)
    return [] if m is None else [_bad(field, _bad_char(m.group(), m.start()), line)]


def strings_problems(value: Any, field: str, line: int | None = None) -> list[FieldProblem]:
    """``text_problems`` for every string in a JSON-like value, keys included, each named by its
    path (``messages[0].content``); one problem per string."""
    if isinstance(value, str):
        return text_problems(value, field, line)
    problems: list[FieldProblem] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = f"{field}.{key}" if field else str(key)
            if isinstance(key, str) and _BAD_TEXT.search(key):
                problems += text_problems(key, f"{field or '(root)'} key '{_printable(key)}'", line)
            problems += strings_problems(item, _printable(name), line)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            problems += strings_problems(item, f"{field}[{i}]", line)
    return problems


def _printable(text: str) -> str:
    """A name that can itself be encoded (bad characters shown as escapes)."""
    return _BAD_TEXT.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def check_content(content: Any, settings: StoreSettings, line: int | None = None) -> list[FieldProblem]:
    if not isinstance(content, str):
        return [_bad("content", f"must be a string, got {type(content).__name__}", line)]
    problems = text_problems(content, "content", line)
    if not content.strip():
        problems.append(_bad("content", "must not be empty", line))
    stored = len(content.strip())  # counted as stored: the store drops surrounding whitespace
    if stored > settings.max_content_chars:
        problems.append(
            _bad(
                "content",
                f"is {stored} characters; the limit is {settings.max_content_chars} (store.maxContentChars)",
                line,
            )
        )
    found = find_secrets(content, words=False) if settings.scan_secrets else []  # precise rules: a write
    said = describe_secret(content, words=False) if found else None
    if said:
        problems.append(
            _bad("content", f"looks like it contains a secret ({', '.join(found)}), {said[0]}; {SECRET_WAY_OUT}", line)
        )
    if re.search(r"^---[ \t]*$", content, re.MULTILINE) and content.lstrip().startswith("---"):
        problems.append(_bad("content", "must not start with a '---' frontmatter block; pass metadata as fields", line))
    return problems


def check_namespace(namespace: Any, line: int | None = None) -> list[FieldProblem]:
    if namespace is None:
        return []
    if not isinstance(namespace, str) or not NAMESPACE_RE.match(namespace):
        return [
            _bad(
                "namespace",
                f"{namespace!r} is not a valid namespace (lowercase letters, digits, '-' and '_', up to 64; no '/' or '..')",
                line,
            )
        ]
    return []


def _score(field: str, value: Any, line: int | None) -> tuple[float | None, list[FieldProblem]]:
    if value is None:
        return None, []
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(str(value))
        except ValueError:
            return None, [_bad(field, f"must be a number from 0 to 1, got {value!r}", line)]
    if not math.isfinite(value) or not 0.0 <= float(value) <= 1.0:
        return None, [_bad(field, f"must be from 0 to 1, got {value!r}", line)]
    return float(value), []


def normalize_tags(tags: Any, line: int | None = None, name: str = "tags") -> tuple[list[str], list[FieldProblem]]:
    """Tags as every write stores them (``name``: the key they came in, as a problem names it): trimmed, in
    NFC, one of each as tags compare (:func:`tag_key`; "café" typed two ways is one tag, first spelling kept)."""
    if tags is None:
        return [], []
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",") if t.strip()]
    if not isinstance(tags, (list, tuple)):
        return [], [_bad(name, "must be a list of strings or a comma-separated string", line)]
    out: dict[str, str] = {}  # tag_key → the tag
    problems: list[FieldProblem] = []
    for i, tag in enumerate(tags):
        if isinstance(tag, str) and _BAD_TEXT.search(tag):
            problems += text_problems(tag, f"{name}[{i}]", line)
        elif not isinstance(tag, (str, int)) or not TAG_RE.match(nfc(str(tag).strip())):
            problems.append(_bad(name, tag_refusal(tag), line))
        else:
            out.setdefault(tag_key(str(tag)), nfc(str(tag).strip()))
    return list(out.values()), problems


def new_frontmatter(
    *,
    memory_id: str,
    now: str,
    content: str,
    category: Any,
    settings: StoreSettings,
    tags: Any = None,
    confidence: Any = None,
    importance: Any = None,
    source: str = "api",
    extra: Mapping[str, Any] | None = None,
    line: int | None = None,
    importance_field: str = "importance",
) -> tuple[dict[str, Any], list[FieldProblem]]:
    """Frontmatter for a new memory, or the problems with the input (each naming its field;
    ``importance_field``: the key the caller's importance came in, as its problem names it)."""
    problems: list[FieldProblem] = []
    extra = dict(extra or {})
    problems += strings_problems(extra, "", line)
    if category not in CATEGORIES:
        problems.append(_bad("category", f"unknown category {category!r}", line, CATEGORIES))
    conf, p = _score("confidence", confidence, line)
    problems += p
    imp, p = _score(importance_field, importance, line)
    problems += p
    tags_field = "tags"
    if tags is None and "tag" in extra:  # kept as written, and its tags are the memory's, as a reader takes them
        tags_field, tags = stated_tags(extra)
    tag_list, p = normalize_tags(tags, line, tags_field)
    problems += p
    status = extra.pop("status", "active")
    if status not in STATUSES:
        problems.append(_bad("status", f"unknown status {status!r}", line, STATUSES))
    if "id" in extra:
        given = extra.pop("id")
        if not isinstance(given, str) or not ID_RE.match(given):
            problems.append(_bad("id", f"{given!r} is not a valid id ({ID_RE.rule})", line))
        else:
            memory_id = nfc(given)  # ids compare in NFC: a decomposed `cafe\u0301-1` is the memory `café-1`
    conf = settings.default_confidence if conf is None else conf
    imp = settings.default_importance if imp is None else imp
    meta: dict[str, Any] = {
        "id": memory_id,
        "category": category,
        "created": extra.pop("created", now),
        "updated": extra.pop("updated", now),
        "source": extra.pop("source", source),
        "confidence": conf,
        "confidenceTier": confidence_tier(conf),
        "tags": tag_list,
        "status": status,
        "importanceScore": imp,
        "importanceLevel": importance_level(imp),
    }
    for derived in ("confidenceTier", "importanceLevel", "contentHash"):
        extra.pop(derived, None)
    meta.update(extra)
    # The original Remnic's spelling (bare hex over the normalised text), so it dedups against it too.
    # Bad text is refused by check_content; hash an encodable stand-in so the rest is still checked.
    meta["contentHash"] = original_hash(_BAD_TEXT.sub("\ufffd", content.strip()))
    reported = {p.field for p in problems}
    for problem in validate_frontmatter(meta):
        if problem.field not in reported and not (problem.field == "importanceScore" and importance_field in reported):
            problem.line = line
            problems.append(problem)
    return meta, problems


MAX_SOURCE_CHARS = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_source(source: Any) -> list[FieldProblem]:
    """A write's ``source`` goes into frontmatter and a commit trailer: one short line of text."""
    if not isinstance(source, str) or not source.strip():
        return [_bad("source", f"must name who is writing (e.g. cli, api, an agent's name), got {source!r}", None)]
    if len(source) > MAX_SOURCE_CHARS:
        return [_bad("source", f"is {len(source)} characters; the limit is {MAX_SOURCE_CHARS}", None)]
    if _CONTROL.search(source) or _BAD_TEXT.search(source):
        return [_bad("source", "must be one line of text (no newlines or control characters)", None)]
    return []


STORE_OWNED = {
    "category": "the category argument",
    "tags": "the tags argument",
    "confidence": "the confidence argument",
    "importance": "the importance argument",
    "importanceScore": "the importance argument",
    "source": "the source argument",
    "namespace": "the namespace argument",
    "content": "the content argument",
    "created": "import_records (the store sets created and updated to now)",
    "updated": "import_records (the store sets created and updated to now)",
    "contentHash": "nothing: the store derives it from the text",
    "confidenceTier": "nothing: the store derives it from confidence",
    "importanceLevel": "nothing: the store derives it from importance",
}
"""Keys :func:`remnic.service.writes.store` sets itself, and where a caller says them instead. (``id``
and ``status`` stay allowed in ``extra``: a chosen id, checked to be free; a suggestion's status.)"""


def plain_problems(value: Any, field: str) -> list[FieldProblem]:
    """Values a memory file cannot hold as plain YAML (objects, sets, bytes, dates: YAML would write
    ``!!set``, ``!!binary``, a timestamp, or fail), each naming its key."""
    if value is None or isinstance(value, (str, bool, int)):
        return []
    if isinstance(value, float):
        return [] if math.isfinite(value) else [_bad(field, f"must be a finite number, got {value!r}", None)]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in plain_problems(item, f"{field}[{i}]")]
    if isinstance(value, dict):
        problems = [
            _bad(field, f"has a key that is not a string: {k!r}", None) for k in value if not isinstance(k, str)
        ]
        return problems + [p for k, item in value.items() for p in plain_problems(item, f"{field}.{k}")]
    return [
        _bad(
            field,
            f"is a {type(value).__name__}; a memory holds only JSON-like values "
            "(string, number, true/false, null, list, object): convert it (a date to an ISO 8601 string)",
            None,
        )
    ]


def store_extra_problems(extra: Mapping[str, Any] | None) -> list[FieldProblem]:
    """The keys of a store's ``extra`` that the store owns, and values no memory file may hold."""
    problems: list[FieldProblem] = []
    for key, value in (extra or {}).items():
        if key in STORE_OWNED:
            problems.append(_bad(f"extra.{key}", f"is set by the store; use {STORE_OWNED[key]} instead", None))
        else:
            problems += plain_problems(value, f"extra.{key}")
    return problems + near_miss_problems((extra or {}).keys(), prefix="extra.", hints=STORE_OWNED)


UPDATE_ARGUMENTS = {
    "content": "the text is the body, not a key: pass content= (remnic update --content)",
    "importance": "the key is importanceScore (remnic update --importance)",
    "contentHash": "it follows the text: pass content= to change the text",
    "id": "a memory keeps its id",
}


def check_changes(changes: Mapping[str, Any]) -> list[FieldProblem]:
    """The values an update or forget would write, held to remnic's own rule (keys set to None are
    removals); the file's other values are not checked (near-miss keys are, under the lock: ``change_key_problems``)."""
    problems = [
        _bad(k, f"cannot be changed by an update: {UPDATE_ARGUMENTS[k]}", None)
        for k in changes
        if k in UPDATE_ARGUMENTS
    ]
    if "category" in changes and changes["category"] is None:
        problems.append(_bad("category", "cannot be removed (every memory has one); set another category", None))
    if problems:
        return problems
    setting = {k: v for k, v in changes.items() if v is not None}
    problems = [p for k, v in setting.items() for p in plain_problems(v, k)]
    return problems or strings_problems(setting, "", None) + validate_frontmatter(setting)


def file_problems(
    meta: Mapping[str, Any], content: str, category: str, namespace: str, store: StoreSettings
) -> list[FieldProblem]:
    """The file a write would create, checked by the rule every reader applies (secrets anywhere,
    conflict markers…), so remnic never commits a file that sync or doctor would then reject."""
    text = serialize(meta, body_for(content))
    problems = check_text(text, f"{category_dir(category, namespace)}/new.md", store).problems
    for problem in problems:  # the path is not chosen yet and file lines mean nothing to the caller
        problem.path, problem.line = None, None
    return problems


# (frontmatter, content, namespace, category) of one memory an import will write


def plan_import(
    items: Iterable[Any],
    *,
    line_numbers: Sequence[int] | None,
    namespace: str,
    source: str,
    store: StoreSettings,
    existing_ids: Callable[[], Mapping[str, str]],
    now: str,
    already_here: Callable[[PlannedMemory], bool] | None = None,
) -> tuple[list[PlannedMemory], list[FieldProblem]]:
    """Validate an import batch: what to write, or every problem with its line and field.
    ``already_here``: whether a line whose id exists is that very memory (then no clash: the
    writer skips it as an exact duplicate)."""
    planned: list[PlannedMemory] = []
    problems: list[FieldProblem] = []
    chosen: list[tuple[str, int, PlannedMemory]] = []
    for offset, item in enumerate(items):
        line = line_numbers[offset] if line_numbers else offset + 1
        if not isinstance(item, Mapping):
            problems.append(FieldProblem("", f"expected a JSON object, got {json_kind(item)}", line=line))
            continue
        fields = dict(item)
        problems += line_key_problems(fields, line)  # the line's keys as the caller spelled them
        content = fields.pop("content", None)
        if content is None:
            problems.append(FieldProblem("content", "is required", line=line))
            continue
        ns = fields.pop("namespace", None) or namespace
        category = fields.pop("category", "fact")
        # Either spelling; a problem names the key the line used (``importance`` wins if both are there).
        importance_field = "importance" if "importance" in fields else "importanceScore"
        importance = fields.pop("importance", fields.pop("importanceScore", None))
        tags = stated_tags({"tags": fields.pop("tags", None)})[1]  # `tags: a b` read as a file's would be
        item_problems = check_content(content, store, line) + check_namespace(ns, line)
        meta, more = new_frontmatter(
            memory_id=new_id(),
            now=now,
            content=content if isinstance(content, str) else "",
            category=category,
            settings=store,
            tags=tags,
            confidence=fields.pop("confidence", None),
            importance=importance,
            source=source,
            extra=fields,
            line=line,
            importance_field=importance_field,
        )
        item_problems += more
        if not item_problems:
            for problem in file_problems(meta, content, category, ns, store):
                problem.line = line
                item_problems.append(problem)
        if item_problems:
            problems += item_problems
            continue
        planned.append((meta, content, ns, category))
        if "id" in fields:
            chosen.append((meta["id"], line, planned[-1]))
    return planned, problems + duplicate_ids(chosen, existing_ids, already_here)


# --- memory files: the one rule for what a valid memory file is ---
# Used by store scans (list, get, reindex, recall's file fallback), writes (store, import, update),
# sync, doctor and the pre-commit hook, so they never disagree about a file.

_CONFLICT_START = re.compile(r"^<{7}(?: |$)", re.MULTILINE)
_CONFLICT_MID = re.compile(r"^={7}\r?$", re.MULTILINE)
_CONFLICT_END = re.compile(r"^>{7}(?: |$)", re.MULTILINE)


@dataclass
class Checked:
    """The outcome of reading one file: a valid record, or problems; ``empty`` when it holds no text yet."""

    path: str
    record: MemoryRecord | None = None
    problems: list[FieldProblem] = field(default_factory=list)
    text: str = ""
    has_frontmatter: bool = False

    @property
    def ok(self) -> bool:
        return self.record is not None and not self.problems

    @property
    def empty(self) -> bool:
        return self.record is not None and not self.record.content


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def check_text(text: str, path: str, store: StoreSettings) -> Checked:
    """Check one file's text: frontmatter that parses (and an opening ``---`` not lost), its namespace
    folder, secrets, merge conflict markers, text encoding. The frontmatter's values are the user's and never make a file malformed."""
    out = Checked(path, text=text)
    try:
        record = parse_file(text, path)
    except MemoryFormatError as exc:
        out.problems = [
            FieldProblem(p.field, p.message, path=path, line=p.line, options=p.options) for p in exc.problems
        ]
        return out
    fm_text, _body, _ = split_file(text)
    if fm_text is None and lost_open_fence(text):
        msg = (
            "the opening '---' line is mistyped: replace that line with '---'"
            if mistyped_fence(text)
            else "the opening '---' line is missing: add '---' as line 1"
        )
        out.problems = [FieldProblem("frontmatter", msg, path=path, line=1)]
        return out
    out.has_frontmatter = fm_text is not None and bool(record.frontmatter)
    out.problems += _file_text_problems(text, record.frontmatter, path)
    for problem in check_namespace(namespace_for_path(path)):
        out.problems.append(FieldProblem("path", f"namespace folder {problem.message}", path=path))
    start = _CONFLICT_START.search(text)
    if start and _CONFLICT_MID.search(text, start.end()) and _CONFLICT_END.search(text, start.end()):
        out.problems.append(
            FieldProblem(
                "content",
                "has unresolved merge conflict markers (<<<<<<< ... >>>>>>>)",
                path=path,
                line=_line_at(text, start.start()),
            )
        )
    said = describe_secret(text, words=False) if store.scan_secrets else None
    if said:
        out.problems.append(
            FieldProblem(
                "content",
                f"looks like it contains a secret, {said[0]}; {SECRET_WAY_OUT}",
                path=path,
                line=_line_at(text, said[1]),
            )
        )
    out.record = record
    return out


def _file_text_problems(text: str, frontmatter: Mapping[str, Any], path: str) -> list[FieldProblem]:
    """NUL characters or lone surrogates in a file: raw in its text, or escaped in its YAML."""
    problems = strings_problems(dict(frontmatter), "", None)
    for problem in problems:
        problem.path = path
    m = _BAD_TEXT.search(text)
    if m is not None and not problems:
        problems.append(
            FieldProblem("content", _bad_char(m.group(), m.start()), path=path, line=_line_at(text, m.start()))
        )
    return problems


def check_bytes(data: bytes, path: str, store: StoreSettings) -> Checked:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return Checked(
            path,
            problems=[
                FieldProblem(
                    "encoding",
                    f"not UTF-8 text ({exc.reason}: byte 0x{data[exc.start]:02X} at byte offset {exc.start})",
                    path=path,
                    line=line,
                )
            ],
        )
    return check_text(text, path, store)


def check_recall_args(*, top_k: Any, namespace: Any, category: Any, budget_chars: Any, statuses: Any) -> None:
    """ValidationError naming the first bad recall argument and its valid options."""
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k <= 0):
        raise ValidationError.single("top_k", f"must be a positive integer, got {top_k!r}")
    if budget_chars is not None and (
        not isinstance(budget_chars, int) or isinstance(budget_chars, bool) or budget_chars < 0
    ):
        raise ValidationError.single(
            "budget_chars", f"must be 0 (no limit) or a positive integer, got {budget_chars!r}"
        )
    problems = check_namespace(namespace)
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)
    if category is not None and category not in CATEGORIES:
        raise ValidationError.single("category", f"unknown category {category!r}", options=CATEGORIES)
    for status in statuses or ():
        if status not in STATUSES:
            raise ValidationError.single("statuses", f"unknown status {status!r}", options=STATUSES)
