"""What gets indexed for a memory: pure functions from records to indexed text.

Kept apart from the index machinery so the rules are testable and the recall
side can reuse them (e.g. the same analyzer-independent tokenisation rules).
Nothing here knows about tantivy, numpy or files.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from remnic.memfile.model import MemoryRecord, parse_time, slugify

from . import dates as D

# A leading "Label: " names who/what a memory is about ("Ana: I moved to Lisbon",
# "Decision: ship on Tuesdays"). It is carried onto every sentence chunk so a
# chunk keeps its subject. Short, starts with a letter, no sentence punctuation.
_LABEL_RE = re.compile(r"^\s*([A-Za-z][^\n:.!?]{0,39}?):\s+\S")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n\s*\n+|\n(?=\s*[-*#>])")
_TURN_SPLIT_RE = re.compile(r"[:#/]")
_NUM_RE = re.compile(r"(\d+)")


@dataclass(frozen=True)
class TextRules:
    """The knobs that change what is indexed (part of the manifest fingerprint)."""

    neighbor_window: int = 2
    context_max_chars: int = 600
    max_chunks: int = 16
    chunk_min_chars: int = 12
    passage_chars: int = 800
    context_vectors: str = "passage"  # or "mean": the window's sentence vectors averaged, no passage run
    max_vectors: int = 256
    """A memory's chunks past this many are not embedded (a 10 MB note would take hours); BM25 still has
    all of its text (0 = no cap). The default of ``recall.maxVectors``."""

    def may_cap(self, content: str) -> bool:
        """Whether ``content`` may be long enough for :attr:`max_vectors` to cut its chunks: a cheap bound
        (at most ``max_chunks`` groups close on their sentence count, and any two neighbouring groups
        hold more than ``passage_chars``), so callers plan only such notes twice."""
        if self.max_vectors <= 0:
            return False
        groups_of_text = self.max_vectors - self.max_chunks - 1
        return groups_of_text <= 0 or len(content) + 1 >= groups_of_text * max(80, self.passage_chars) // 2


def lead_label(content: str) -> str | None:
    m = _LABEL_RE.match(content)
    if not m:
        return None
    label = m.group(1).strip()
    return label if 0 < len(label.split()) <= 4 else None


def title_of(record: MemoryRecord) -> str:
    """Frontmatter ``title``, else the first markdown heading, else a lead label."""
    value = record.frontmatter.get("title")
    if isinstance(value, (str, int, float)) and str(value).strip():
        return str(value).strip()
    m = _HEADING_RE.search(record.content[:2000])
    if m and record.content.lstrip().startswith("#"):
        return m.group(1).strip()
    return lead_label(record.content) or ""


# A numbered twin remnic gives a slug already taken (``x-2``) or a random tail (``x-1a2b3c4d``).
_SLUG_TAIL_RE = re.compile(r"-(?:\d{1,4}|[0-9a-f]{8})$")
_NAME_SPLIT_RE = re.compile(r"[\s_-]+")


def name_title(record: MemoryRecord) -> str:
    """The file name as a title (an Obsidian note's title is its file name: ``Zorblax renovation.md``),
    words split on spaces, ``-`` and ``_``; empty when the name says nothing the text does not: a
    slug remnic made of the memory's first words, its id, or a slug-style name made only of words
    the memory already holds (the title field would count them twice)."""
    stem = record.path.rsplit("/", 1)[-1]
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    if not stem or stem == record.id or stem == record.id.rsplit(":", 1)[-1]:
        return ""
    base = _SLUG_TAIL_RE.sub("", stem)
    slug = slugify(record.content)
    if base == slug or (len(base) >= 20 and slug.startswith(base)):
        return ""
    words = [w for w in _NAME_SPLIT_RE.split(stem) if w]
    if stem == stem.lower() and " " not in stem:
        held = set(re.findall(r"\w+", record.content.lower()))
        if all(w in held or w.isdigit() for w in re.findall(r"\w+", " ".join(words).lower())):
            return ""
    return " ".join(words)


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


def _sentence_spans(text: str, offset: int) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, as offsets into the whole content."""
    out = []
    pos = 0
    for m in [*_SENTENCE_RE.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        piece = text[pos:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append((offset + pos + lead, offset + pos + len(piece.rstrip())))
        if m is not None:
            pos = m.end()
    return out


@dataclass(frozen=True)
class Passage:
    """A stretch of a memory's text (``content[start:end]``) under one heading, within the model's window."""

    start: int
    end: int
    heading: str = ""


def passages_for(content: str, rules: TextRules) -> list[Passage]:
    """Heading/paragraph passages of at most ``passage_chars`` (a short memory is one passage).

    Paragraphs under one heading are merged while they fit; a heading always starts a
    new passage; a paragraph that does not fit is cut at sentence ends (a sentence
    that does not fit alone, at a space).
    """
    limit = max(80, rules.passage_chars)
    if len(content.strip()) <= limit:
        lead = len(content) - len(content.lstrip())
        return [Passage(lead, len(content.rstrip()), "")]
    paragraphs: list[tuple[int, int, str]] = []  # (start, end, heading)
    heading = ""
    pos = 0
    for block in re.split(r"(\n\s*\n)", content):
        start, pos = pos, pos + len(block)
        if not block.strip() or not block.strip("\n\t "):
            continue
        line_pos = start
        para_start = None
        for line in block.splitlines(keepends=True):
            m = _HEADING_RE.match(line)
            if m:
                if para_start is not None:
                    paragraphs.append((para_start, line_pos, heading))
                    para_start = None
                heading = m.group(1).strip()
            elif line.strip() and para_start is None:
                para_start = line_pos
            line_pos += len(line)
        if para_start is not None:
            paragraphs.append((para_start, start + len(block.rstrip()), heading))
    out: list[Passage] = []
    for start, end, head in paragraphs:
        for a, b in _fit_pieces(content, start, end, limit):
            last = out[-1] if out else None
            if last is not None and last.heading == head and b - last.start <= limit and a - last.end <= 4:
                out[-1] = Passage(last.start, b, head)
            else:
                out.append(Passage(a, b, head))
    return out or [Passage(0, len(content), "")]


def _fit_pieces(content: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut content[start:end] into pieces of at most ``limit`` characters at sentence ends, else at spaces."""
    if end - start <= limit:
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    cur_start: int | None = None
    cur_end = start
    for a, b in _sentence_spans(content[start:end], start):
        while b - a > limit:  # one over-long sentence: cut at the last space that fits
            if cur_start is not None:
                pieces.append((cur_start, cur_end))
                cur_start = None
            cut = content.rfind(" ", a, a + limit)
            cut = cut if cut > a else a + limit
            pieces.append((a, cut))
            a = cut + 1 if content[cut : cut + 1] == " " else cut
        if cur_start is not None and b - cur_start > limit:
            pieces.append((cur_start, cur_end))
            cur_start = None
        if cur_start is None:
            cur_start = a
        cur_end = b
    if cur_start is not None:
        pieces.append((cur_start, cur_end))
    return pieces


@dataclass(frozen=True)
class ChunkPlan:
    """What is embedded for one memory: chunk texts, the passage of each, and the passages."""

    texts: list[str]
    passage_of: list[int]
    passages: list[Passage]
    vector_end: int | None = None
    """Where the embedded chunks end in the content when ``max_vectors`` cut them (None: they cover it all)."""


def chunk_plan(content: str, title: str, rules: TextRules) -> ChunkPlan:
    """:func:`plan_chunks`; a note long enough to be capped is planned once for the index and its report."""
    return _plan_memo(content, title, rules) if rules.may_cap(content) else plan_chunks(content, title, rules)


@functools.lru_cache(maxsize=2)
def _plan_memo(content: str, title: str, rules: TextRules) -> ChunkPlan:
    return plan_chunks(content, title, rules)


def plan_chunks(content: str, title: str, rules: TextRules) -> ChunkPlan:
    """Texts to embed for one memory: one per sentence, each carrying its subject, grouped within passages.

    The subject of a sentence is the ``Label:`` that opens its line, else the
    last labelled line before it (a transcript: "Ana: …" lines), else the
    memory's title. A one-sentence memory is one chunk (the content itself).
    Memories with more than ``max_chunks`` sentences are embedded as groups of
    neighbouring sentences; a group never outgrows ``passage_chars``, so every word
    of a long note reaches the model within its window and the vectors grow with
    the note's length only past ``max_chunks`` × ``passage_chars`` characters. Each
    group belongs to the passage (:func:`passages_for`) its first sentence is in. Past
    ``max_vectors`` groups the rest of the note is not embedded (``vector_end`` says where
    that starts): it is found by its words only.
    """
    passages = passages_for(content, rules)
    text = content.strip()
    if not text:
        return ChunkPlan([title] if title else [""], [0], passages)
    labelled: list[tuple[str, str, int]] = []  # (subject, sentence, passage index)
    ends: list[int] = []  # where each sentence of labelled ends in the content
    subject = title
    starts = [p.start for p in passages]
    pos = 0
    for line in content.splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        if not line.strip():
            continue
        own = lead_label(line)
        if own:
            subject = own
        for a, b in _sentence_spans(line, line_start):
            s = content[a:b]
            where = max(0, bisect.bisect_right(starts, a) - 1)
            if labelled and len(s) < rules.chunk_min_chars and labelled[-1][0] == subject and labelled[-1][2] == where:
                labelled[-1] = (subject, f"{labelled[-1][1]} {s}", where)  # glue "Yes!" to its predecessor
                ends[-1] = b
            else:
                labelled.append((subject, s, where))
                ends.append(b)
    if len(labelled) <= 1:
        return ChunkPlan([text], [labelled[0][2] if labelled else 0], passages)
    if len(labelled) > rules.max_chunks:
        size = -(-len(labelled) // rules.max_chunks)
        limit = max(80, rules.passage_chars)
        groups: list[list[tuple[str, str, int]]] = []
        group_ends: list[int] = []
        for item, end in zip(labelled, ends, strict=True):
            g = groups[-1] if groups else None
            if g is None or len(g) >= size or sum(len(x[1]) + 1 for x in g) + len(item[1]) > limit:
                groups.append([item])
                group_ends.append(end)
            else:
                g.append(item)
                group_ends[-1] = end
        labelled = [(g[0][0], " ".join(x[1] for x in g), g[0][2]) for g in groups]
        ends = group_ends
    vector_end = None
    if 0 < rules.max_vectors < len(labelled):
        labelled = labelled[: rules.max_vectors]
        vector_end = ends[len(labelled) - 1]
    texts = []
    for subj, s, _ in labelled:
        if subj and not lead_label(s):
            s = f"{subj}: {s}"
        texts.append(s)
    return ChunkPlan(texts, [w for _, _, w in labelled], passages, vector_end)


def capped_note(record: MemoryRecord, rules: TextRules) -> str | None:
    """What to tell about a memory ``max_vectors`` cuts (None: its vectors cover all of it)."""
    end = chunk_plan(record.content, title_of(record), rules).vector_end
    if end is None:
        return None
    return (
        f"{record.path} ({len(record.content):,} chars) is longer than {end:,} chars: found by its words "
        f"beyond the first {end:,}, by its meaning within them (recall.maxVectors: {rules.max_vectors} vectors)"
    )


def chunks_for(content: str, title: str, rules: TextRules) -> list[str]:
    """The chunk texts of :func:`chunk_plan`."""
    return chunk_plan(content, title, rules).texts


def episode_key(frontmatter: Mapping[str, Any], namespace: str) -> str | None:
    """The episode a memory belongs to: ``episodeId``, else its ``sourceTurnId`` minus the last part,
    else the ``sessionKey`` it was observed in.

    ``sourceTurnId: D3:14`` → episode ``D3``; ``sess-7/turn-2`` → ``sess-7``; a uuid turn of
    ``sessionKey: claude-code:42`` → ``claude-code:42``. Scoped by namespace so two namespaces
    never share an episode.
    """
    ep = frontmatter.get("episodeId")
    if ep is None or str(ep).strip() == "":
        turn = frontmatter.get("sourceTurnId")
        parts = _TURN_SPLIT_RE.split(str(turn).strip()) if turn is not None else []
        if len(parts) >= 2 and "".join(parts[:-1]).strip():
            ep = str(turn).strip()[: -len(parts[-1]) - 1]
        else:  # turn ids that name no session (an agent host's uuids, "L12"): the observed session
            ep = frontmatter.get("sessionKey")
            if not isinstance(ep, str) or not ep.strip():
                return None
    return f"{namespace}\x1f{str(ep).strip()}"


def natural_key(value: Any) -> tuple:
    """Sort key that orders ``D1:9`` before ``D1:10``; any two keys compare (a number sorts before text)."""
    if value is None:
        return ()
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _NUM_RE.split(str(value)) if p)


def _first_time(*values: Any) -> float | None:
    """The first of ``values`` that reads as a time (0.0, 1970-01-01T00:00Z, is one: never ``or``)."""
    for value in values:
        ts = parse_time(value)
        if ts is not None:
            return ts
    return None


def created_ts(record: MemoryRecord) -> float | None:
    # record.created/updated read the user's own keys too (date, lastmod, ...), in common spellings
    return _first_time(record.created, record.updated)


def updated_ts(record: MemoryRecord) -> float | None:
    return _first_time(record.updated, record.created)


def date_words(when: float | datetime | None) -> str:
    """``8 May 2023 Monday d20230508 m202305 y2023``: lets "in May", "2023" or a query's date terms
    (:mod:`.dates`) match what happened then. A ``datetime`` gives its own day (the writer's: see
    :func:`observed_time`), epoch seconds the UTC day."""
    if when is None:
        return ""
    if isinstance(when, datetime):
        dt = when
    else:
        try:
            dt = datetime.fromtimestamp(when, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return ""
    day = dt.date()
    return f"{dt.day} {dt.strftime('%B')} {dt.year} {dt.strftime('%A')} " + " ".join(D.span_tokens(day, day))


def observed_ts(record: MemoryRecord) -> float | None:
    """When the memory's text was written: ``observedAt``, else ``created``, else ``updated``."""
    return _first_time(record.frontmatter.get("observedAt"), record.created, record.updated)


def utc_offset(value: Any) -> timedelta | None:
    """The UTC offset a written time carries (``2024-01-01T00:30:00+02:00``, ``…Z``, RFC 2822's
    ``+0200``); None when it names none (remnic then reads it as UTC)."""
    if isinstance(value, datetime):
        return value.utcoffset()
    if not isinstance(value, str) or not value.strip():
        return None
    text = " ".join(value.strip().split())
    try:
        return datetime.fromisoformat(text).utcoffset()
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).utcoffset()
    except (TypeError, ValueError, IndexError):
        return None


def observed_time(record: MemoryRecord) -> datetime | None:
    """:func:`observed_ts` in the writer's own UTC offset, the one its stamp carries: ``created:
    2024-01-01T00:30:00+02:00`` was written on 1 January, though it is 31 December in UTC, so its
    "yesterday" is 31 December. A stamp with no offset is read as UTC (its day is the UTC day)."""
    for value in (record.frontmatter.get("observedAt"), record.created, record.updated):
        ts = parse_time(value)
        if ts is not None:  # as observed_ts: the first stamp that reads (epoch 0 too)
            try:
                return datetime.fromtimestamp(ts, tz=timezone(utc_offset(value) or timedelta(0)))
            except (OverflowError, OSError, ValueError):
                return None
    return None


def event_dates(record: MemoryRecord) -> list[D.DateSpan]:
    """Dates the memory's text names, relative ones resolved against the day it was written (the
    writer's day: :func:`observed_time`)."""
    return D.find_dates(record.content, D.base_date(observed_time(record)))


@dataclass
class Member:
    """One memory as seen by its episode: enough to order it and borrow its text."""

    path: str
    content: str
    created: float | None
    turn: str | None

    def sort_key(self) -> tuple:
        return (self.created if self.created is not None else float("inf"), natural_key(self.turn), self.path)


@dataclass(frozen=True)
class Context:
    """What a member borrows from its episode: turns ±1 (near), ±2..window (far), the whole passage."""

    near: str
    far: str
    passage: str
    position: int
    members: tuple[str, ...] = ()
    """The passage's memories, one text each (for ``context_vectors: mean``)."""


def episode_contexts(members: Sequence[Member], window: int, max_chars: int) -> dict[str, Context]:
    """path → Context for each short member of one episode (long memories stand alone)."""
    ordered = sorted(members, key=Member.sort_key)
    out: dict[str, Context] = {}
    for i, m in enumerate(ordered):
        if window <= 0 or len(ordered) < 2 or len(m.content) > max_chars:
            continue
        near = [ordered[j].content for j in (i - 1, i + 1) if 0 <= j < len(ordered)]
        far = [ordered[j].content for d in range(2, window + 1) for j in (i - d, i + d) if 0 <= j < len(ordered)]
        texts = tuple(o.content for o in ordered[max(0, i - window) : i + window + 1])
        out[m.path] = Context("\n".join(near), "\n".join(far), "\n".join(texts), i, texts)
    return out


def positions(members: Sequence[Member]) -> dict[str, int]:
    """path → position of each member in its episode's order."""
    return {m.path: i for i, m in enumerate(sorted(members, key=Member.sort_key))}


# Half-width katakana (U+FF61-U+FF9F) are one script's narrow twins: NFKC makes them the usual
# katakana (ｵﾌｨｽ → オフィス, ｶﾞ → ガ). Only these: NFKC elsewhere would change what text means (², ﬁ, ℃).
_HALF_WIDTH_RE = re.compile("[\uff61-\uff9f]+")
# Turkish dotted capital İ lowercases to i + U+0307 (a combining dot no folding removes): it is I, so
# that İzmir and izmir are one word; a dot already after an i (from a lowercased İ) is dropped alike.
_DOTTED_I_RE = re.compile("\u0130|(?<=[iI])\u0307")


def normal_form(text: str) -> str:
    """``text`` as it is analysed (index and query side alike): NFC, so a word typed precomposed and
    one saved decomposed (NFD: macOS file names, some editors) are one word; half-width katakana as
    katakana; Turkish İ as I. ASCII text, and NFC text without those, comes back as it is."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    if _HALF_WIDTH_RE.search(text):
        text = unicodedata.normalize(
            "NFC", _HALF_WIDTH_RE.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
        )
    return _DOTTED_I_RE.sub(lambda m: "I" if m.group(0) == "\u0130" else "", text)


# Scripts written without spaces between words: Han (with 々〆〇), Hiragana, Katakana (with
# its phonetic extensions and half-width forms) and Hangul. Other scripts are never touched.
_CJK_RUN_RE = re.compile(
    "[\u1100-\u11ff\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]+"
)


def _bigrams(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def cjk_bigrams(text: str) -> str:
    """``text`` with each run of CJK characters written as its overlapping bigrams, apart (a lone
    character as itself), so a word-splitting tokenizer finds a word inside an unspaced sentence.
    Text without CJK comes back unchanged, and the result maps to itself."""
    return _CJK_RUN_RE.sub(_bigrams, text) if _CJK_RUN_RE.search(text) else text


def cjk_unigrams(text: str) -> str:
    """The characters of ``text``'s CJK runs of two or more, apart ("" when it has none): indexed
    beside the bigrams so a one-character word (猫, 雨) has a term. Queries keep to bigrams, whose
    rarer terms rank a longer word; a lone character is already its own term."""
    return " ".join(c for m in _CJK_RUN_RE.finditer(text) if len(m.group(0)) > 1 for c in m.group(0))


# Emoji and the other symbols: Unicode's category So as of Unicode 14 (Python 3.11's unicodedata),
# written out so that what an index holds does not depend on the Python that built it.
_SYMBOL_CLASS = (
    "\u00a6\u00a9\u00ae\u00b0\u0482\u058d\u058e\u060e\u060f\u06de\u06e9\u06fd\u06fe\u07f6\u09fa\u0b70"
    "\u0bf3-\u0bf8\u0bfa\u0c7f\u0d4f\u0d79\u0f01-\u0f03\u0f13\u0f15-\u0f17\u0f1a-\u0f1f\u0f34\u0f36\u0f38"
    "\u0fbe-\u0fc5\u0fc7-\u0fcc\u0fce\u0fcf\u0fd5-\u0fd8\u109e\u109f\u1390-\u1399\u166d\u1940\u19de-\u19ff"
    "\u1b61-\u1b6a\u1b74-\u1b7c\u2100\u2101\u2103-\u2106\u2108\u2109\u2114\u2116\u2117\u211e-\u2123\u2125"
    "\u2127\u2129\u212e\u213a\u213b\u214a\u214c\u214d\u214f\u218a\u218b\u2195-\u2199\u219c-\u219f\u21a1\u21a2"
    "\u21a4\u21a5\u21a7-\u21ad\u21af-\u21cd\u21d0\u21d1\u21d3\u21d5-\u21f3\u2300-\u2307\u230c-\u231f"
    "\u2322-\u2328\u232b-\u237b\u237d-\u239a\u23b4-\u23db\u23e2-\u2426\u2440-\u244a\u249c-\u24e9\u2500-\u25b6"
    "\u25b8-\u25c0\u25c2-\u25f7\u2600-\u266e\u2670-\u2767\u2794-\u27bf\u2800-\u28ff\u2b00-\u2b2f\u2b45\u2b46"
    "\u2b4d-\u2b73\u2b76-\u2b95\u2b97-\u2bff\u2ce5-\u2cea\u2e50\u2e51\u2e80-\u2e99\u2e9b-\u2ef3\u2f00-\u2fd5"
    "\u2ff0-\u2ffb\u3004\u3012\u3013\u3020\u3036\u3037\u303e\u303f\u3190\u3191\u3196-\u319f\u31c0-\u31e3"
    "\u3200-\u321e\u322a-\u3247\u3250\u3260-\u327f\u328a-\u32b0\u32c0-\u33ff\u4dc0-\u4dff\ua490-\ua4c6"
    "\ua828-\ua82b\ua836\ua837\ua839\uaa77-\uaa79\ufd40-\ufd4f\ufdcf\ufdfd-\ufdff\uffe4\uffe8\uffed\uffee"
    "\ufffc\ufffd\U00010137-\U0001013f\U00010179-\U00010189\U0001018c-\U0001018e\U00010190-\U0001019c"
    "\U000101a0\U000101d0-\U000101fc\U00010877\U00010878\U00010ac8\U0001173f\U00011fd5-\U00011fdc"
    "\U00011fe1-\U00011ff1\U00016b3c-\U00016b3f\U00016b45\U0001bc9c\U0001cf50-\U0001cfc3\U0001d000-\U0001d0f5"
    "\U0001d100-\U0001d126\U0001d129-\U0001d164\U0001d16a-\U0001d16c\U0001d183\U0001d184\U0001d18c-\U0001d1a9"
    "\U0001d1ae-\U0001d1ea\U0001d200-\U0001d241\U0001d245\U0001d300-\U0001d356\U0001d800-\U0001d9ff"
    "\U0001da37-\U0001da3a\U0001da6d-\U0001da74\U0001da76-\U0001da83\U0001da85\U0001da86\U0001e14f\U0001ecac"
    "\U0001ed2e\U0001f000-\U0001f02b\U0001f030-\U0001f093\U0001f0a0-\U0001f0ae\U0001f0b1-\U0001f0bf"
    "\U0001f0c1-\U0001f0cf\U0001f0d1-\U0001f0f5\U0001f10d-\U0001f1ad\U0001f1e6-\U0001f202"
    "\U0001f210-\U0001f23b\U0001f240-\U0001f248\U0001f250\U0001f251\U0001f260-\U0001f265\U0001f300-\U0001f3fa"
    "\U0001f400-\U0001f6d7\U0001f6dd-\U0001f6ec\U0001f6f0-\U0001f6fc\U0001f700-\U0001f773"
    "\U0001f780-\U0001f7d8\U0001f7e0-\U0001f7eb\U0001f7f0\U0001f800-\U0001f80b\U0001f810-\U0001f847"
    "\U0001f850-\U0001f859\U0001f860-\U0001f887\U0001f890-\U0001f8ad\U0001f8b0\U0001f8b1\U0001f900-\U0001fa53"
    "\U0001fa60-\U0001fa6d\U0001fa70-\U0001fa74\U0001fa78-\U0001fa7c\U0001fa80-\U0001fa86"
    "\U0001fa90-\U0001faac\U0001fab0-\U0001faba\U0001fac0-\U0001fac5\U0001fad0-\U0001fad9"
    "\U0001fae0-\U0001fae7\U0001faf0-\U0001faf6\U0001fb00-\U0001fb92\U0001fb94-\U0001fbca"
)
SYMBOL_RE = re.compile(f"[\U0001f1e6-\U0001f1ff]{{2}}|[{_SYMBOL_CLASS}]")
"""One symbol term: a flag (its two regional indicators) or one character of category So."""


def symbols(text: str) -> list[str]:
    """The emoji and other symbols of ``text`` in order, one term each (🚀, ✨, ©, °; a flag's two
    regional indicators as one, 🇵🇹). tantivy's tokenizer drops every character that is no letter or
    digit, so these are indexed beside the words (as a value of their own) and searched as terms.
    Skin tones, variation selectors and joiners are no symbols: 👍🏽 and ❤️ are 👍 and ❤. Text with
    none (ASCII text never has one) gives [], so it analyses exactly as before."""
    return [] if text.isascii() else SYMBOL_RE.findall(text)
