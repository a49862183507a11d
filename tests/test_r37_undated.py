"""A relative date in a turn without a timestamp stays as said, and the caller is told so."""

from __future__ import annotations

from remnic.service.memory import Memory


def test_an_untimed_yesterday_is_kept_as_said_with_a_warning_naming_the_turn(memory: Memory) -> None:
    said = {"role": "user", "speaker": "Ana", "content": "I adopted a cat named Miso yesterday.", "turnId": "t1"}
    untimed = memory.observe("standup", [said], flush=True)
    assert any("yesterday" in o.fact.content for o in untimed.observations)
    warning = untimed.to_dict()["warnings"]
    assert [w["field"] for w in warning] == ["timestamp"] and "t1" in warning[0]["message"]
    assert any("no timestamp" in w for w in untimed.warnings())

    timed = {**said, "turnId": "t2", "content": "I adopted a dog named Rex yesterday."}
    dated = memory.observe("standup-2", [{**timed, "timestamp": "2026-11-27T10:00:00Z"}], flush=True)
    assert any("26 November 2026" in o.fact.content for o in dated.observations)
    assert "warnings" not in dated.to_dict() and dated.warnings() == []
