"""The watcher is not woken by sync's own stamp: the stamped copy is swapped in from the unwatched
.remnic/tmp (RENAME_EXCHANGE), and the old file's move out, with no pair in a watched folder, reaches
watchdog's handler as a "deleted" half a second later, while the note stands where it was."""

from __future__ import annotations

import time
from collections.abc import Callable

from test_sync_watch import Running, subjects, wait_until, watch  # noqa: F401 - the fixture

from remnic.service.memory import Memory


def test_a_stamped_note_starts_no_second_sync_pass(memory: Memory, watch: Callable[..., Running]) -> None:  # noqa: F811
    running = watch(rescan_interval_s=600)
    root = memory.root
    # A first note loads what a pass needs: the next pass is over well inside watchdog's 0.5 s.
    (root / "facts/first.md").write_text("The first note of the day.\n")
    wait_until(lambda: "remnic sync: add facts/first.md" in subjects(root), what="the first note's commit")
    wait_until(lambda: running.idle(root), what="the first pass to end")
    time.sleep(0.8)
    (root / "facts/lamp.md").write_text("The lamp in the hall is on a timer.\n")
    wait_until(lambda: "remnic sync: add facts/lamp.md" in subjects(root), what="the note's commit")
    wait_until(lambda: running.idle(root), what="the pass to end")
    passes = running.watcher.syncs
    # Past watchdog's 0.5 s wait for a move's other half, and the debounce after it.
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        assert running.watcher._due(time.monotonic()) is None, "a pass is due with nothing changed"
        time.sleep(0.05)
    assert running.watcher.syncs == passes
    assert (root / "facts/lamp.md").read_text().startswith("---\n")  # stamped in place, by a swap

    # A note deleted for real still syncs at once.
    (root / "facts/lamp.md").unlink()
    wait_until(lambda: any(s.startswith("remnic sync: ") and "lamp" in s for s in subjects(root)[:1]), what="delete")
    assert not (root / "facts/lamp.md").exists()
