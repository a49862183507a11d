"""An adoption interrupted after its commit: the next recall answers from BM25 at once (vectors left to
`remnic sync run`) and names a few malformed files, not hundreds; Ctrl-C and SIGTERM say what stands and
what resumes. Also: the vectors line counts what the bar counts, binaries named .md are advised out, and a
file name with a line break gets a true reason on one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git, run_cli, run_remnic

from remnic.config import load_settings, settings_for
from remnic.service.memory import Memory

NOTE = "The {n}th kafka partition roadmap note: brokers rebalance when a consumer group grows.\n"

# `remnic ARGS` with a signal sent to itself at one step (module.Class.method), e.g. the sync's index step
# just after its commit: where a person's Ctrl-C landed during a first adoption.
SIGNAL_AT = """
import importlib, os, signal, sys
# A process started in the background by a non-interactive shell inherits SIGINT ignored (and Python
# then installs no KeyboardInterrupt handler): a person's terminal delivers it, so this one must too.
signal.signal(signal.SIGINT, signal.default_int_handler)
where, name, args = sys.argv[1], sys.argv[2], sys.argv[3:]
module, cls, method = where.rsplit(".", 2)
def stop(*_a, **_k):
    os.kill(os.getpid(), getattr(signal, name))
setattr(getattr(importlib.import_module(module), cls), method, stop)
from remnic.cli import main
sys.exit(main(args))
"""
INDEX_STEP = "remnic.index.build.IndexWrites.apply"
COMMIT_STEP = "remnic.repo.ledger.Ledger.commit"


def vault(tmp_path: Path, notes: int = 12, broken: int = 0, defer: int = 5) -> Path:
    root = tmp_path / "vault"
    (root / "Notes").mkdir(parents=True)
    for n in range(notes):
        (root / "Notes" / f"note-{n}.md").write_text(NOTE.format(n=n))
    for n in range(broken):
        (root / "Notes" / f"bad-{n}.md").write_text("---\ntags: [unclosed,\n---\nbody\n")
    Memory.init(root, settings=settings_for(root), adopt=["**"]).close()
    config = json.loads((root / "remnic.config.json").read_text())
    config["sync"] = {"deferEmbeddingsAbove": defer}
    (root / "remnic.config.json").write_text(json.dumps(config))
    git(root, "commit", "-qam", "defer embeddings above a few texts")
    return root


def interrupted(root: Path, name: str, where: str = INDEX_STEP) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SIGNAL_AT, where, name, "sync", "run", "--memory-dir", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def test_ctrl_c_after_the_adoptions_commit_says_what_stands_and_what_resumes(tmp_path: Path) -> None:
    root = vault(tmp_path, notes=3)
    done = interrupted(root, "SIGINT")
    assert done.returncode == 130, done.stderr
    head = git(root, "rev-parse", "HEAD").strip()
    assert f"commit {head[:8]} stands: 3 note(s) committed" in done.stderr
    assert "`remnic sync run` continues where it stopped" in done.stderr


def test_the_first_recall_after_an_adoption_stopped_at_its_commit_does_not_embed_inline(tmp_path: Path) -> None:
    root = vault(tmp_path, notes=12, broken=13)
    killed = run_remnic("sync", "run", "--memory-dir", str(root), env={"REMNIC_CRASH_AT": "committed"})
    assert killed.code == -9 and "remnic sync:" in git(root, "log", "-1", "--format=%s")

    found = run_cli("query", "kafka partition roadmap", "--memory-dir", str(root), "--json").json()
    index = found["index"]
    assert index["action"] == "rebuild" and index["embedded"] == 0  # no model run inside the recall
    assert index["vectorsPending"] == 12 and "`remnic sync run` computes them" in index["reason"]
    assert found["hits"]
    from_scan = [p for p in index["problems"] if p.startswith("malformed memory file")]
    assert len(from_scan) == 10
    assert "... and 3 more malformed memory file(s): `remnic doctor` lists them all" in index["problems"]

    out = run_cli("sync", "run", "--memory-dir", str(root))
    assert "computed the vectors of 12 notes" in out.out
    with Memory.open(settings=load_settings(root)) as mem:
        assert mem.vectors_pending() == (0, 0)


def test_sigterm_during_the_index_step_exits_143_with_the_same_line(tmp_path: Path) -> None:
    root = vault(tmp_path, notes=3)
    done = interrupted(root, "SIGTERM")
    assert done.returncode == 143, done.stderr
    assert "remnic: interrupted: commit " in done.stderr and "3 note(s) committed" in done.stderr


def test_ctrl_c_before_the_commit_counts_the_notes_given_frontmatter(tmp_path: Path) -> None:
    root = vault(tmp_path, notes=4)
    done = interrupted(root, "SIGINT", COMMIT_STEP)
    assert done.returncode == 130, done.stderr
    assert "4 note(s) got their frontmatter on disk, nothing committed yet" in done.stderr


def test_the_vectors_line_counts_the_texts_the_bar_counts(tmp_path: Path) -> None:
    root = vault(tmp_path, notes=6, defer=0)
    (root / "Notes" / "again.md").write_text(NOTE.format(n=0))  # one text twice: embedded once
    with Memory.open(settings=load_settings(root)) as mem:
        mem.sync()
        texts = mem.vectors_pending()[1]
    assert texts >= 7
    out = run_cli("sync", "run", "--memory-dir", str(root)).out
    line = next(x for x in out.splitlines() if x.startswith("computed the vectors of 7 notes"))
    embedded, cached = line.split("(", 1)[1].split(" texts embedded, ")
    assert int(embedded) + int(cached.split(" ", 1)[0]) == texts


def test_a_binary_file_named_md_is_advised_out_with_store_exclude(tmp_path: Path) -> None:
    root = vault(tmp_path, notes=1)
    (root / "Notes" / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    out = run_cli("sync", "run", "--memory-dir", str(root))
    assert out.code == 1
    assert "1 of them holds binary data (Notes/image.md): not notes, nothing to fix" in out.out
    assert '{"store": {"exclude": ["Notes/image.md"]}}' in out.out


def test_init_adopts_a_file_with_a_line_break_in_its_name_like_any_other(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "Inbox").mkdir(parents=True)
    (root / "Inbox" / "new\nline.md").write_text("a note\n")
    out = run_cli("init", str(root), "--adopt", "**")
    assert out.code == 0
    assert "found 1 memory file" in out.out and "outside the memory folders" not in out.out
    assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
    assert git(root, "ls-files", "-z", "Inbox").split("\0")[0] == "Inbox/new\nline.md"
