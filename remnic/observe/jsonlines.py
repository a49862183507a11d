"""Host transcripts read one JSON line at a time: Claude Code sessions and Codex rollouts.

Also the parse state every transcript format shares (:class:`Reader`) and the content-block rules
(:func:`block_texts`). :func:`parse_host_lines` reads a piece of a host file that starts after
``start_line`` earlier lines, numbering its turns as a read of the whole file would, so an agent
hook reading from a byte offset pays for the new lines only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from remnic.errors import FieldProblem, ValidationError
from remnic.memfile.validate import clean_text

from .dates import message_time as _timestamp
from .injected import strip_injected
from .records import ROLES, Turn

TEXT_BLOCK_TYPES = ("text", "input_text", "output_text")
CLAUDE_TYPES = frozenset(
    {"user", "assistant", "system", "attachment", "summary", "file-history-snapshot", "queue-operation", "progress"}
)
CODEX_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_CLAUDE_HOST_FLAGS = ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly", "isSidechain", "isApiErrorMessage")
# The model Claude Code names on an assistant line it wrote itself ("API Error: …", "No response requested.").
_CLAUDE_SYNTHETIC_MODEL = "<synthetic>"
EXPECT = {
    "claude-code": 'one JSON object per line with a "type" (user, assistant, system, …) — a Claude Code session file',
    "codex": 'one JSON object per line with "type" and "payload" — a Codex rollout file',
    "openai": "a JSON array of {role, content} messages, an object with a messages array, or one message per line",
    "anthropic": 'a JSON object {"system", "messages": [...]} or an array of {role, content} messages',
    "plain": "one turn per line as `Speaker: text`",
}
# Auto-detection of a text that starts like a JSON document but does not parse: both JSON formats were tried.
EXPECT_JSON_DOCUMENT = (
    "a JSON document: an array of {role, content} messages or an object with a messages array (format openai), "
    'or {"system", "messages": [...]} (format anthropic)'
)


@dataclass(frozen=True)
class ParsedTranscript:
    """The turns of a transcript, the format it was read as, and where the host compacted it.

    ``compactions`` holds the index of each compaction boundary or summary: the host threw
    context away there, which is a reason to flush the session's buffer.
    """

    format: str
    turns: tuple[Turn, ...]
    compactions: tuple[int, ...] = ()
    session_id: str | None = None


class Reader:
    """Shared state of one parse: where we are, how strict, what was found."""

    def __init__(self, fmt: str, source: str, strict: bool) -> None:
        self.fmt = fmt
        self.source = source
        self.strict = strict
        self.turns: list[Turn] = []
        self.compactions: list[int] = []
        self.session_id: str | None = None
        self.guessed = False
        """The format was auto-detected from a text that starts like a JSON document (openai or anthropic)."""

    def fail(self, line: int | None, message: str, field: str = "transcript", *, document: bool = False) -> None:
        """Raise (strict) naming the line and the format expected; lenient readers skip. ``document``: the
        text is no JSON document at all, so a guessed format names every JSON format it could have been."""
        if not self.strict:
            return
        expected = f"{EXPECT[self.fmt]} (format {self.fmt})"
        if document and self.guessed:
            expected = EXPECT_JSON_DOCUMENT
        problem = FieldProblem(field, f"{message}; expected {expected}")
        problem.path, problem.line = self.source, line
        raise ValidationError(problem.describe(), problems=[problem])

    def add(self, role: str, texts: Iterable[str], index: int, **extra: Any) -> None:
        # Every format's turns pass here: control characters and terminal escapes never reach the
        # buffer, the archive or a memory file (a NUL makes the file malformed, git calls it binary).
        text = clean_text("\n\n".join(t for t in texts if t))
        for key in ("speaker", "turn_id"):
            if isinstance(extra.get(key), str):
                extra[key] = cleaned if (cleaned := clean_text(extra[key])).strip() else None
        if text.strip():
            self.turns.append(Turn(role=role, text=text, index=index, **extra))

    def result(self) -> ParsedTranscript:
        return ParsedTranscript(self.fmt, tuple(self.turns), tuple(self.compactions), self.session_id)


def block_texts(content: Any) -> list[str]:
    """The text of a message's content (a string or content blocks), host text cut, per block.

    Only text blocks count: tool calls and results, reasoning, images and documents are dropped.
    """
    if isinstance(content, str):
        return [strip_injected(content)]
    out: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                out.append(strip_injected(block))
            elif (
                isinstance(block, Mapping)
                and block.get("type") in TEXT_BLOCK_TYPES
                and isinstance(block.get("text"), str)
            ):
                out.append(strip_injected(block["text"]))
    return [t for t in out if t]


def block_problem(content: Any) -> str | None:
    """What is wrong with a message's content blocks, or None: every block is a string or an object
    with a ``type``, and a text block has its ``text``."""
    if not isinstance(content, list):
        return None
    for i, block in enumerate(content):
        if isinstance(block, str):
            continue
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            return f'content[{i}] is not a content block (an object with a "type")'
        if block["type"] in TEXT_BLOCK_TYPES and not isinstance(block.get("text"), str):
            return f'content[{i}] is a {block["type"]} block without a "text" string'
    return None


def json_lines(text: str, reader: Reader, start_line: int = 0) -> Iterable[tuple[int, Mapping[str, Any]]]:
    """Each JSON object line of ``text`` with its number, counted after ``start_line`` earlier lines."""
    # JSON lines end at "\n" only: a raw U+2028 or \x85 inside a string (JSON.stringify writes them) is no break.
    for number, raw in enumerate(text.split("\n"), start=start_line + 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            # "Unterminated string starting at" names its own "at": one, not "at at column 26"
            at = "" if exc.msg.endswith(" at") else " at"
            reader.fail(number, f"not valid JSON ({exc.msg}{at} column {exc.colno})")
            continue
        if not isinstance(obj, Mapping):
            reader.fail(number, f"a JSON {type(obj).__name__}, not an object")
            continue
        yield number, obj


# --- Claude Code ---


def parse_claude(text: str, reader: Reader) -> None:
    for number, obj in json_lines(text, reader):
        _claude_line(number, obj, reader)


def _claude_line(number: int, obj: Mapping[str, Any], reader: Reader) -> None:
    kind = obj.get("type")
    if not isinstance(kind, str):
        reader.fail(number, 'no "type" field')
        return
    if reader.session_id is None and isinstance(obj.get("sessionId"), str):
        reader.session_id = obj["sessionId"]
    if obj.get("isCompactSummary") or (kind == "system" and obj.get("subtype") == "compact_boundary"):
        reader.compactions.append(number)
    if kind not in ("user", "assistant") or any(obj.get(flag) for flag in _CLAUDE_HOST_FLAGS):
        return  # meta lines, attachments (hook output), summaries, sub-agent traffic
    if "toolUseResult" in obj or "sourceToolAssistantUUID" in obj:
        return  # a tool result carried in a user-role line
    message = obj.get("message")
    if not isinstance(message, Mapping) or message.get("role", kind) not in ROLES:
        reader.fail(number, f'a "{kind}" line without a message {{role, content}}')
        return
    if message.get("model") == _CLAUDE_SYNTHETIC_MODEL:
        return  # the host's own words in the assistant's place: an API error, "No response requested."
    if not _line_fields_ok(number, obj.get("timestamp"), message.get("content"), reader):
        return
    reader.add(
        str(message.get("role", kind)),
        block_texts(message.get("content")),
        number,
        turn_id=obj.get("uuid") if isinstance(obj.get("uuid"), str) else f"L{number}",
        positional=not isinstance(obj.get("uuid"), str),
        host_id=isinstance(obj.get("uuid"), str),
        timestamp=_timestamp(obj.get("timestamp")),
    )


def _line_fields_ok(number: int, stamp: Any, content: Any, reader: Reader) -> bool:
    """A host line's timestamp reads and its content blocks are blocks; else fail (strict) or skip."""
    if stamp is not None and _timestamp(stamp) is None:
        reader.fail(number, f"timestamp {str(stamp)[:40]!r} is not an ISO-8601 time")
        return False
    problem = block_problem(content)
    if problem:
        reader.fail(number, f"message {problem}")
        return False
    return True


# --- Codex ---

_CODEX_ROLES = (*ROLES, "developer", "system")


# Codex labels each content item of a message with its kind: what the person typed is ``user.text``
# (``user.…``); AGENTS.md, the environment, a selected skill's SKILL.md and hook output are the host's.
# An item it could not label (``unknown``) is kept: its host text is cut by its tags as before.
_CODEX_PERSON_KIND = "user."
_CODEX_UNLABELLED = "unknown"


def _codex_kinds(payload: Mapping[str, Any]) -> list[Any] | None:
    meta = payload.get("internal_chat_message_metadata_passthrough")
    kinds = meta.get("content_item_kinds") if isinstance(meta, Mapping) else None
    return kinds if isinstance(kinds, list) else None


def _codex_is_hook_context(payload: Mapping[str, Any]) -> bool:
    kinds = _codex_kinds(payload)
    return kinds is not None and "hooks.additional_context" in kinds


def _codex_person_content(payload: Mapping[str, Any]) -> Any:
    """A user-role message's content without the items Codex labels as its own (one kind per item);
    content without such labels, or labels that do not match it item for item, is kept whole."""
    content, kinds = payload.get("content"), _codex_kinds(payload)
    if payload.get("role") != "user" or kinds is None or not isinstance(content, list) or len(kinds) != len(content):
        return content
    return [
        item
        for item, kind in zip(content, kinds, strict=True)
        if not isinstance(kind, str) or kind == _CODEX_UNLABELLED or kind.startswith(_CODEX_PERSON_KIND)
    ]


def parse_codex(text: str, reader: Reader) -> None:
    for number, obj in json_lines(text, reader):
        _codex_line(number, obj, reader)


def _codex_line(number: int, obj: Mapping[str, Any], reader: Reader) -> None:
    kind, payload = obj.get("type"), obj.get("payload")
    if not isinstance(kind, str) or not isinstance(payload, Mapping):
        reader.fail(number, 'no "type" and "payload" fields')
        return
    if kind == "session_meta" and isinstance(payload.get("id"), str):
        reader.session_id = reader.session_id or payload["id"]
    if kind == "compacted" or (kind == "event_msg" and payload.get("type") == "context_compacted"):
        reader.compactions.append(number)
    # event_msg user_message/agent_message mirror response_item messages: one source only.
    if kind != "response_item" or payload.get("type") != "message":
        return
    role = payload.get("role")
    if role not in _CODEX_ROLES:
        reader.fail(number, f"payload.role is {role!r}; valid roles: {', '.join(_CODEX_ROLES)}")
        return
    if role not in ROLES or _codex_is_hook_context(payload):
        return  # developer/system instructions, hook additional context
    if not _line_fields_ok(number, obj.get("timestamp"), payload.get("content"), reader):
        return
    reader.add(
        role,
        block_texts(_codex_person_content(payload)),
        number,
        turn_id=payload["id"] if isinstance(payload.get("id"), str) else f"L{number}",
        positional=not isinstance(payload.get("id"), str),
        host_id=isinstance(payload.get("id"), str),
        timestamp=_timestamp(obj.get("timestamp")),
        interim=payload.get("phase") == "commentary",
    )


def parse_host_jsonl(text: str, reader: Reader, start_line: int = 0) -> None:
    """Auto-detected host JSONL: each line read by its own shape (Codex lines carry a payload)."""
    for number, obj in json_lines(text, reader, start_line):
        if "payload" in obj and obj.get("type") in CODEX_TYPES:
            _codex_line(number, obj, reader)
        else:
            _claude_line(number, obj, reader)


def parse_host_lines(
    text: str, start_line: int, *, source: str = "transcript", strict: bool = False
) -> ParsedTranscript:
    """Whole lines of a Claude Code or Codex file that follow ``start_line`` earlier lines: each line
    read by its own shape, numbered as in the whole file (turn indexes and ``L<line>`` ids)."""
    reader = Reader("claude-code", source, strict)
    parse_host_jsonl(text, reader, start_line)
    return reader.result()
