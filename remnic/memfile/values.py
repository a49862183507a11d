"""What frontmatter values mean: the user's values kept as they are, read where a reading exists.

A file's frontmatter is the user's (or another tool's): remnic never rejects a value
it does not know and never rewrites it. Instead each property of a memory is read
from whatever is there: ``status: accepted`` is active, ``confidence: high`` is a
tier, ``tags: a, b`` is two tags, ``updated: Jan 5, 2024`` is a time, ``id: 42`` is
the id "42", ``links`` may hold the original Remnic's link objects. What the file
does not say comes from its path (category folder, ``archive/``) or its body
(``#tags``, an entity file's ``## Aliases``). Pure functions.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from remnic.config.settings import DEFAULT_CONFIDENCE

from .entity import entity_aliases, entity_name, entity_type, is_entity_file, stem
from .original import DEFAULT_CONFIDENCE as ORIGINAL_CONFIDENCE
from .original import has_original_id
from .paths import category_for_path, folder_category, is_archived_path
from .schema import CATEGORIES, DIR_CATEGORIES, ID_RE, STATUSES, TAG_RE, TAG_RULE, nfc_id
from .times import parse_time

# --- ids ---


def provisional_id(path: str) -> str:
    """The id a file without one gets: derived from its path, so it is stable until sync writes it."""
    return "mem_p" + hashlib.sha1(path.encode("utf-8")).hexdigest()[:19]


def own_id(meta: Mapping[str, Any]) -> str | None:
    """The file's ``id`` as a string (in NFC) when it is a usable id (``42`` → "42"); None otherwise."""
    value = meta.get("id")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()
    return nfc_id(text) if ID_RE.match(text) else None


def record_id(meta: Mapping[str, Any], path: str) -> str:
    """The file's own id, else an entity file's name (the original's rule), else one from its path."""
    found = own_id(meta)
    if found:
        return found
    if is_entity_file(path, meta) and ID_RE.match(stem(path)):
        return nfc_id(stem(path))
    return provisional_id(path)


# --- category and status ---

_CATEGORY_WORDS = {
    **DIR_CATEGORIES,
    "reasoning-trace": "reasoning_trace",
    "reasoning trace": "reasoning_trace",
    "reasoning": "reasoning_trace",
    "trace": "reasoning_trace",
    "person": "entity",
    "people": "entity",
}
_STATUS_WORDS = {
    "deprecated": "superseded",
    "obsolete": "superseded",
    "replaced": "superseded",
    "outdated": "superseded",
    "archive": "archived",
    "declined": "rejected",
    "wontfix": "rejected",
    "won't fix": "rejected",
    "retracted": "forgotten",
    "deleted": "forgotten",
    "removed": "forgotten",
    "pending": "pending_review",
    "pending review": "pending_review",
    "needs review": "pending_review",
    "quarantine": "quarantined",
}
"""Words for remnic's statuses, read in any case and with ``-``, ``_`` or a space alike (``Pending-Review``,
``QUARANTINED``, ``needs_review``), as are the status names themselves. Kept to the words remnic has long
read this way and ``quarantine`` (its own status as a noun): a word a vault may use for its own workflow
(``review``, ``in review``, ``flagged``, ``delete``, ``reject``, ``approved``…) names no status (read
active, and ``remnic doctor`` warns), so an upgrade never takes a note out of recall (the table:
docs/remnic-compat.md, "Values")."""


def _status_key(word: str) -> str:
    return " ".join(word.replace("-", " ").replace("_", " ").split())


_STATUS_LOOKUP = {**{_status_key(s): s for s in STATUSES}, **{_status_key(k): v for k, v in _STATUS_WORDS.items()}}


def status_word(value: Any) -> str | None:
    """The status ``value`` names (``active`` … ``forgotten``, or a lifecycle word for one); None when it names
    none (``draft``, a number, a typo such as ``pending-reveiw``)."""
    word = _word(value)
    return _STATUS_LOOKUP.get(_status_key(word)) if word else None


def unknown_status(meta: Mapping[str, Any]) -> bool:
    """Whether the file says a ``status`` that names no status (read as active: a reader should know)."""
    value = meta.get("status")
    return value is not None and value != "" and status_word(value) is None


def _word(value: Any) -> str | None:
    return value.strip().lower() if isinstance(value, str) and value.strip() else None


def category_of(meta: Mapping[str, Any], path: str) -> str:
    """``category`` when it names one (``decisions``, ``Decision`` too), else the folder's."""
    if is_entity_file(path, meta):
        return "entity"
    word = _word(meta.get("category"))
    if word:
        if word in CATEGORIES:
            return word
        if word.replace("-", "_").replace(" ", "_") in CATEGORIES:
            return word.replace("-", "_").replace(" ", "_")
        if word in _CATEGORY_WORDS:
            return _CATEGORY_WORDS[word]
    return category_for_path(path)


def moved_category(said: Any, old_path: str, new_path: str) -> str | None:
    """Sync's rule for a file moved between category folders: a ``category`` that named the old folder
    follows the file (a folder move is how a person recategorises a note); None when it stays."""
    old, new = folder_category(old_path), folder_category(new_path)
    if old is None or new is None or old == new or said is None:
        return None
    return new if category_of({"category": said}, old_path) == old else None


def status_of(meta: Mapping[str, Any], path: str) -> str:
    """The original's rule: a status other than active wins, else ``archivedAt`` or an ``archive/``
    path mean archived, else active. A status naming none (``draft``, ``done``) reads as active: a
    vault's own workflow words must not take its notes out of recall (see :func:`unknown_status`)."""
    status = status_word(meta.get("status")) or "active"
    if status == "active" and (meta.get("archivedAt") or is_archived_path(path)):
        return "archived"
    return status


def foreign_values(meta: Mapping[str, Any], path: str) -> dict[str, tuple[Any, Any]]:
    """key → (the file's value, how remnic reads it) for known keys holding values outside remnic's
    vocabulary: what ``remnic doctor`` lists so nobody is surprised by a reading. A time key whose
    value cannot be read as a time (``created: last tuesday``) is read as None: no time at all."""
    out: dict[str, tuple[Any, Any]] = {}
    for key in (*CREATED_KEYS, *UPDATED_KEYS, *OTHER_TIME_KEYS):
        value = meta.get(key)
        if value is not None and value != "" and parse_time(value) is None:
            out[key] = (value, None)
    if "status" in meta and meta["status"] not in STATUSES:
        out["status"] = (meta["status"], status_of(meta, path))
    if "category" in meta and meta["category"] not in CATEGORIES:
        out["category"] = (meta["category"], category_of(meta, path))
    if "confidence" in meta and not _is_unit_number(meta["confidence"]):
        out["confidence"] = (meta["confidence"], confidence_of(meta))
    if "tags" in meta and not (isinstance(meta["tags"], list) and all(isinstance(t, str) for t in meta["tags"])):
        out["tags"] = (meta["tags"], frontmatter_tags(meta))
    elif invalid_tags(meta):
        key = stated_tags(meta)[0]
        out[key] = (meta[key], frontmatter_tags(meta))
    said = nfc_id(meta["id"]) if isinstance(meta.get("id"), str) else meta.get("id")
    if "id" in meta and own_id(meta) != said:  # an NFD id is read as written, only compared in NFC
        out["id"] = (meta["id"], own_id(meta) or record_id(meta, path))
    return out


# --- numbers ---

_CONFIDENCE_WORDS = {
    "certain": 0.95,
    "explicit": 0.95,
    "very high": 0.95,
    "confirmed": 0.95,
    "high": 0.85,
    "implied": 0.8,
    "likely": 0.75,
    "medium": 0.55,
    "moderate": 0.55,
    "inferred": 0.55,
    "low": 0.3,
    "speculative": 0.25,
    "unsure": 0.25,
    "very low": 0.15,
}
_IMPORTANCE_WORDS = {"critical": 0.95, "high": 0.8, "normal": 0.5, "medium": 0.5, "low": 0.3, "trivial": 0.1}


def _is_unit_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


def _number(value: Any, words: Mapping[str, float]) -> float | None:
    """A 0..1 score from a number (percentages and 1..100 scaled), a numeric string or a word."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in words:
            return words[word]
        percent = word.endswith("%")
        try:
            value = float(word.rstrip("%").strip())
        except ValueError:
            return None
        if percent:
            value /= 100
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    if value > 1:
        value = value / 10 if value <= 10 else value / 100 if value <= 100 else 1.0
    return float(value)


def confidence_of(meta: Mapping[str, Any], default: float | None = None) -> float:
    """``confidence`` read as a 0..1 score (``high``, ``80%``, ``"0.7"`` too), else from a tier word, else
    ``default``: by default the original's 0.8 in a file with the original's id, else remnic's."""
    for key in ("confidence", "confidenceTier"):
        found = _number(meta.get(key), _CONFIDENCE_WORDS)
        if found is not None:
            return found
    if default is None:
        return ORIGINAL_CONFIDENCE if has_original_id(meta) else DEFAULT_CONFIDENCE
    return default


def importance_of(meta: Mapping[str, Any], default: float = 0.5) -> float:
    """``importanceScore`` (or the legacy ``importance`` map or value), else ``importanceLevel``."""
    legacy = meta.get("importance")
    if isinstance(legacy, Mapping):
        legacy = legacy.get("score", legacy.get("level"))
    for value in (meta.get("importanceScore"), legacy, meta.get("importanceLevel"), meta.get("priority")):
        found = _number(value, _IMPORTANCE_WORDS)
        if found is not None:
            return found
    return default


# --- tags and aliases ---

_HASHTAG = re.compile(r"(?<![\w&#/])#([\w/-]*[^\W\d][\w/-]*)")
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield str(value)


def _split_list(text: str) -> list[str]:
    """``a, b`` → [a, b]; ``#a #b`` → [a, b]."""
    parts = text.split(",") if "," in text else text.split()
    return [p.strip() for p in parts if p.strip()]


def nfc(text: str) -> str:
    """``text`` in Unicode NFC: "café" typed precomposed or as e + a combining accent is one text."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def tag_key(tag: str) -> str:
    """What two tags are compared by (filters, de-duplication): trimmed, no leading '#', NFC, case-folded.
    Only compared, never written: a hand-written tag stays as the file spells it."""
    return _fold(tag.strip().lstrip("#").strip())


def fold_case(text: str) -> str:
    """``text`` as compared case-insensitively: NFC, case-folded; Turkish İ, I and ı fold alike (to i,
    as ``IZMIR`` is typed for ``İzmir`` and ``ILIK`` for ``ılık``). ASCII text is only case-folded."""
    if text.isascii():
        return text.casefold()
    # Folding can decompose (U+01F0 → j + U+030C), so NFC again after it; İ folds to i + a combining dot.
    return nfc(nfc(text).casefold()).replace("i\u0307", "i").replace("ı", "i")


_fold = fold_case


def frontmatter_tags(meta: Mapping[str, Any]) -> list[str]:
    raw = meta.get("tags", meta.get("tag"))
    items = _split_list(raw) if isinstance(raw, str) else list(_strings(raw))
    return _unique(t.strip().lstrip("#").strip() for t in items)


def stated_tags(meta: Mapping[str, Any]) -> tuple[str, Any]:
    """(the key a memory's tags are read from: ``tags``, else ``tag``; its value, a string split into
    tags as :func:`frontmatter_tags` reads it). For a write that takes a file's keys, such as an import
    line, so the memory it writes has the tags the file meant."""
    key = "tag" if "tags" not in meta and "tag" in meta else "tags"
    raw = meta.get(key)
    return key, frontmatter_tags({"tags": raw}) if isinstance(raw, str) else raw


def invalid_tags(meta: Mapping[str, Any]) -> list[str]:
    """The frontmatter tags, as read, that remnic's own writes would refuse (TAG_RULE)."""
    return [t for t in frontmatter_tags(meta) if not TAG_RE.match(nfc(t))]  # as a write checks it, in NFC


def refused_tags_note(meta: Mapping[str, Any]) -> str:
    """What ``remnic doctor`` says of a file holding tags remnic's writes refuse ("" when it holds none)."""
    refused = invalid_tags(meta)
    if not refused:
        return ""
    why = "; ".join(tag_refusal(t) for t in refused)
    return f"{why}. Kept as written and read as is, but store, update and import as a new memory refuse it"


def tag_refusal(tag: Any) -> str:
    """Why a write refuses ``tag``: the rule, and for a comma the tags its words would be."""
    text = f"{tag!r} is not a valid tag ({TAG_RULE})"
    if isinstance(tag, str) and "," in tag:
        text += f"; to keep its words as tags give them apart: {frontmatter_tags({'tags': tag})}"
    return text


def body_tags(body: str) -> list[str]:
    """Obsidian's ``#tags`` in the text (not in code, not headings, not ``#123``)."""
    if "#" not in body:
        return []
    # In NFC a combining accent joins its letter, so ``#café`` typed decomposed is not cut at the accent.
    text = _INLINE_CODE.sub(" ", _FENCE.sub(" ", nfc(body)))
    return _unique(m.group(1).rstrip("/-") for m in _HASHTAG.finditer(text))


def tags_of(meta: Mapping[str, Any], body: str, path: str) -> list[str]:
    """Frontmatter tags, then the body's ``#tags``; an entity file's type too (as the original adds it)."""
    tags = frontmatter_tags(meta) + body_tags(body)
    if is_entity_file(path, meta):
        tags.append(entity_type(path, body))
    return _unique(tags)


def aliases_of(meta: Mapping[str, Any], body: str, path: str) -> list[str]:
    """Other names of the note: ``aliases``/``alias`` (list or ``a, b``), an entity file's ``## Aliases``."""
    raw = meta.get("aliases", meta.get("alias"))
    items = _split_list(raw) if isinstance(raw, str) else list(_strings(raw))
    if is_entity_file(path, meta):
        items += entity_aliases(body)
    return _unique(items)


def _unique(items: Any) -> list[str]:
    """The first spelling of each, compared in NFC and case-folded, as tags are (:func:`tag_key`)."""
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        key = _fold(item) if item else ""
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


# --- times and text ---

CREATED_KEYS = ("created", "date", "created_at", "createdAt", "creation_date", "dateCreated", "published", "pubDate")
UPDATED_KEYS = (
    "updated",
    "modified",
    "lastmod",
    "last_modified",
    "updated_at",
    "updatedAt",
    "lastModified",
    "dateModified",
)

OTHER_TIME_KEYS = ("validAt", "invalidAt", "supersededAt", "forgottenAt", "observedAt", "validUntil", "expiresAt")
"""The other keys recall reads as times (validity, supersession, when it was observed)."""


def first_of(meta: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = meta.get(key)
        if value is not None and value != "":
            return value
    return None


def text_of(meta: Mapping[str, Any], body: str, path: str) -> str:
    """What a memory says: its body, or for a note that is only frontmatter its title and description."""
    text = body.strip()
    if text:
        return text
    parts = [str(meta[k]).strip() for k in ("title", "description", "summary") if isinstance(meta.get(k), str)]
    if is_entity_file(path, meta):
        parts = [entity_name(body) or stem(path)]
    return "\n\n".join(p for p in parts if p)


# --- links ---

_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]{1,200})(?:[#|][^\[\]\n]*)?\]\]")


def link_refs(meta: Mapping[str, Any]) -> list[str]:
    """Targets of ``links``: ids or paths as strings, or the original's ``{targetId, linkType, …}`` objects."""
    value = meta.get("links")
    items = value if isinstance(value, list) else [value] if value is not None else []
    out = []
    for item in items:
        if isinstance(item, Mapping):
            item = item.get("targetId", item.get("target", item.get("id")))
        if isinstance(item, (str, int)) and not isinstance(item, bool) and str(item).strip():
            out.append(str(item).strip())
    return out


def wikilinks_in(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1).strip() for m in _WIKILINK.finditer(text or "")))


def frontmatter_wikilinks(meta: Mapping[str, Any]) -> list[str]:
    """``[[targets]]`` written in frontmatter values (Obsidian's ``related: "[[Note]]"``)."""
    out: list[str] = []
    for key, value in meta.items():
        if key != "links":
            for text in _strings(value):
                out += wikilinks_in(text)
    return list(dict.fromkeys(out))


# --- content hashes ---

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_SUFFIX = re.compile(r"\s*\[(?:Source|Attributes):[^\[\]]*\]\s*$")


def content_hash(text: str) -> str:
    """remnic's identity of a text: ``sha256:`` + hex of the exact text in Unicode NFC (the index and
    dedup use it), so "café" typed precomposed or as e + a combining accent is one text."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _kept(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch)[0] in "LMN"


# ASCII in one C pass (str.translate); only the other characters are looked at one by one.
_ASCII_TABLE = {c: " " for c in range(128) if not _kept(chr(c))}
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _non_ascii(m: re.Match[str]) -> str:
    return "".join(ch if _kept(ch) else " " for ch in m.group(0))


def normalized_text(text: str) -> str:
    """The original Remnic's normalisation before hashing: NFC, lower case, every character that is not
    a letter, mark, number or space replaced by a space, spaces collapsed, trimmed."""
    text = unicodedata.normalize("NFC", text).lower().translate(_ASCII_TABLE)
    if not text.isascii():
        text = _NON_ASCII.sub(_non_ascii, text)
    return " ".join(text.split())


def original_hash(text: str) -> str:
    """``contentHash`` as the original Remnic writes it: bare hex SHA-256 of the normalised text."""
    return hashlib.sha256(normalized_text(text).encode("utf-8")).hexdigest()


def hash_matches(stored: Any, text: str) -> bool | None:
    """Whether a stored ``contentHash`` fits ``text``, each spelling checked its own way: ``sha256:…`` over
    the exact text (remnic's older files), bare hex over the normalised text with or without a trailing
    ``[Source: …]``/``[Attributes: …]`` (the original's); None for a spelling neither writes."""
    if not isinstance(stored, str):
        return None
    value = stored.strip()
    if value.startswith("sha256:"):
        return value == content_hash(text)
    if not _HEX64.match(value.lower()):
        return None
    candidate = text
    while True:
        if original_hash(candidate) == value.lower():
            return True
        stripped = _SUFFIX.sub("", candidate)
        if stripped == candidate:
            return False
        candidate = stripped


def hash_like(stored: Any, text: str) -> str | None:
    """A fresh ``contentHash`` for ``text`` in the spelling ``stored`` uses (None: a spelling remnic leaves)."""
    if isinstance(stored, str) and stored.strip().startswith("sha256:"):
        return content_hash(text)
    if stored is None or (isinstance(stored, str) and _HEX64.match(stored.strip().lower())):
        return original_hash(_strip_suffixes(text))
    return None


def _strip_suffixes(text: str) -> str:
    """The text without trailing ``[Source: …]``/``[Attributes: …]`` (what the original hashes)."""
    while True:
        stripped = _SUFFIX.sub("", text)
        if stripped == text:
            return text
        text = stripped
