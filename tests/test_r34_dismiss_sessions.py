"""A fact said again in another session records that session: it joins the memory's ``sessionKeys``
(``sessionKey`` stays the one it was written in), so citations list every session that said it."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli, run_remnic

from remnic.service import Memory


def test_a_reinforcement_from_another_session_joins_session_keys_and_citations(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root), "--quiet").code == 0
    said = "Ana: We deploy staging with Flux.\n"
    with Memory.open(root) as memory:
        memory.observe_transcript("k1", said, flush=True)
        memory.observe_transcript("k2", "Bob: Hi.\n" + said, flush=True)
        memory.observe_transcript("k1", "Bob: And?\n" + said, flush=True)  # its own session again: no new entry
    out = run_remnic("observe", "-", "--session-key", "k3", "--flush", "--memory-dir", str(root), stdin=said)
    assert out.code == 0 and "1 reinforced" in out.out, (out.out, out.err)
    with Memory.open(root) as memory:
        [record] = memory.list()
    fm = record.frontmatter
    assert fm["sessionKey"] == "k1" and fm["sessionKeys"] == ["k1", "k2", "k3"]
    assert fm["reinforcement_count"] == 3
    # Turn ids name a line of their own session's transcript: k3's L1 is k1's L1 once (sessionKeys tells).
    assert fm["sourceTurnIds"] == ["L1", "L2"]
    cited = run_cli("query", "how do we deploy staging", "--citations", "--memory-dir", str(root))
    assert cited.code == 0, cited.err
    rollouts = cited.out.split("<rollout_ids>")[1].split("</rollout_ids>")[0].split()
    assert rollouts == ["k1", "k2", "k3"]
