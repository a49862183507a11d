"""plan_observations end to end, the verdict ledger, and the LoCoMo measurement (coverage, compression)."""

from __future__ import annotations

import glob
import json
import re
import threading
from datetime import datetime
from pathlib import Path

import pytest

from remnic.bench.locomo import default_data_dir as locomo_data_dir
from remnic.config import ObserveSettings
from remnic.index.embed import get_embedder
from remnic.observe.buffer import SessionBuffer
from remnic.observe.ledger import VERDICT_LEDGER, append_verdicts, verdict_event, verdict_stats
from remnic.observe.pipeline import plan_observations
from remnic.observe.records import Turn
from remnic.observe.transcripts import turns_from_messages

MESSAGES = [
    {"role": "user", "speaker": "Ana", "turnId": "t1", "timestamp": "2026-05-04T09:00:00Z", "content": "Hi!"},
    {
        "role": "user",
        "speaker": "Ana",
        "turnId": "t2",
        "timestamp": "2026-05-04T09:01:00Z",
        "content": "The staging DB port is 5432. We decided to cut releases every Tuesday.",
    },
    {
        "role": "assistant",
        "turnId": "t3",
        "timestamp": "2026-05-04T09:01:05Z",
        "content": "Noted. I'll update the docs.",
    },
    {
        "role": "user",
        "speaker": "Ana",
        "turnId": "t4",
        "timestamp": "2026-05-04T09:05:00Z",
        "content": "Actually, the staging DB port is 5433, not 5432. My build is currently failing on CI.",
    },
    {
        "role": "user",
        "speaker": "Ana",
        "turnId": "t5",
        "timestamp": "2026-05-04T09:06:00Z",
        "content": "Reminder: we decided to cut releases every Tuesday. I think the deploy takes 20 minutes.",
    },
]


def test_observations_are_deterministic_and_cite_their_turns() -> None:
    turns = turns_from_messages(MESSAGES)
    settings = ObserveSettings()
    first = plan_observations(turns, session_key="s1", settings=settings)
    again = plan_observations(turns_from_messages(MESSAGES), session_key="s1", settings=settings)
    assert [o.to_dict() for o in first] == [o.to_dict() for o in again]
    summary = [(o.fact.category, o.verdict.kind, o.proposed_status, o.source_turn_ids) for o in first]
    assert summary == [
        ("fact", "accept", "active", ("t2",)),
        ("decision", "accept", "active", ("t2", "t5")),  # said twice: one observation citing both turns
        ("correction", "accept", "active", ("t4",)),
        ("fact", "reject", None, ("t4",)),
        ("fact", "defer", "pending_review", ("t5",)),
    ]
    assert all(re.fullmatch(r"obs_[0-9a-f]{20}", o.id) for o in first)
    assert first[0].observed_at == "2026-05-04T09:01:00.000Z" == first[0].valid_at
    assert first[0].fact.supersession_keys() == first[2].fact.supersession_keys() == ["staging-db::port"]
    assert plan_observations(turns, session_key="s2", settings=settings)[0].id != first[0].id
    as_json = first[1].to_dict()
    assert as_json["judgeAccepted"] is True and as_json["resultingPrimitiveId"] is None
    assert as_json["sessionId"] == "s1" and as_json["sourceTurnIds"] == ["t2", "t5"]


def test_settings_change_the_plan() -> None:
    turns = turns_from_messages(MESSAGES)
    strict = plan_observations(turns, session_key="s", settings=ObserveSettings(min_importance_level="high"))
    assert {o.importance.level for o in strict} <= {"high", "critical"} and strict
    unjudged = plan_observations(turns, session_key="s", settings=ObserveSettings(judge=False))
    assert {o.verdict.kind for o in unjudged} == {"accept"}
    reviewed = plan_observations(turns, session_key="s", settings=ObserveSettings(review_below_confidence=0.99))
    assert {o.proposed_status for o in reviewed if o.verdict.kind == "accept"} == {"pending_review"}


def test_turns_without_timestamps_take_the_given_clock() -> None:
    turns = [Turn("user", "I prefer tabs over spaces.", 0)]
    (observation,) = plan_observations(
        turns, session_key="s", settings=ObserveSettings(), now="2026-01-01T00:00:00.000Z"
    )
    assert observation.observed_at == "2026-01-01T00:00:00.000Z" and observation.valid_at is None
    assert observation.fact.content == "The user prefers tabs over spaces."


def test_what_one_turn_says_in_several_sentences_is_one_fact() -> None:
    said = (
        "I joined the pottery club in March. I made two bowls and a vase there. It was harder than I expected."
        " The club fee is 40 euros."
    )
    turns = [
        Turn("user", said, 0, turn_id="a", speaker="Mel", timestamp="2026-05-04T09:00:00Z"),
        Turn("user", "It was harder than I expected.", 1, turn_id="b", speaker="Mel", timestamp="2026-05-04T09:01:00Z"),
    ]
    observations = plan_observations(turns, session_key="s", settings=ObserveSettings())
    contents = [o.fact.content for o in observations]
    # one fact of the first turn's statements, the sentence leaning on them for its subject included;
    # the stated value stays apart (supersession reads it alone), as does a pronoun-led turn on its own
    assert contents[0] == (
        "Mel joined the pottery club in March. Mel made two bowls and a vase there. It was harder than Mel expected."
    )
    assert observations[0].proposed_status == "active" and observations[0].source_turn_ids == ("a",)
    assert contents[1] == "The club fee is 40 euros." and observations[1].fact.structured_attributes
    assert observations[2].source_turn_ids == ("b",) and observations[2].verdict.kind == "defer"


def test_a_persons_facts_about_us_name_them_and_the_listeners_name_is_left_out() -> None:
    turns = [
        Turn("user", "How often do you go to the park?", 0, turn_id="a", speaker="Maria"),
        Turn("user", "Thanks, Maria! We go three times a week; it keeps us on track.", 1, turn_id="b", speaker="John"),
        Turn(
            "user",
            "I made pizza with my kids, Maria. We baked it in the old stone oven.",
            2,
            turn_id="c",
            speaker="John",
        ),
        Turn(
            "user", "Our roses bloomed in the garden. John and I planted them in May.", 3, turn_id="d", speaker="Maria"
        ),
    ]
    contents = [o.fact.content for o in plan_observations(turns, session_key="s", settings=ObserveSettings())]
    assert contents == [
        "John and others go three times a week; it keeps them on track.",
        "John made pizza with their kids. We baked it in the old stone oven.",  # named already: "we" stays
        "Our roses bloomed in the garden. John and Maria planted them in May.",
    ]
    said = [Turn("user", "The move to the US changed us; our plans too.", 0, turn_id="e", speaker="Ana")]
    assert [o.fact.content for o in plan_observations(said, session_key="s", settings=ObserveSettings())] == [
        "The move to the US changed Ana and others; their plans too."  # the country is not "us"
    ]
    unnamed = [Turn("user", "We moved to Berlin in 2020.", 0, turn_id="f")]  # no speaker: "the user"
    assert [o.fact.content for o in plan_observations(unnamed, session_key="s", settings=ObserveSettings())] == [
        "The user and others moved to Berlin in 2020."
    ]


def test_an_answer_carrying_its_question_cites_the_asking_turn() -> None:
    turns = [
        Turn("user", "Wow! Where is it?", 0, turn_id="q", speaker="Jon"),
        Turn("user", "Thanks! It's on Rua Augusta. It gets busy on Saturdays.", 1, turn_id="a", speaker="Gina"),
        Turn("user", "Do you like it there?", 2, turn_id="q2", speaker="Jon"),
        Turn("user", "My favourite part is the morning light.", 3, turn_id="a2", speaker="Gina"),
    ]
    observations = plan_observations(turns, session_key="s", settings=ObserveSettings())
    assert [(o.fact.content, o.source_turn_ids) for o in observations] == [
        ('Gina, asked "Where is it?": It\'s on Rua Augusta.', ("a", "q")),  # its own turn first
        ("Gina's favourite part is the morning light.", ("a2",)),  # stands alone: the question is not in it
    ]


def test_near_duplicates_fold_with_the_real_model_but_different_values_do_not() -> None:
    turns = [
        Turn("user", "I really love hiking in the Alps.", 0, turn_id="a"),
        Turn("user", "I really love hiking in the Alps!!", 1, turn_id="b"),
        Turn("user", "I really love hiking in the mountains of the Alps.", 2, turn_id="c"),
        Turn("user", "The staging DB port is 5432.", 3, turn_id="d"),
        Turn("user", "The staging DB port is 5433.", 4, turn_id="e"),
    ]
    settings = ObserveSettings(user_name="Ana", duplicate_similarity_floor=0.9)
    embed = get_embedder().embed
    folded = plan_observations(turns, session_key="s", settings=settings, embed=embed, now="2026-01-01T00:00:00Z")
    assert [o.source_turn_ids for o in folded] == [("a", "b", "c"), ("d",), ("e",)]
    exact_only = plan_observations(turns, session_key="s", settings=settings, now="2026-01-01T00:00:00Z")
    assert [o.source_turn_ids for o in exact_only] == [("a", "b"), ("c",), ("d",), ("e",)]


def test_verdict_ledger_lines_and_stats(tmp_path: Path) -> None:
    observations = plan_observations(turns_from_messages(MESSAGES), session_key="s1", settings=ObserveSettings())
    events = [
        verdict_event(o, "s1", ts=f"2026-05-04T10:00:0{i}.000Z", elapsed_ms=2) for i, o in enumerate(observations)
    ]
    assert append_verdicts(tmp_path, events[:2]) and append_verdicts(tmp_path, events[2:])
    path = tmp_path / VERDICT_LEDGER
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines == events
    assert set(lines[0]) >= {"version", "category", "ts", "verdictKind", "reason", "deferrals", "elapsedMs"}
    assert lines[0]["category"] == "EXTRACTION_JUDGE_VERDICT" and len(lines[0]["contentHash"]) == 64
    with path.open("a") as fh:
        fh.write("not json\n\n" + json.dumps({"category": "OTHER"}) + "\n")
    stats = verdict_stats(tmp_path)
    assert (stats["total"], stats["accept"], stats["reject"], stats["defer"], stats["malformed"]) == (5, 3, 1, 1, 2)
    assert stats["firstTs"] == "2026-05-04T10:00:00.000Z" and stats["lastTs"] == "2026-05-04T10:00:04.000Z"
    assert stats["lastObservedAt"] == "2026-05-04T09:06:00.000Z" and stats["deferRate"] == 0.2
    assert verdict_stats(tmp_path / "missing")["total"] == 0
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert append_verdicts(blocked, events) is False  # telemetry never fails the caller


def test_a_verdict_written_twice_is_counted_once_with_the_original_time(tmp_path: Path) -> None:
    observations = plan_observations(turns_from_messages(MESSAGES), session_key="s1", settings=ObserveSettings())
    ts = "2026-05-04T10:00:00.000Z"

    def lines(elapsed_ms: int, **extra: object) -> list[dict[str, object]]:
        base = [verdict_event(o, "s1", ts=ts, elapsed_ms=elapsed_ms) for o in observations]
        return [{**e, "flushId": "flush_a", "flushTurns": 10, **extra} for e in base]

    # A process found flush_a committed and wrote its verdicts ("recovered", no time of their own);
    # the process that committed it wrote them too, later; then a replay after another crash.
    append_verdicts(tmp_path, lines(0, recovered=True))
    recovered_only = verdict_stats(tmp_path)
    assert recovered_only["total"] == len(observations) and recovered_only["turnsPerSecond"] is None
    append_verdicts(tmp_path, lines(2000))
    append_verdicts(tmp_path, lines(0, recovered=True))
    stats = verdict_stats(tmp_path)
    assert stats["total"] == len(observations) and stats["accept"] == recovered_only["accept"]
    assert (stats["flushes"], stats["flushTurns"], stats["turnsPerSecond"]) == (1, 10, 5.0)


def test_buffer_flush_plan_feeds_the_pipeline_idempotently(tmp_path: Path) -> None:
    buffer = SessionBuffer(tmp_path, "s1")
    buffer.append(turns_from_messages(MESSAGES))
    plan = buffer.begin_flush("session-end")
    assert plan is not None
    once = plan_observations(plan.turns, session_key="s1", settings=ObserveSettings())
    # A crash before complete_flush: the same plan comes back and yields the same observations.
    replay = SessionBuffer(tmp_path, "s1").begin_flush("explicit")
    assert replay == plan
    assert [o.id for o in plan_observations(replay.turns, session_key="s1", settings=ObserveSettings())] == [
        o.id for o in once
    ]
    buffer.complete_flush(plan.flush_id)
    assert buffer.begin_flush("explicit") is None


# --- LoCoMo: what the rules keep of real conversations (tests may read the data; the product never does) ---

LOCOMO = sorted(glob.glob(str(locomo_data_dir() / "*.json")))  # $REMNIC_LOCOMO_DIR or shared/ beside the repo


def locomo_sessions(path: str) -> list[list[Turn]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    n = 1
    while f"session_{n}_date_time" in data:
        turns = data.get(f"session_{n}")
        if isinstance(turns, list) and turns:
            when = datetime.strptime(data[f"session_{n}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
            stamp = when.strftime("%Y-%m-%dT%H:%M:00Z")
            out.append(
                [
                    Turn(
                        "user",
                        t["text"] + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else ""),
                        i,
                        turn_id=t["dia_id"],
                        speaker=t["speaker"],
                        timestamp=stamp,
                    )
                    for i, t in enumerate(turns)
                ]
            )
        n += 1
    return out


def tokens(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def locomo_measure(path: str) -> dict[str, float]:
    settings = ObserveSettings()
    turns = kept_tokens = trace_tokens = 0
    covered: set[str] = set()
    for number, session in enumerate(locomo_sessions(path), start=1):
        observations = plan_observations(session, session_key=f"locomo:{number}", settings=settings)
        accepted = [o for o in observations if o.judge_accepted]
        turns += len(session)
        trace_tokens += sum(tokens(t.text) for t in session)
        kept_tokens += sum(tokens(o.fact.content) for o in accepted)
        covered.update(t for o in accepted for t in o.source_turn_ids)
    qa = json.loads(Path(path).read_text(encoding="utf-8"))["qa"]
    evidence = [e for q in qa if q["category"] != 5 for e in q["evidence"]]
    return {
        "turns": turns,
        "covered": len(covered) / turns,
        "compression": trace_tokens / kept_tokens,
        "evidence_covered": sum(e in covered for e in evidence) / len(evidence),
    }


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO, reason="LoCoMo data not found beside the repository")
@pytest.mark.parametrize("path", LOCOMO, ids=[Path(p).stem for p in LOCOMO])
def test_locomo_turns_compress_at_least_twofold_and_keep_most_evidence(path: str) -> None:
    measured = locomo_measure(path)
    print(Path(path).name, {k: round(v, 3) for k, v in measured.items()})
    assert measured["compression"] >= 2.0
    assert 0.45 <= measured["covered"] <= 0.8  # greetings, questions and banter give nothing
    assert measured["evidence_covered"] >= 0.75  # turns that answer the benchmark's questions mostly do


def test_facts_embedded_ahead_on_a_worker_give_the_same_observations() -> None:
    from remnic.service.prefetch import Prefetch

    texts = ["I really love hiking in the Alps.", "The staging DB port is 5432.", "We decided to ship on Fridays."]
    turns = [Turn("user", f"{texts[i % 3]} Turn {i} went well.", i, turn_id=f"t{i}") for i in range(12)]
    settings = ObserveSettings(user_name="Ana", duplicate_similarity_floor=0.9)
    seen: list[list[str]] = []
    model = get_embedder().embed

    def embed(batch: object) -> object:
        seen.append(list(batch))  # type: ignore[call-overload]
        return model(batch)  # type: ignore[arg-type]

    plain = plan_observations(turns, session_key="s", settings=settings, embed=model, now="2026-01-01T00:00:00Z")
    with Prefetch(embed, len(turns)) as ahead:
        early = plan_observations(
            turns, session_key="s", settings=settings, embed=ahead.embed, prefetch=ahead.add, now="2026-01-01T00:00:00Z"
        )
    assert [o.to_dict() for o in early] == [o.to_dict() for o in plain]
    assert len(seen) >= 2 and len(seen[0]) >= 8  # the worker embedded the first facts before the last call
    facts = [o.fact.content for o in plain]
    assert set(facts) <= {t for batch in seen[:-1] for t in batch} | set(seen[-1])
    assert Prefetch(None, 50).embed is None  # no model: nothing to fold by


def test_the_worker_loads_the_model_before_the_first_facts_arrive() -> None:
    from remnic.index.embed import Embedder, EmbedderSpec
    from remnic.service.prefetch import Prefetch

    embedder = Embedder(EmbedderSpec())
    embedder.load(tokenizer_only=True)
    assert embedder._tokenizer is not None and embedder._session is None
    loaded = threading.Event()

    def warm() -> None:
        embedder.load()
        loaded.set()

    with Prefetch(embedder.embed, 40, warm=warm):
        # Nothing handed over yet: the worker is loading the session on its own.
        assert loaded.wait(timeout=60)
        assert embedder._session is not None

    def failing() -> None:
        raise RuntimeError("no model here")

    with Prefetch(embedder.embed, 40, warm=failing) as ahead:  # a failed warm-up leaves embedding to run
        assert ahead.embed is not None
        assert ahead.embed(["The staging DB port is 5432."]).shape == (1, embedder.dim)
