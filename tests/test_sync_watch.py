"""`remnic sync watch`: a real watchdog observer on a real git repository.

Every test waits for a condition (with a generous timeout) instead of sleeping a
fixed time, so a loaded machine makes the tests slower, not flaky.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from test_sync_run import assert_index_matches_files, found

from remnic.config import settings_for
from remnic.drivers.watch import Watcher, classify
from remnic.memfile.model import original_hash
from remnic.service.memory import Memory
from remnic.sync.engine import indexed_paths
from remnic.sync.state import BULK_FILES, SyncState, Unstable, read_stable_many, replace_if_unchanged

TIMEOUT = 20.0


def wait_until(predicate: Callable[[], Any], timeout: float = TIMEOUT, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


def porcelain(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


def subjects(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


class Running:
    def __init__(self, memory: Memory, settings: Any = None, **kwargs: Any) -> None:
        # The watcher gets its own Memory, as a separate `remnic sync watch` would.
        self.memory = Memory.open(settings=settings or memory.settings)
        self.events: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.watcher = Watcher(self.memory, emit=self._emit, **kwargs)
        self.thread = threading.Thread(target=self.watcher.run, daemon=True)

    def _emit(self, event: dict[str, Any]) -> None:
        with self.lock:
            self.events.append(event)

    def of(self, kind: str) -> list[dict[str, Any]]:
        with self.lock:
            return [e for e in self.events if e.get("event") == kind]

    def idle(self, root: Path) -> bool:
        """Nothing uncommitted under memory paths and no burst pending."""
        return (
            not self.watcher.busy
            and self.watcher._due(time.monotonic()) is None
            and porcelain(root) == ""
            and not self.watcher.busy
        )

    def stop(self) -> None:
        self.watcher.request_stop()
        self.thread.join(timeout=TIMEOUT)
        self.memory.close()


@pytest.fixture
def watch(memory: Memory) -> Iterator[Callable[..., Running]]:
    started: list[Running] = []

    def start(**kwargs: Any) -> Running:
        kwargs.setdefault("debounce_ms", 100)
        running = Running(memory, **kwargs)
        running.thread.start()
        wait_until(lambda: running.of("ready"), what="the watcher to be ready")
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
        assert not running.thread.is_alive()


def consistent(memory: Memory) -> None:
    """Index = the valid memory files, reflecting HEAD; nothing uncommitted but what is malformed."""
    assert_index_matches_files(memory)


def test_ignore_rules() -> None:
    assert classify("facts/a.md") == "memory"
    assert classify("namespaces/team/facts/a.md") == "memory"
    for ignored in (
        "facts/.a.md.swp",
        "facts/a.md~",
        "facts/a.md.tmp",
        "facts/4913",
        "facts/.#a.md",
        "facts/#a.md#",
        ".remnic/index/x",
        ".git/objects/ab/cd",
        "facts/.a.md.remnic-sync-1-ab",
        "facts/a.txt",
        ".git/index.lock",
        ".git/refs/heads/main.lock",
        "facts/a.md___jb_tmp___",
        ".hidden/a.md",
    ):
        assert classify(ignored) is None, ignored
    assert classify(".git/HEAD") == "git" and classify(".git/refs/heads/main") == "git"
    assert classify(".gitignore") == "config"
    # Any markdown file is handed to sync, which applies the repository's rule (store.include, ...).
    assert classify("README.md") == "memory" and classify("notes/idea.md") == "memory"


def test_reads_wait_for_a_file_being_written_and_writes_never_clobber_a_new_save(tmp_path: Path) -> None:
    path = tmp_path / "growing.md"
    path.write_text("")
    done = threading.Event()

    def writer() -> None:
        with open(path, "a") as fh:
            for i in range(150):
                fh.write(f"line {i}\n")
                fh.flush()
                time.sleep(0.002)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    seen = read_stable_many([path], attempts=3, settle_s=0.001)[path]
    thread.join()
    # While it grew, the read either gave up or returned bytes that really were the file at one moment.
    assert isinstance(seen, Unstable) or seen == "".join(f"line {i}\n" for i in range(seen.count(b"\n"))).encode()
    assert read_stable_many([path])[path] == "".join(f"line {i}\n" for i in range(150)).encode()
    assert read_stable_many([tmp_path / "missing.md"])[tmp_path / "missing.md"] is None

    target = tmp_path / "note.md"
    target.write_text("the user's newest save\n")
    staging = tmp_path / ".remnic" / "tmp"
    assert not replace_if_unchanged([(target, b"what sync read earlier\n", "sync's normalised text\n")], staging)
    assert target.read_text() == "the user's newest save\n"
    assert replace_if_unchanged([(target, b"the user's newest save\n", "normalised\n")], staging) == {target}
    assert target.read_text() == "normalised\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".remnic", "growing.md", "note.md"]
    assert list(staging.iterdir()) == []  # staging files never sit beside memories, nor stay behind

    # Many files at once (one flush for all the staged texts): a file saved meanwhile is still left alone.
    many = tmp_path / "many"
    many.mkdir()
    items = []
    for i in range(BULK_FILES + 6):
        (many / f"n{i}.md").write_text(f"note {i}\n")
        items.append((many / f"n{i}.md", f"note {i}\n".encode(), f"---\nid: n{i}\n---\nnote {i}\n"))
    (many / "n3.md").write_text("note 3, saved again by the user\n")
    (many / "n69.md").unlink()
    done = replace_if_unchanged(items, staging)
    assert done == {path for path, _old, _new in items} - {many / "n3.md", many / "n69.md"}
    assert (many / "n3.md").read_text() == "note 3, saved again by the user\n"
    assert (many / "n5.md").read_text() == "---\nid: n5\n---\nnote 5\n" and not (many / "n69.md").exists()
    assert list(staging.iterdir()) == []


def test_create_edit_rename_delete(memory: Memory, watch: Callable[..., Running]) -> None:
    root = memory.root
    running = watch()
    (root / "facts/editor.md").write_text("Ana edits memories in vim.\n")
    wait_until(lambda: running.idle(root) and "remnic sync: add facts/editor.md" in subjects(root), what="create")
    record = memory.files.read("facts/editor.md")
    assert record.body == "Ana edits memories in vim.\n" and record.has_id

    path = root / "facts/editor.md"
    path.write_text(path.read_text().replace("vim", "helix"))
    wait_until(lambda: running.idle(root) and subjects(root)[0] == "remnic sync: edit facts/editor.md", what="edit")
    assert memory.files.read("facts/editor.md").frontmatter["contentHash"] == original_hash(
        "Ana edits memories in helix."
    )
    assert found(memory, "which editor does Ana use? helix")[0] == record.id

    os.rename(path, root / "facts/ana-editor.md")
    wait_until(lambda: running.idle(root) and subjects(root)[0].startswith("remnic sync: rename"), what="rename")
    assert next(v.path for v in memory.versions("facts/ana-editor.md")) == "facts/editor.md"
    assert memory.get(record.id).path == "facts/ana-editor.md"

    (root / "facts/ana-editor.md").unlink()
    wait_until(
        lambda: running.idle(root) and subjects(root)[0] == "remnic sync: delete facts/ana-editor.md", what="delete"
    )
    changes = [(e["change"], e["path"]) for e in running.of("change")]
    assert changes == [
        ("added", "facts/editor.md"),
        ("modified", "facts/editor.md"),
        ("renamed", "facts/ana-editor.md"),
        ("deleted", "facts/ana-editor.md"),
    ]
    assert all(e["commit"] for e in running.of("change"))
    consistent(memory)


def test_new_top_level_folder_is_watched_and_internals_are_not(memory: Memory, watch: Callable[..., Running]) -> None:
    root = memory.root
    running = watch()
    watched = {e.watch.path for e in running.watcher._observer.emitters}
    assert str(root / ".git" / "objects") not in watched and str(root / ".remnic") not in watched
    new = root / "namespaces" / "team" / "facts"  # a top-level folder made after the watcher started
    new.mkdir(parents=True)
    (new / "idea.md").write_text("A note in a folder made after the watcher started.\n")
    wait_until(lambda: running.idle(root) and "team/facts/idea.md" in subjects(root)[0], what="the new folder's file")
    (new / "later.md").write_text("Saved into the new folder once it is watched.\n")
    wait_until(lambda: running.idle(root) and "team/facts/later.md" in subjects(root)[0], what="a later save")
    consistent(memory)


def test_burst_of_50_saves_is_one_commit_and_nothing_is_lost(memory: Memory, watch: Callable[..., Running]) -> None:
    root = memory.root
    running = watch(debounce_ms=400, max_delay_ms=30_000)
    before = len(subjects(root))
    for i in range(50):
        (root / f"facts/burst-{i % 5}.md").write_text(f"Burst file {i % 5}, save number {i}.\n")
        time.sleep(0.004)
    wait_until(lambda: running.idle(root) and len(subjects(root)) > before, what="the burst's commit")
    new = subjects(root)[: len(subjects(root)) - before]
    assert len(new) <= 2, new  # one commit unless the machine stalled longer than the debounce mid-burst
    for n in range(5):
        last = max(i for i in range(50) if i % 5 == n)
        assert memory.files.read(f"facts/burst-{n}.md").content == f"Burst file {n}, save number {last}."
    assert porcelain(root) == ""
    consistent(memory)
    assert found(memory, "burst file 3 save number")[0] == memory.files.read("facts/burst-3.md").id


def test_editor_atomic_save_and_temp_files(memory: Memory, watch: Callable[..., Running]) -> None:
    root = memory.root
    record = memory.store("The office closes at six", category="fact").record
    running = watch()
    target = root / record.path
    original = target.read_text()
    # vim: probe file 4913, backup by rename, write the new file, remove the backup; plus a swap file.
    (root / "facts/4913").write_text("")
    (root / "facts/4913").unlink()
    (root / "facts/.office.md.swp").write_bytes(b"\x00swap")
    os.rename(target, root / (record.path + "~"))
    target.write_text(original.replace("six", "seven"))
    (root / (record.path + "~")).unlink()
    # VS Code / JetBrains style: write a temp file and rename it over the target.
    tmp = root / "facts/.office.md.tmp"
    tmp.write_text(target.read_text().replace("seven", "eight"))
    os.replace(tmp, target)
    wait_until(
        lambda: (
            "eight" in git(root, "show", f"HEAD:{record.path}")
            and not running.watcher.busy
            and porcelain(root) == ""  # remnic init's .gitignore has the swap file
        ),
        what="atomic save committed",
    )
    (root / "facts/.office.md.swp").unlink()
    assert memory.get(record.id).content == "The office closes at eight"
    tracked = git(root, "ls-files").splitlines()
    assert not any(p.endswith(("~", ".swp", ".tmp", "4913")) for p in tracked)
    assert [e["path"] for e in running.of("change")] == [record.path] * len(running.of("change"))
    assert not running.of("problem") and not running.of("error")
    consistent(memory)
    assert found(memory, "when does the office close")[0] == record.id


def test_malformed_file_amid_good_ones(memory: Memory, watch: Callable[..., Running]) -> None:
    root = memory.root
    running = watch()
    bad = b"---\nstatus: [actve\n---\nHand-written but broken\n"
    (root / "facts/good-a.md").write_text("Good file A.\n")
    (root / "facts/bad.md").write_bytes(bad)
    (root / "facts/good-b.md").write_text("Good file B.\n")
    wait_until(
        lambda: porcelain(root) == "?? facts/bad.md\n" and running.of("problem") and not running.watcher.busy,
        what="good files committed",
    )
    assert (root / "facts/bad.md").read_bytes() == bad
    problems = running.of("problem")
    assert problems[0]["path"] == "facts/bad.md" and problems[0]["line"] == 2 and problems[0]["field"] == "frontmatter"
    time.sleep(0.5)  # further syncs must not report the unchanged file again
    (root / "facts/good-c.md").write_text("Good file C.\n")
    wait_until(
        lambda: (
            porcelain(root) == "?? facts/bad.md\n"
            and memory.files.read("facts/good-c.md").has_id
            and not running.watcher.busy
        )
    )
    assert len(running.of("problem")) == 1
    assert "facts/bad.md" not in indexed_paths(memory.index)
    (root / "facts/bad.md").write_bytes(bad.replace(b"[actve", b"active"))
    wait_until(lambda: running.idle(root), what="the fixed file committed")
    assert SyncState.load(root).pending == {}
    consistent(memory)


def test_edit_committed_with_plain_git(memory: Memory, watch: Callable[..., Running]) -> None:
    root = memory.root
    record = memory.store("The build takes ten minutes", category="fact").record
    running = watch(debounce_ms=1500)
    path = root / record.path
    path.write_text(path.read_text().replace("ten minutes", "four minutes"))
    git(root, "commit", "-qam", "faster build (by hand)")
    user_commit = memory.ledger.head()
    wait_until(
        lambda: (
            memory.files.read(record.path).frontmatter["contentHash"] == original_hash("The build takes four minutes")
            and running.idle(root)
        ),
        what="stale contentHash fixed",
    )
    assert subjects(root)[:2] == [f"remnic sync: edit {record.path}", "faster build (by hand)"]
    assert user_commit in git(root, "log", "--format=%H").split()
    assert memory.get(record.id).content == "The build takes four minutes"
    consistent(memory)
    assert found(memory, "how long does the build take")[0] == record.id


def test_a_hand_edit_of_a_stored_memory_is_a_modification(memory: Memory, watch: Callable[..., Running]) -> None:
    """remnic's own commits move the sync base along: the edit is an ``M``, stamped, never an ``A``."""
    root = memory.root
    running = watch()
    wait_until(lambda: SyncState.load(root).commit == memory.ledger.head(), what="the first sync")
    record = memory.store("The office closes at six", category="fact").record
    wait_until(lambda: running.idle(root) and SyncState.load(root).commit == memory.ledger.head(), what="store")
    path = root / record.path
    time.sleep(0.01)  # so the stamp can differ from the store's own time
    path.write_text(path.read_text().replace("at six", "at seven"))
    wait_until(lambda: running.idle(root) and subjects(root)[0] == f"remnic sync: edit {record.path}", what="edit")
    assert [(e["change"], e["path"], e["normalized"]) for e in running.of("change")] == [
        ("modified", record.path, ["contentHash", "updated"])
    ]
    assert [e["changes"] for e in running.of("synced")] == [1]
    on_disk = memory.files.read(record.path).frontmatter
    assert on_disk["contentHash"] == original_hash("The office closes at seven")
    assert on_disk["updated"] > record.frontmatter["updated"]
    consistent(memory)


def test_checkout_of_an_older_commit_and_back(memory: Memory, watch: Callable[..., Running]) -> None:
    root = memory.root
    plan = memory.store("The plan is version one", category="decision").record
    old = memory.ledger.head()
    memory.update(plan.id, {"tags": ["v2"]})
    path = root / plan.path
    later = memory.store("A memory that the old commit does not have", category="fact").record
    running = watch()
    main = memory.ledger.head()
    git(root, "checkout", "-q", old)
    wait_until(lambda: SyncState.load(root).commit == old and running.idle(root), what="sync after checkout")
    assert memory.ledger.head() == old and not (root / later.path).exists()
    assert "v2" not in path.read_text()
    consistent(memory)
    assert memory.index.path_of(later.id) is None
    git(root, "checkout", "-q", "main")
    wait_until(lambda: SyncState.load(root).commit == main and running.idle(root), what="sync after checkout back")
    assert memory.ledger.head() == main and memory.get(later.id)
    consistent(memory)
    assert not any(s.startswith("remnic sync") for s in subjects(root))


def test_watcher_cli_writes_and_sync_run_at_once_lose_nothing(
    memory: Memory, watch: Callable[..., Running], tmp_path: Path
) -> None:
    root = memory.root
    script = tmp_path / "writer.py"
    script.write_text(
        "import sys\nfrom remnic.config import settings_for\nfrom remnic.service import Memory\n"
        "m = Memory.open(settings=settings_for(sys.argv[1]))\n"
        "for i in range(8):\n    m.store(f'Writer {sys.argv[2]} stores memory {i}', category='fact')\n"
        "    m.sync()\n"
        "m.close()\n"
    )
    running = watch(debounce_ms=50)
    procs = [
        subprocess.Popen([sys.executable, str(script), str(root), str(w)], stderr=subprocess.PIPE, text=True)
        for w in range(2)
    ]
    for i in range(12):
        (root / f"facts/hand-{i}.md").write_text(f"Hand edit number {i}.\n")
        time.sleep(0.03)
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    wait_until(lambda: running.idle(root), what="everything committed")
    contents = {r.content for r in memory.list()}
    assert {f"Writer {w} stores memory {i}" for w in range(2) for i in range(8)} <= contents
    assert {f"Hand edit number {i}." for i in range(12)} <= contents
    assert porcelain(root) == "" and not running.of("error")
    consistent(memory)


def test_watcher_reports_errors_and_retries_until_it_succeeds(memory: Memory, watch: Callable[..., Running]) -> None:
    root = memory.root
    impatient = settings_for(root, store={"lock_timeout_s": 0.3})
    running = watch(settings=impatient)
    with memory.files.lock():  # another writer holds the repository lock for a while
        (root / "facts/waiting.md").write_text("Written while the lock was held.\n")
        wait_until(lambda: running.of("error"), what="the watcher to report the lock timeout")
    wait_until(lambda: running.idle(root), what="the retry to commit the edit")
    assert "lock" in running.of("error")[0]["message"]
    assert subjects(root)[0] == "remnic sync: add facts/waiting.md"
    assert running.thread.is_alive()
    consistent(memory)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_sigterm_mid_burst_flushes_everything(memory: Memory, stop: signal.Signals) -> None:
    root = memory.root
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", "sync", "watch", "--json", "--debounce-ms", "1500", "--memory-dir", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[dict[str, Any]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(json.loads(line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_until(lambda: any(e["event"] == "ready" for e in lines), what="watcher ready")
        for i in range(30):
            (root / f"facts/term-{i}.md").write_text(f"Written just before SIGTERM, number {i}.\n")
        proc.send_signal(stop)  # a service manager's stop, or the terminal closing
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=5)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert lines[-1]["event"] == "stopped"
    assert porcelain(root) == ""
    added = sorted(e["path"] for e in lines if e["event"] == "change")
    assert added == sorted(f"facts/term-{i}.md" for i in range(30))
    assert all(e["commit"] for e in lines if e["event"] == "change")
    assert len([r for r in memory.list() if r.path.startswith("facts/term-")]) == 30
    consistent(memory)


def test_the_watcher_flushes_a_session_its_host_left_idle(memory: Memory, watch: Callable[..., Running]) -> None:
    """At start and every observe.tendIntervalS: turns a host buffered and never flushed (no session
    end, no next hook) become memories, and the watcher says so."""
    memory.observe_transcript("left-open", "Ben: I prefer tabs over spaces in the Python code.\n", fmt="plain")
    (journal,) = (memory.root / "state").glob("observe-buffer/*/*.jsonl")
    old = time.time() - 2 * 3600  # past observe.bufferMaxMinutes
    os.utime(journal, (old, old))
    running = watch()
    wait_until(lambda: running.of("observations"), what="the idle session's flush")
    assert running.of("observations")[0]["flushed"] == ["left-open"]
    assert [r.content for r in memory.list(status="active")] == ["Ben prefers tabs over spaces in the Python code."]
