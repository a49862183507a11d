"""Transcript parsers and message dicts: only words people said become turns; bad input names its line."""

from __future__ import annotations

import json

import pytest

from remnic.errors import ValidationError
from remnic.observe.injected import strip_injected
from remnic.observe.transcripts import detect_format, parse_transcript, turns_from_messages


def jsonl(*objs: object) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


CLAUDE = jsonl(
    {"type": "queue-operation", "operation": "dequeue", "sessionId": "7d1e"},
    {
        "type": "user",
        "uuid": "a1",
        "sessionId": "7d1e",
        "timestamp": "2026-05-02T09:14:03.120Z",
        "message": {"role": "user", "content": "From now on we cut releases every Tuesday."},
    },
    {
        "type": "user",
        "uuid": "a2",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "<system-reminder>\nContents of /home/ana/shop/CLAUDE.md: use tabs\n</system-reminder>",
                },
                {"type": "text", "text": "why does checkout 500 on empty carts?"},
                {"type": "image", "source": {"type": "base64", "data": "iVBOR"}},
            ],
        },
    },
    {
        "type": "user",
        "uuid": "a3",
        "sourceToolAssistantUUID": "b2",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1→import os"}],
        },
        "toolUseResult": {"type": "text"},
    },
    {
        "type": "user",
        "isMeta": True,
        "message": {"role": "user", "content": "Caveat: The messages below were generated"},
    },
    {
        "type": "user",
        "message": {"role": "user", "content": "<command-name>/model</command-name><command-args></command-args>"},
    },
    {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
    {
        "type": "user",
        "isCompactSummary": True,
        "message": {"role": "user", "content": "This session is being continued from a previous conversation..."},
    },
    {
        "type": "attachment",
        "attachment": {"type": "hook_additional_context", "content": ['<remnic-memory count="1">- x</remnic-memory>']},
    },
    {
        "type": "assistant",
        "uuid": "b2",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Empty cart hits None"},
                {"type": "text", "text": "The 500 comes from `cart.total()` on an empty list."},
                {"type": "tool_use", "id": "t2", "name": "Edit", "input": {}},
            ],
        },
    },
    {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "Sub-agent prompt"}},
)


def test_claude_code_keeps_only_the_people_s_words_per_block() -> None:
    parsed = parse_transcript(CLAUDE)
    assert parsed.format == "claude-code" and parsed.session_id == "7d1e"
    assert [(t.role, t.text, t.turn_id) for t in parsed.turns] == [
        ("user", "From now on we cut releases every Tuesday.", "a1"),
        ("user", "why does checkout 500 on empty carts?", "a2"),
        ("assistant", "The 500 comes from `cart.total()` on an empty list.", "b2"),
    ]
    assert parsed.turns[0].timestamp == "2026-05-02T09:14:03.120Z"
    assert parsed.compactions == (7, 8)  # the boundary line and the summary line


def test_turn_indexes_are_line_numbers_and_stay_put_as_the_transcript_grows() -> None:
    before = parse_transcript(CLAUDE).turns
    grown = CLAUDE + jsonl({"type": "user", "uuid": "a9", "message": {"role": "user", "content": "Ana owns billing."}})
    after = parse_transcript(grown).turns
    assert after[: len(before)] == before
    assert [t.index for t in before] == [2, 3, 10]
    assert after[-1].index == 12


CODEX = jsonl(
    {"timestamp": "2026-05-02T09:14:00.000Z", "type": "session_meta", "payload": {"id": "0199c2a1", "cwd": "/x"}},
    {"timestamp": "2026-05-02T09:14:00.010Z", "type": "turn_context", "payload": {"turn_id": "turn-1"}},
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "<permissions instructions>sandbox</permissions instructions>"}],
        },
    },
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>\nUse pytest.\n</INSTRUCTIONS>",
                },
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>\nShow the trailing messages.",
                },
            ],
        },
    },
    {
        "timestamp": "2026-05-02T09:14:03.100Z",
        "type": "response_item",
        "payload": {
            "type": "message",
            "id": "msg_u1",
            "role": "user",
            "content": [{"type": "input_text", "text": "We use pnpm, not npm."}],
        },
    },
    {"type": "event_msg", "payload": {"type": "user_message", "message": "We use pnpm, not npm."}},
    {"type": "response_item", "payload": {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"}]}},
    {
        "type": "response_item",
        "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c7"},
    },
    {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c7", "output": "3 passed"}},
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "assistant",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": "Running the tests now."}],
        },
    },
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "assistant",
            "phase": "final_answer",
            "content": [
                {
                    "type": "output_text",
                    "text": 'Switched the scripts to pnpm.\n\n::git-commit{cwd="/x"}\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-2|note=[x]\n</citation_entries>\n</oai-mem-citation>',
                }
            ],
        },
    },
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": '<remnic-memory count="2">- old</remnic-memory>'}],
            "internal_chat_message_metadata_passthrough": {"content_item_kinds": ["hooks.additional_context"]},
        },
    },
    {"type": "compacted", "payload": {"message": "Summary of earlier work", "replacement_history": []}},
)


def test_codex_rollout_reads_response_items_once_and_cuts_host_spans() -> None:
    parsed = parse_transcript(CODEX)
    assert parsed.format == "codex" and parsed.session_id == "0199c2a1"
    assert [(t.role, t.text, t.interim) for t in parsed.turns] == [
        ("user", "Show the trailing messages.", False),
        ("user", "We use pnpm, not npm.", False),
        ("assistant", "Running the tests now.", True),
        ("assistant", "Switched the scripts to pnpm.", False),
    ]
    assert parsed.turns[1].turn_id == "msg_u1" and parsed.turns[1].timestamp == "2026-05-02T09:14:03.100Z"
    assert parsed.compactions == (13,)


OPENAI = [
    {"role": "system", "content": "You are a shopping assistant."},
    {"role": "developer", "content": "Answer briefly."},
    {"role": "user", "name": "Ana", "content": "I'm vegetarian, and my sister Mia is visiting on the 14th."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": '<remnic-memory count="1">- Ana prefers oat milk</remnic-memory>'},
            {"type": "text", "text": "Plan dinner for us."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}},
        ],
    },
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function"}]},
    {"role": "tool", "tool_call_id": "call_1", "content": '[{"title":"Lentil curry"}]'},
    {"role": "assistant", "content": "Lentil curry works for both of you."},
]


def test_openai_messages_drop_system_tools_and_injected_blocks() -> None:
    for text in (json.dumps(OPENAI), json.dumps({"messages": OPENAI}), jsonl(*OPENAI)):
        parsed = parse_transcript(text)
        assert parsed.format == "openai"
        assert [(t.role, t.text, t.speaker) for t in parsed.turns] == [
            ("user", "I'm vegetarian, and my sister Mia is visiting on the 14th.", "Ana"),
            ("user", "Plan dinner for us.", None),
            ("assistant", "Lentil curry works for both of you.", None),
        ]


ANTHROPIC = {
    "system": "You are a shopping assistant.",
    "messages": [
        {"role": "user", "content": "I'm vegetarian."},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "...", "signature": "..."},
                {"type": "text", "text": "Noted."},
                {"type": "tool_use", "id": "toolu_1", "name": "search_recipes", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "Lentil curry"}],
                },
                {"type": "text", "text": "<system-reminder>Todo list is empty.</system-reminder>"},
                {"type": "text", "text": "Make it spicy."},
            ],
        },
    ],
}


def test_anthropic_messages_keep_text_blocks_only() -> None:
    parsed = parse_transcript(json.dumps(ANTHROPIC))
    assert parsed.format == "anthropic"
    assert [(t.role, t.text, t.index) for t in parsed.turns] == [
        ("user", "I'm vegetarian.", 0),
        ("assistant", "Noted.", 1),
        ("user", "Make it spicy.", 2),
    ]


def test_one_openai_message_on_one_line_is_a_transcript() -> None:
    line = json.dumps({"role": "user", "content": "My manager is Priya Shah.", "name": "Ana"})
    for fmt in ("auto", "openai"):
        parsed = parse_transcript(line + "\n", fmt)
        assert parsed.format == "openai"
        assert [(t.role, t.text, t.speaker, t.turn_id) for t in parsed.turns] == [
            ("user", "My manager is Priya Shah.", "Ana", "L1")
        ]


def test_times_written_other_ways_become_iso_so_relative_dates_resolve() -> None:
    text = "[1683590160] Mel: I went to a pottery class yesterday.\n[8 May 2023] Mel: Yesterday I adopted a dog.\n"
    parsed = parse_transcript(text, "plain")
    assert [t.timestamp for t in parsed.turns] == ["2023-05-08T23:56:00.000Z", "2023-05-08T00:00:00.000Z"]
    stamped = parse_transcript(json.dumps([{"role": "user", "content": "Hi there", "timestamp": "1683590160"}]))
    assert stamped.turns[0].timestamp == "2023-05-08T23:56:00.000Z"
    assert parse_transcript("[2023-05-08T13:56:00+02:00] Mel: Hi.\n").turns[0].timestamp == "2023-05-08T13:56:00+02:00"


def test_plain_lines_name_speakers_and_optional_timestamps() -> None:
    text = (
        "[2023-05-08T13:56:00Z] Caroline: I went to a support group yesterday.\n"
        "\n"
        "Assistant: Noted.\n"
        "System: you are helpful\n"
        "User: We deploy on Fridays.\n"
    )
    parsed = parse_transcript(text)
    assert parsed.format == "plain"
    assert [(t.role, t.speaker, t.timestamp, t.turn_id) for t in parsed.turns] == [
        ("user", "Caroline", "2023-05-08T13:56:00Z", "L1"),
        ("assistant", None, None, "L3"),
        ("user", None, None, "L5"),
    ]


@pytest.mark.parametrize(
    "text,fmt,expected",
    [
        (
            "Ana: hi\nno speaker on this line\n",
            "plain",
            "transcript:2: transcript: 'no speaker on this line' has no `Speaker:` prefix; expected one turn per line as `Speaker: text` (format plain)",
        ),
        (
            "Ana: hi\nhttps://example.com: a link\n",
            "plain",
            "transcript:2: transcript: 'https://example.com: a link' has no `Speaker:` prefix; expected one turn per line as `Speaker: text` (format plain)",
        ),
        (
            "[yesterday] Ana: hi\n",
            "plain",
            "transcript:1: transcript: [yesterday] is not a time (ISO 8601, epoch seconds or a date like 8 May 2023); expected one turn per line as `Speaker: text` (format plain)",
        ),
        (
            '{"type": "user", "message": {"role": "user", "content": "hi"}}\n{"type": "user", "message": \n',
            "auto",
            'transcript:2: transcript: not valid JSON (Expecting value at column 29); expected one JSON object per line with a "type" (user, assistant, system, …) — a Claude Code session file (format claude-code)',
        ),
        (
            '{"type": "session_meta", "payload": {}}\n{"type": "response_item"}\n',
            "codex",
            'transcript:2: transcript: no "type" and "payload" fields; expected one JSON object per line with "type" and "payload" — a Codex rollout file (format codex)',
        ),
        (
            '[{"role": "robot", "content": "x"}]',
            "openai",
            "transcript:1: transcript: messages[0].role is 'robot'; valid roles: user, assistant, system, developer, tool, function; expected a JSON array of {role, content} messages, an object with a messages array, or one message per line (format openai)",
        ),
        (
            '{"system": "s", "messages": [{"role": "user", "content": 5}]}',
            "anthropic",
            'transcript:1: transcript: messages[0].content must be a string or a list of content blocks; expected a JSON object {"system", "messages": [...]} or an array of {role, content} messages (format anthropic)',
        ),
        (
            '[{"role": "user",\n "content": }]',
            "openai",
            "transcript:2: transcript: not valid JSON (Expecting value at column 13); expected a JSON array of {role, content} messages, an object with a messages array, or one message per line (format openai)",
        ),
        (
            '[\n  {"role": "user", "content": "We use Go."},\n  {"role": "user",\n   "content": [{"type": "text"}]}\n]',
            "auto",
            'transcript:3: transcript: messages[1].content[0] is a text block without a "text" string; expected a JSON array of {role, content} messages, an object with a messages array, or one message per line (format openai)',
        ),
        (
            '{"model": "m", "system": "s",\n "messages": [\n  {"role": "user", "content": "ok"},\n  {"role": "user", "content": "ok", "timestamp": "soon"}]}',
            "anthropic",
            'transcript:4: transcript: messages[1].timestamp \'soon\' is not a time (ISO 8601, epoch seconds or a date like 8 May 2023); expected a JSON object {"system", "messages": [...]} or an array of {role, content} messages (format anthropic)',
        ),
        (
            '{"type": "response_item", "payload": {"type": "message", "role": "robot", "content": []}}\n',
            "codex",
            'transcript:1: transcript: payload.role is \'robot\'; valid roles: user, assistant, developer, system; expected one JSON object per line with "type" and "payload" — a Codex rollout file (format codex)',
        ),
        (
            '{"type": "user", "timestamp": "yesterday", "message": {"role": "user", "content": "hi"}}\n',
            "auto",
            "transcript:1: transcript: timestamp 'yesterday' is not an ISO-8601 time; expected one JSON object per line with a \"type\" (user, assistant, system, …) — a Claude Code session file (format claude-code)",
        ),
        (
            '{"type": "user", "message": {"role": "user", "content": [42]}}\n',
            "claude-code",
            'transcript:1: transcript: message content[0] is not a content block (an object with a "type"); expected one JSON object per line with a "type" (user, assistant, system, …) — a Claude Code session file (format claude-code)',
        ),
        (
            "42\n",
            "claude-code",
            'transcript:1: transcript: a JSON int, not an object; expected one JSON object per line with a "type" (user, assistant, system, …) — a Claude Code session file (format claude-code)',
        ),
    ],
)
def test_bad_transcripts_name_the_line_and_the_format_expected(text: str, fmt: str, expected: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_transcript(text, fmt)
    assert str(info.value) == expected
    assert info.value.exit_code == 2


def test_unknown_format_lists_the_valid_ones() -> None:
    with pytest.raises(ValidationError, match=r"valid options: auto, claude-code, codex, openai, anthropic, plain"):
        parse_transcript("Ana: hi", "yaml")


def test_lenient_reading_skips_a_half_written_last_line() -> None:
    text = CLAUDE + '{"type": "user", "message": {"role": "us'
    assert parse_transcript(text, strict=False).turns == parse_transcript(CLAUDE).turns


def test_detection_of_each_format() -> None:
    assert detect_format(CLAUDE) == "claude-code"
    assert detect_format(CODEX) == "codex"
    assert detect_format(json.dumps(OPENAI)) == "openai"
    assert detect_format(jsonl(*OPENAI)) == "openai"
    assert detect_format(json.dumps(ANTHROPIC)) == "anthropic"
    assert detect_format(json.dumps(ANTHROPIC["messages"])) == "anthropic"  # tool_use blocks give it away
    assert detect_format("Ana: hello\nBo: hi\n") == "plain"


def test_message_dicts_take_string_or_blocks_and_optional_fields() -> None:
    turns = turns_from_messages(
        [
            {
                "role": "user",
                "content": "We cut releases every Tuesday.",
                "speaker": "Ana",
                "turnId": "D1:3",
                "timestamp": "2023-05-08T13:56:00Z",
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Noted."}, {"type": "tool_use", "name": "x"}]},
            {"role": "user", "content": "<system-reminder>only host text</system-reminder>"},
            {"role": "user", "content": "epoch time", "timestamp": 1683554160},
        ]
    )
    assert [(t.text, t.speaker, t.turn_id, t.index) for t in turns] == [
        ("We cut releases every Tuesday.", "Ana", "D1:3", 0),
        ("Noted.", None, None, 1),
        ("epoch time", None, None, 3),
    ]
    assert turns[2].timestamp == "2023-05-08T13:56:00.000Z"


def test_message_dicts_report_every_bad_field() -> None:
    with pytest.raises(ValidationError) as info:
        turns_from_messages(
            [{"role": "robot", "content": 1}, {"role": "user", "content": "x", "timestamp": "yesterday"}]
        )
    fields = [p.field for p in info.value.problems]
    assert fields == ["messages[0].role", "messages[0].content", "messages[1].timestamp"]
    assert info.value.problems[0].options == ("user", "assistant")


@pytest.mark.parametrize(
    "text,kept",
    [
        ("<system-reminder>x</system-reminder>Keep me.", "Keep me."),
        ('Before. <remnic-memory count="2">- a\n- b</remnic-memory> After.', "Before. \n After."),
        ("<command-name>/clear", ""),
        ("Stop hook feedback:\n[check.sh]: failing", ""),
        ("Memories from remnic (/m) for 'shop':\n- [fact] x", ""),
        ("[Remnic Memory Recall — 3 memories, auto mode]\n\n- x", ""),
        ('Done.\n::git-commit{cwd="/x"}', "Done."),
        ("Plain words stay.", "Plain words stay."),
    ],
)
def test_injected_text_is_cut(text: str, kept: str) -> None:
    assert strip_injected(text) == kept


@pytest.mark.parametrize("stamp", [1e20, -99999999999, "1 Jan 0001"])
def test_a_time_no_date_can_hold_is_a_field_problem_not_a_crash(stamp: object) -> None:
    from remnic.observe.transcripts import check_messages

    problems = check_messages([{"role": "user", "content": "We ship on Fridays.", "timestamp": stamp}])
    assert [p.field for p in problems] == ["messages[0].timestamp"]
