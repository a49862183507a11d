"""Transcripts and message lists become :class:`~.records.Turn` lists: only words people said.

Formats: ``claude-code`` (session JSONL), ``codex`` (rollout JSONL), ``openai`` (a Chat
Completions or Responses message array, an object with ``messages``, or one message per line),
``anthropic`` (a Messages request: ``{"system", "messages"}`` or the array), ``plain`` (one turn
per line, ``Speaker: text``, optionally ``[2023-05-08T13:56:00Z] Speaker: text``), and ``auto``.

Every format classifies each content block: the user's and the assistant's text is kept with the
host's injected text cut out (:mod:`.injected`); tool calls and results, reasoning, images, system
and developer messages, meta/sidechain lines and compaction summaries are dropped. A turn's index
is its line (JSONL, plain) or message (JSON arrays) number, so it is stable as a transcript grows.

Bad input raises :class:`~remnic.errors.ValidationError` naming the line (or message) and the
format expected; ``strict=False`` (agent hooks reading a live file) skips bad lines instead.
The host JSON-lines formats and the shared reader live in :mod:`.jsonlines`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from remnic.errors import FieldProblem, ValidationError
from remnic.memfile.validate import clean_text

from .dates import message_time as _timestamp
from .injected import strip_injected
from .jsonlines import (
    CLAUDE_TYPES,
    CODEX_TYPES,
    TEXT_BLOCK_TYPES,
    ParsedTranscript,
    Reader,
    block_problem,
    block_texts,
    json_lines,
    parse_claude,
    parse_codex,
    parse_host_jsonl,
)
from .records import ROLES, Turn

__all__ = [
    "FORMATS",
    "MESSAGE_KEYS",
    "SOURCE_FORMATS",
    "TEXT_BLOCK_TYPES",
    "ParsedTranscript",
    "block_problem",
    "block_texts",
    "check_messages",
    "detect_format",
    "parse_transcript",
    "plain_role",
    "turns_from_messages",
]

FORMATS = ("auto", "claude-code", "codex", "openai", "anthropic", "plain")
# Speakers of a plain transcript that are the assistant, or the host (dropped).
ASSISTANT_SPEAKERS = frozenset({"assistant", "ai", "bot", "claude", "codex", "chatgpt", "gpt", "model", "agent"})
HOST_SPEAKERS = frozenset({"system", "developer", "tool"})
# Speakers that name no one: their "I" becomes the configured user name.
GENERIC_SPEAKERS = frozenset({"user", "human", "me", "you"})


# --- OpenAI / Anthropic / message dicts ---

_OPENAI_ROLES = (*ROLES, "system", "developer", "tool", "function")
_RESPONSES_SKIP = frozenset(
    {
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "reasoning",
    }
)


def _message_list(doc: Any, reader: Reader) -> list[Any] | None:
    # An Anthropic request's top-level "system" prompt is host text: only "messages" is read.
    if isinstance(doc, Mapping):
        doc = doc.get("messages")
    if not isinstance(doc, list):
        reader.fail(1, "no messages array")
        return None
    return doc


def _parse_message_array(
    messages: Sequence[Any], reader: Reader, *, line: int | None = None, text: str | None = None
) -> None:
    """Messages of a JSON array (``line`` None: index = array position; ``text`` the document, to
    name the line a bad message starts on) or of one JSONL line."""
    roles = _OPENAI_ROLES if reader.fmt == "openai" else ROLES
    starts: list[int] | None = None

    def fail(i: int, message: str) -> None:
        nonlocal starts
        where_line = line
        if where_line is None and text is not None and reader.strict:
            starts = _message_lines(text) if starts is None else starts
            where_line = starts[i] if i < len(starts) else None
        reader.fail(where_line, message)

    for i, msg in enumerate(messages):
        index = i if line is None else line
        where = f"messages[{i}]" if line is None else "message"
        if not isinstance(msg, Mapping):
            fail(i, f"{where} is a JSON {type(msg).__name__}, not a message object")
            continue
        if msg.get("type") in _RESPONSES_SKIP:
            continue  # Responses API tool items and reasoning
        role = msg.get("role")
        if role not in roles:
            fail(i, f"{where}.role is {role!r}; valid roles: {', '.join(roles)}")
            continue
        if role not in ROLES:
            continue  # system, developer, tool and function messages are host text
        content = msg.get("content")
        if content is not None and not isinstance(content, (str, list)):
            fail(i, f"{where}.content must be a string or a list of content blocks")
            continue
        problem = block_problem(content)
        if problem:
            fail(i, f"{where}.{problem}")
            continue
        stamp = msg.get("timestamp")
        if stamp is not None and _timestamp(stamp) is None:
            fail(
                i,
                f"{where}.timestamp {str(stamp)[:40]!r} is not a time (ISO 8601, epoch seconds or a date like 8 May 2023)",
            )
            continue
        speaker = msg.get("speaker", msg.get("name"))
        reader.add(
            role,
            block_texts(content),
            index,
            turn_id=_turn_id(msg, f"m{index}" if line is None else f"L{line}"),
            positional=_turn_id(msg, "") == "",
            speaker=speaker if isinstance(speaker, str) and speaker.strip() else None,
            timestamp=_timestamp(msg.get("timestamp")),
        )


def _turn_id(msg: Mapping[str, Any], default: str) -> str:
    for key in ("turnId", "id"):
        value = msg.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return default


def _parse_json_document(text: str, reader: Reader) -> None:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        if reader.fmt == "openai" and _first_line_is_object(text):
            for number, obj in json_lines(text, reader):  # one message per line
                _parse_message_array([obj], reader, line=number)
            return
        _fail_json(text, exc, reader)
        return
    if reader.fmt == "openai" and isinstance(doc, Mapping) and "role" in doc and "messages" not in doc:
        _parse_message_array([doc], reader, line=1)  # one message per line, and one line
        return
    messages = _message_list(doc, reader)
    if messages is not None:
        _parse_message_array(messages, reader, text=text)


def _fail_json(text: str, exc: json.JSONDecodeError, reader: Reader) -> None:
    """Name where a JSON document breaks. A document cut off (the error is at the end of the text, or a
    string never closes) is named at its last character, not at the line after a trailing newline."""
    end = len(text.rstrip())
    what = exc.msg if exc.msg.endswith(" at") else f"{exc.msg} at"
    if exc.pos < end and not exc.msg.startswith("Unterminated string"):
        reader.fail(exc.lineno, f"not valid JSON ({what} column {exc.colno})", document=True)
        return
    line = text.count("\n", 0, end) + 1
    column = end - (text.rfind("\n", 0, end) + 1)
    if exc.pos < end:  # an unclosed string: say where it starts
        cause = f"{what} line {exc.lineno} column {exc.colno}"
    else:
        cause = exc.msg
    message = f"not valid JSON: the document is incomplete, the text ends at column {column} ({cause})"
    reader.fail(line, message, document=True)


def _message_lines(text: str) -> list[int]:
    """The line each message of a valid JSON document starts on (the array, or the object's
    ``messages`` array), read with the JSON decoder itself; [] when there is no such array."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")

    def skip(pos: int) -> int:
        match = ws.match(text, pos)
        return match.end() if match else pos

    pos = skip(0)
    if text.startswith("{", pos):
        pos = skip(pos + 1)
        while pos < len(text) and text[pos] != "}":
            key, pos = decoder.raw_decode(text, pos)
            pos = skip(skip(pos) + 1)  # the colon
            if key == "messages" and text.startswith("[", pos):
                break
            _, pos = decoder.raw_decode(text, pos)
            pos = skip(pos)
            pos = skip(pos + 1) if text.startswith(",", pos) else pos
        else:
            return []
    if not text.startswith("[", pos):
        return []
    out: list[int] = []
    pos = skip(pos + 1)
    while pos < len(text) and text[pos] != "]":
        out.append(text.count("\n", 0, pos) + 1)
        _, pos = decoder.raw_decode(text, pos)
        pos = skip(pos)
        pos = skip(pos + 1) if text.startswith(",", pos) else pos
    return out


def _first_line_is_object(text: str) -> bool:
    first = text.strip().splitlines()[0] if text.strip() else ""
    try:
        return isinstance(json.loads(first), Mapping)
    except ValueError:
        return False


# --- plain ---


def plain_role(speaker: str) -> str | None:
    """``user``/``assistant`` for a plain transcript's speaker; None for host speakers (dropped)."""
    name = speaker.strip().lower()
    if name in HOST_SPEAKERS:
        return None
    return "assistant" if name in ASSISTANT_SPEAKERS else "user"


# A time written before the speaker without brackets: "09:15 ", "9:05 PM ", "2026-05-01 10:33 ",
# "2026-05-01T10:33:00Z ".
_CLOCK = r"(?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(?:\s?(?P<half>[AaPp])\.?[Mm]\.?(?!\w))?"
_BARE_TIME_RE = re.compile(
    rf"^(?:(?P<date>\d{{4}}-\d{{2}}-\d{{2}})[ T])?{_CLOCK}(?P<zone>Z|[+-]\d{{2}}:?\d{{2}})?\s+(?=\S)"
)
_CLOCK_RE = re.compile(rf"\s*{_CLOCK}\s*")  # "[09:20] Dev: …": a bracketed clock time (IRC, Slack)
# A numeric date ("28.11.2026 09:00", "28/11/2026", "11/28/2026"), bracketed or before the speaker.
_NUMERIC = r"(?P<first>\d{1,2})(?P<sep>[./])(?P<second>\d{1,2})(?P=sep)(?P<year>\d{4})"
_NUMERIC_RE = re.compile(rf"\s*{_NUMERIC}(?:(?:[ T]|,\s*){_CLOCK})?\s*")
_BARE_NUMERIC_RE = re.compile(rf"^{_NUMERIC}(?:(?:[ T]|,\s*){_CLOCK})?(?=\s+\S)")
DAY_FIRST, MONTH_FIRST = "day first", "month first"


def _numeric_dates(text: str) -> Iterator[re.Match[str]]:
    """The numeric dates a plain transcript's lines start with (bracketed or not), each line read as
    :func:`_parse_plain` reads it."""
    for raw in text.splitlines():
        line = clean_text(raw).strip()
        stamp, sep, _ = line[1:].partition("]") if line.startswith("[") else ("", "", "")
        found = _NUMERIC_RE.fullmatch(stamp) if sep else _BARE_NUMERIC_RE.match(line)
        if found is not None:
            yield found


def numeric_order(text: str) -> str | None:
    """How a transcript writes its numeric dates, told by the dates whose day cannot be a month:
    ``28/11/2026`` makes it :data:`DAY_FIRST`, ``11/28/2026`` :data:`MONTH_FIRST`; None when no date
    tells, or when some tell one way and some the other (then no ambiguous date is guessed)."""
    told = set()
    for m in _numeric_dates(text):
        first, second = int(m.group("first")), int(m.group("second"))
        if first > 12 and second <= 12:
            told.add(DAY_FIRST)
        elif second > 12 and first <= 12:
            told.add(MONTH_FIRST)
    return told.pop() if len(told) == 1 else None


def _numeric_time(m: re.Match[str], order: str | None) -> tuple[str | None, str]:
    """The turn's time from a numeric date, and why there is none. A date whose day cannot be its month
    ("28.11.2026") is read as it must be; "03/04/2027" is April or March, read in the ``order`` the
    transcript's other dates show (:func:`numeric_order`), and not guessed when they show none."""
    first, second = int(m.group("first")), int(m.group("second"))
    if first <= 12 and second <= 12 and first != second and order is None:
        return (
            None,
            "month or day first? the transcript's dates do not tell: none has a day over 12, or they disagree; write it as YYYY-MM-DD",
        )
    month_first = order == MONTH_FIRST if first <= 12 and second <= 12 else second > 12
    day, month = (second, first) if month_first else (first, second)
    if m.group("time") is None:
        return _timestamp(f"{m.group('year')}-{month:02d}-{day:02d}"), "no such date"
    hour, _, rest = m.group("time").partition(":")
    hours = int(hour) % 12 + (12 if (m.group("half") or "a").lower() == "p" else 0) if m.group("half") else int(hour)
    if hours > 23:
        return None, "no such time"
    return _timestamp(f"{m.group('year')}-{month:02d}-{day:02d}T{hours:02d}:{rest}"), "no such date"


def _bare_time(m: re.Match[str]) -> str | None:
    """The turn's time from a time prefix: with its date only (a clock time alone names no day)."""
    hour, _, rest = m.group("time").partition(":")
    hours = int(hour) % 12 + (12 if (m.group("half") or "a").lower() == "p" else 0) if m.group("half") else int(hour)
    if not m.group("date") or hours > 23:
        return None
    return _timestamp(f"{m.group('date')}T{hours:02d}:{rest}{m.group('zone') or ''}")


def _parse_plain(text: str, reader: Reader) -> None:
    order = numeric_order(text)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = clean_text(raw).strip()  # a speaker "\x1b[31mBot" is the assistant
        if not line or line.startswith("#"):
            continue
        timestamp, timed = None, False
        if line.startswith("["):
            stamp, sep, rest = line[1:].partition("]")
            numeric = _NUMERIC_RE.fullmatch(stamp) if sep else None
            # A date alone reads month first with slashes (:mod:`remnic.memfile.times`) unless the
            # transcript's own dates say how it writes them.
            timestamp, timed = (None if numeric is not None and order else _timestamp(stamp)), True
            numeric = numeric if timestamp is None else None
            why = ""
            if numeric is not None:
                timestamp, why = _numeric_time(numeric, order)
            if not sep or (timestamp is None and not _CLOCK_RE.fullmatch(stamp)):
                what = f"an unreadable time ({why})" if why else "not a time"
                reader.fail(
                    number,
                    f"[{stamp[:40]}] is {what} (ISO 8601, epoch seconds or a date like 8 May 2023)",
                )
                continue
            line = rest.strip()
        elif numeric := _BARE_NUMERIC_RE.match(line):
            timestamp, why = _numeric_time(numeric, order)
            if timestamp is None:
                reader.fail(number, f"{numeric.group(0)[:40]!r} is an unreadable time ({why})")
                continue
            timed, line = True, line[numeric.end() :].strip()
        elif bare := _BARE_TIME_RE.match(line):
            # "09:15 Ana: …", "2026-05-01 10:33 Ben: …" (IRC logs, chat exports): a time before the speaker,
            # not the speaker. With its date it is the turn's time; a clock time alone names no day.
            timestamp, timed = _bare_time(bare), True
            line = line[bare.end() :]
        speaker, sep, said = line.partition(":")
        clock = re.fullmatch(r"\s*\d{1,2}", speaker) and re.match(r"\d{2}\b", said)
        if sep and not re.search(r"[^\W\d_]", speaker) and (timed or clock or not speaker.strip().isdigit()):
            # "12:30: …" is a time, not speaker "12"; a name of digits alone ("007") only without a time before it
            reader.fail(
                number,
                f"{speaker.strip()[:40]!r} is not a speaker name (a time goes first: [2026-05-01T09:15:00Z] Ana: text)",
            )
            continue
        # "https://…: text" is a link, not a speaker called "https".
        if not sep or not speaker.strip() or len(speaker) > 60 or not said.strip() or said.startswith("//"):
            reader.fail(number, f"{line[:60]!r} has no `Speaker:` prefix")
            continue
        role = plain_role(speaker)
        if role is None:
            continue
        name = speaker.strip()
        reader.add(
            role,
            [strip_injected(said.strip())],
            number,
            turn_id=f"L{number}",
            positional=True,
            speaker=None if name.lower() in GENERIC_SPEAKERS | ASSISTANT_SPEAKERS else name,
            timestamp=timestamp,
        )


# --- detection and entry points ---


def detect_format(text: str) -> str:
    """The format a transcript is in, judged from its first JSON value or line."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        return "plain"
    first_line = stripped.splitlines()[0].strip()
    try:
        first = json.loads(first_line)
    except ValueError:
        first = None
    if isinstance(first, Mapping):
        kind = first.get("type")
        if "payload" in first and kind in CODEX_TYPES:
            return "codex"
        if kind in CLAUDE_TYPES or "uuid" in first or "sessionId" in first:
            return "claude-code"
        if "role" in first:
            return "openai"
    try:
        doc = json.loads(stripped)
    except ValueError:
        doc = None
    if doc is not None and isinstance(doc, (list, Mapping)):
        return "anthropic" if _looks_anthropic(doc) else "openai"
    if isinstance(first, Mapping):  # JSON lines, a later one broken: report it as a host file
        return "claude-code"
    if re.match(r"\{\s*(\"|$)", first_line):
        # A broken first line of a host file whose other lines read, or a JSON document that does
        # not parse (cut off): the document's error is named where it is.
        return "claude-code" if _host_line_follows(stripped) else "openai"
    if re.match(r"\[\s*(\{|\[|$)", first_line):  # a JSON array that does not parse
        return "openai"
    return "plain"


def _host_line_follows(text: str, limit: int = 50) -> bool:
    """Whether one of the lines after the first (up to ``limit``) is a Claude Code or Codex line."""
    for raw in text.split("\n")[1 : limit + 1]:
        try:
            obj = json.loads(raw) if raw.strip() else None
        except ValueError:
            continue
        if isinstance(obj, Mapping) and (obj.get("type") in CLAUDE_TYPES | CODEX_TYPES or "sessionId" in obj):
            return True
    return False


def _looks_anthropic(doc: Any) -> bool:
    if isinstance(doc, Mapping):
        if "system" in doc:
            return True
        doc = doc.get("messages")
    if not isinstance(doc, list):
        return False
    anthropic_blocks = {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
    for msg in doc:
        content = msg.get("content") if isinstance(msg, Mapping) else None
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") in anthropic_blocks for b in content
        ):
            return True
    return False


_PARSERS = {
    "claude-code": parse_claude,
    "codex": parse_codex,
    "openai": _parse_json_document,
    "anthropic": _parse_json_document,
    "plain": _parse_plain,
}


def parse_transcript(
    text: str, fmt: str = "auto", *, source: str = "transcript", strict: bool = True
) -> ParsedTranscript:
    """Read a transcript in ``fmt`` (``auto`` detects it). ``source`` names it in error messages."""
    if fmt not in FORMATS:
        raise ValidationError.single("format", f"unknown transcript format {fmt!r}", options=FORMATS)
    text = text.lstrip("\ufeff")
    chosen = detect_format(text) if fmt == "auto" else fmt
    reader = Reader(chosen, source, strict)
    reader.guessed = fmt == "auto" and chosen in ("openai", "anthropic")
    if fmt == "auto" and chosen in ("claude-code", "codex"):
        parse_host_jsonl(text, reader)
    else:
        _PARSERS[chosen](text, reader)
    return reader.result()


def turns_from_messages(messages: Any, *, field: str = "messages", allow_empty: bool = False) -> list[Turn]:
    """Turns from the API's message dicts ``{role, content, speaker?, turnId?, timestamp?}``.

    ``content`` is a string or content blocks (text blocks kept, host text cut out, tool blocks
    dropped). Every problem is reported at once, each naming its field; messages left with no
    words after the host text is cut are not turns. ``index`` is the message's position here: a
    session buffer renumbers turns with its own sequence. ``allow_empty``: no messages at all is no
    turns (a flush of what the session already holds), not an error.
    """
    problems = check_messages(messages, field=field, allow_empty=allow_empty)
    if problems:
        raise ValidationError(problems[0].describe() if len(problems) == 1 else f"invalid {field}", problems=problems)
    reader = Reader("openai", field, strict=True)
    for i, msg in enumerate(messages):
        speaker = msg.get("speaker") or msg.get("name")  # an OpenAI message's name is its speaker
        reader.add(
            msg["role"],
            block_texts(msg["content"]),
            i,
            turn_id=_turn_id(msg, "") or None,
            speaker=speaker.strip() if isinstance(speaker, str) and speaker.strip() else None,
            timestamp=_timestamp(msg.get("timestamp")),
            kept=json.dumps(kept, sort_keys=True, ensure_ascii=False) if (kept := _kept(msg)) else "",
        )
    return list(reader.turns)


def _kept(msg: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _cleaned(msg[k]) for k in ("name", "sourceFormat", "parts") if msg.get(k) is not None}


def _cleaned(value: Any) -> Any:
    """A kept field's strings as the turn's own text is cleaned (the archive keeps them)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        return {k: _cleaned(v) for k, v in value.items()}
    return [_cleaned(v) for v in value] if isinstance(value, list) else value


MESSAGE_KEYS = ("role", "content", "speaker", "turnId", "timestamp", "name", "sourceFormat", "parts")
"""The keys of an API message (POST observe, the observe tool); host transcripts are parsed elsewhere."""
SOURCE_FORMATS = ("openai", "anthropic", "openclaw", "pi", "lossless-claw", "remnic")
"""``sourceFormat`` values the original Remnic's clients send (seed 003)."""


_TYPED_KEYS: list[tuple[str, tuple[type, ...], str]] = [
    (key, (str,), "a string") for key in ("speaker", "name", "sourceFormat")
]
_TYPED_KEYS += [("turnId", (str, int), "a string or an integer"), ("parts", (list,), "an array of objects")]


def check_messages(messages: Any, *, field: str = "messages", allow_empty: bool = False) -> list[FieldProblem]:
    """Every problem with a list of message dicts, each naming its field and the valid options."""
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        return [FieldProblem(field, "must be an array of {role, content} objects")]
    if not messages and not allow_empty:
        return [
            FieldProblem(
                field,
                "must be a non-empty array of {role, content} objects (an empty one only with flush: true, "
                "which flushes the turns the session already holds)",
            )
        ]
    problems: list[FieldProblem] = []
    for i, msg in enumerate(messages):
        where = f"{field}[{i}]"
        if not isinstance(msg, Mapping):
            problems.append(FieldProblem(where, "must be an object with role and content"))
            continue
        if msg.get("role") not in ROLES:
            problems.append(FieldProblem(f"{where}.role", f"unknown role {msg.get('role')!r}", options=ROLES))
        content = msg.get("content")
        if not isinstance(content, (str, list)):
            problems.append(FieldProblem(f"{where}.content", "must be a string or a list of content blocks"))
        elif block_problem(content):
            problems.append(FieldProblem(f"{where}.content", str(block_problem(content)).split(" ", 1)[1]))
        # A misspelt key ("speakr") must not pass silently: the turn would lose what it meant to say.
        for key in sorted(set(msg) - set(MESSAGE_KEYS), key=str):
            problems.append(FieldProblem(f"{where}.{key}", "unknown field", options=MESSAGE_KEYS))
        for key, kinds, what in _TYPED_KEYS:
            value = msg.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
                problems.append(FieldProblem(f"{where}.{key}", f"must be {what}, got {type(value).__name__}"))
        parts, fmt = msg.get("parts"), msg.get("sourceFormat")
        if isinstance(parts, list) and not all(isinstance(part, Mapping) for part in parts):
            problems.append(FieldProblem(f"{where}.parts", "must be an array of objects (structured parts)"))
        if isinstance(fmt, str) and fmt not in SOURCE_FORMATS:
            problems.append(FieldProblem(f"{where}.sourceFormat", f"unknown format {fmt!r}", options=SOURCE_FORMATS))
        stamp = msg.get("timestamp")
        if stamp is not None and _timestamp(stamp) is None:
            problems.append(
                FieldProblem(f"{where}.timestamp", "must be a time: ISO 8601, epoch seconds or a date like 8 May 2023")
            )
    return problems
