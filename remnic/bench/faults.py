"""Fault benchmark: concurrent writers and kill -9 at random moments, with the invariants checked after each.

1. **Writers.** 10 writer streams for a fixed time against one repository: 5 processes
   storing through the Python API and 5 HTTP clients storing through one `remnic serve`.
   Reported: writes/s, user-visible errors (exceptions, non-2xx), writes per stream (fairness),
   and whether every acknowledged write is in git and in the index.
2. **Kill trials.** `remnic store`, `remnic import` (200 lines), `remnic observe --flush`,
   `remnic sync run` (after 50 hand edits) and `remnic serve` (while 4 clients write) killed with
   SIGKILL after a random delay, then the next command runs. Checked after each trial: `git fsck` clean, no orphan or half-written
   file (`git status` clean once the next writer ran), no duplicate memory, and every write the
   killed command acknowledged (printed) is present.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from . import Report, load_average, md_table, measured_line

WRITER_SCRIPT = """
import sys, time, json
from remnic.service import Memory
root, name, until = sys.argv[1], sys.argv[2], float(sys.argv[3])
ok = errors = 0
with Memory.open(root) as m:
    i = 0
    while time.time() < until:
        try:
            m.store(f"{name} wrote note {i} at {time.time()}")
            ok += 1
        except Exception as exc:
            errors += 1
            print(repr(exc), file=sys.stderr)
        i += 1
print(json.dumps({"ok": ok, "errors": errors}))
"""


def _remnic(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "remnic", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # never read: a full pipe would stall the child
        text=True,
        env={**os.environ, **(env or {})},
        **kw,
    )


def _init(root: Path) -> None:
    from remnic.config import settings_for
    from remnic.service import Memory

    Memory.init(root, settings=settings_for(root)).close()


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def writers_trial(seconds: float, tmp: Path) -> dict[str, Any]:
    from remnic.server.auth import TokenStore

    root = tmp / "writers"
    _init(root)
    # The trial measures the write path, not the per-principal rate limit (30 a minute by default).
    config = tmp / "writers-config.json"
    config.write_text(json.dumps({"server": {"writeRateLimit": 1_000_000}}))
    env = {"REMNIC_TOKENS_PATH": str(tmp / "tokens.json"), "REMNIC_CONFIG_PATH": str(config)}
    os.environ.update(env)
    token, _ = TokenStore().generate("bench")
    server = _remnic("serve", "--memory-dir", str(root), "--port", "0", "--json", "--log-level", "warning", env=env)
    assert server.stdout is not None
    url = f"http://127.0.0.1:{json.loads(server.stdout.readline())['port']}"
    until = time.time() + seconds
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER_SCRIPT, str(root), f"process-{n}", str(until)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(5)
    ]
    http: dict[str, dict[str, int]] = {f"http-{n}": {"ok": 0, "errors": 0} for n in range(5)}

    def client(name: str) -> None:
        i = 0
        while time.time() < until:
            body = json.dumps({"content": f"{name} wrote note {i} at {time.time()}"}).encode()
            request = urllib.request.Request(
                url + "/engram/v1/memories",
                data=body,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    http[name]["ok" if response.status in (200, 201) else "errors"] += 1
            except Exception:  # noqa: BLE001 - counted: every failure is a user-visible error
                http[name]["errors"] += 1
            i += 1

    threads = [threading.Thread(target=client, args=(name,)) for name in http]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    per_stream = dict(http)
    for n, proc in enumerate(procs):
        out, _err = proc.communicate(timeout=120)
        per_stream[f"process-{n}"] = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"ok": 0, "errors": 1}
    server.send_signal(signal.SIGTERM)
    server.wait(30)
    from remnic.service import Memory

    with Memory.open(root) as memory:
        stored = {r.content.split(" at ")[0] for r in memory.list()}
        memory.recall("note", top_k=1)  # the index catches up with every other process's commits
        indexed = memory.index_health()
    acknowledged = sum(s["ok"] for s in per_stream.values())
    clean = _git(root, "status", "--porcelain", "--untracked-files=all") == ""
    return {
        "seconds": seconds,
        "writes": acknowledged,
        "writesPerSecond": acknowledged / seconds,
        "errors": sum(s["errors"] for s in per_stream.values()),
        "perStream": {k: v["ok"] for k, v in per_stream.items()},
        "allInGit": len(stored) >= acknowledged,  # every text is distinct
        "indexState": indexed.get("state"),
        "clean": clean,
        "commits": int(_git(root, "rev-list", "--count", "HEAD")),
    }


def _invariants(root: Path) -> list[str]:
    problems = []
    fsck = subprocess.run(["git", "fsck", "--no-progress"], cwd=root, capture_output=True, text=True)
    if fsck.returncode != 0:
        problems.append("git fsck: " + fsck.stderr.strip()[:200])
    listed = _remnic("list", "--json", "--memory-dir", str(root))
    out, _ = listed.communicate(timeout=120)
    contents = [m["content"] for m in json.loads(out)["memories"]] if listed.returncode == 0 else []
    if len(contents) != len(set(contents)):
        problems.append(f"{len(contents) - len(set(contents))} duplicate memories")
    status = _git(root, "status", "--porcelain", "--untracked-files=all")
    if status:
        problems.append("git status not clean: " + status.strip()[:200])
    return problems


def kill_trials(kind: str, trials: int, tmp: Path, rng: random.Random) -> dict[str, Any]:
    root = tmp / f"kill-{kind}"
    _init(root)
    chat = tmp / "chat.txt"
    chat.write_text("".join(f"Ana: We decided rule number {i} applies to the deploys.\n" for i in range(30)))
    batch = tmp / "batch.jsonl"
    failures: list[str] = []
    killed = finished = lost = 0
    for trial in range(trials):
        if kind == "store":
            args = ["store", f"Trial {trial} note"]
        elif kind == "import":
            batch.write_text("".join(json.dumps({"content": f"Trial {trial} line {i}"}) + "\n" for i in range(200)))
            args = ["import", str(batch)]
        elif kind == "observe":
            args = ["observe", str(chat), "--session-key", f"s{trial}", "--format", "plain", "--flush"]
        else:
            for i in range(50):
                (root / "facts" / f"hand-{i}.md").write_text(f"Hand edit {i} in trial {trial}\n")
            args = ["sync", "run"]
        proc = _remnic(*args, "--memory-dir", str(root))
        time.sleep(rng.uniform(0.2, 2.5))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        else:
            finished += 1
        out, _ = proc.communicate(timeout=60)
        follow = _remnic("sync", "run", "--memory-dir", str(root))  # the next writer recovers what is left
        follow.communicate(timeout=300)
        problems = _invariants(root)
        if kind == "store" and out.strip().startswith("stored"):
            listed = json.loads(_remnic("list", "--json", "--memory-dir", str(root)).communicate(timeout=120)[0])
            if f"Trial {trial} note" not in {m["content"] for m in listed["memories"]}:
                lost += 1
                problems.append(f"acknowledged store of trial {trial} lost")
        failures += [f"trial {trial}: {p}" for p in problems]
    return {"kind": kind, "trials": trials, "killed": killed, "finished": finished, "lost": lost, "failures": failures}


def serve_trials(trials: int, tmp: Path, rng: random.Random) -> dict[str, Any]:
    """`remnic serve` killed while 4 clients write; every acknowledged write must be there after."""
    from remnic.server.auth import TokenStore
    from remnic.service import Memory

    root = tmp / "kill-serve"
    _init(root)
    token, _ = TokenStore().generate("bench-kill")
    failures: list[str] = []
    killed = lost = 0
    for trial in range(trials):
        server = _remnic("serve", "--memory-dir", str(root), "--port", "0", "--json", "--log-level", "warning")
        assert server.stdout is not None
        port = json.loads(server.stdout.readline())["port"]
        acknowledged: list[str] = []
        stop = threading.Event()

        def client(
            n: int,
            port: int = port,
            trial: int = trial,
            stop: threading.Event = stop,
            acknowledged: list[str] = acknowledged,
        ) -> None:
            i = 0
            while not stop.is_set():
                body = json.dumps({"content": f"Serve trial {trial} client {n} note {i}"}).encode()
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/engram/v1/memories",
                    data=body,
                    headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                )
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        if response.status == 201:
                            acknowledged.append(json.loads(body)["content"])
                except Exception:  # noqa: BLE001 - the server is gone
                    return
                i += 1

        threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.5, 3.0))
        server.send_signal(signal.SIGKILL)
        server.wait(30)
        killed += 1
        stop.set()
        for t in threads:
            t.join(60)
        with Memory.open(root) as memory:
            stored = {r.content for r in memory.list()}
        missing = [a for a in acknowledged if a not in stored]
        lost += len(missing)
        problems = _invariants(root) + ([f"{len(missing)} acknowledged writes lost"] if missing else [])
        failures += [f"trial {trial}: {p}" for p in problems]
    return {"kind": "serve", "trials": trials, "killed": killed, "finished": 0, "lost": lost, "failures": failures}


def run(quick: bool = False) -> Report:
    rng = random.Random(11)
    t0, load0 = time.perf_counter(), load_average()
    with tempfile.TemporaryDirectory(prefix="remnic-bench-faults-") as tmp_name:
        tmp = Path(tmp_name)
        writers = writers_trial(15.0 if quick else 60.0, tmp)
        trials = [kill_trials(kind, 5 if quick else 20, tmp, rng) for kind in ("store", "import", "observe", "sync")]
        trials.append(serve_trials(5 if quick else 20, tmp, rng))
    rows = [[t["kind"], t["trials"], t["killed"], t["finished"], t["lost"], len(t["failures"])] for t in trials]
    streams = sorted(writers["perStream"].values())
    text = "\n".join(
        [
            f"**Writers**: 10 streams (5 processes through the Python API, 5 HTTP clients of one `remnic serve`) "
            f"for {writers['seconds']:.0f} s: {writers['writes']} acknowledged writes "
            f"({writers['writesPerSecond']:.1f}/s) in {writers['commits']} commits, {writers['errors']} user-visible "
            f"errors; writes per stream min {streams[0]}, median {statistics.median(streams):.0f}, max {streams[-1]}; "
            f"every acknowledged write in git: {writers['allInGit']}; working tree clean: {writers['clean']}; "
            f"index {writers['indexState']}.",
            "",
            "**kill -9 at a random moment** (0.2–2.5 s after start), then the next command runs; after each trial "
            "`git fsck`, `git status` (no orphan, no half-written file), duplicates and acknowledged writes are checked:",
            "",
            md_table(["command", "trials", "killed", "finished first", "acknowledged lost", "failed checks"], rows),
            "",
            f"{measured_line(time.perf_counter() - t0, load0)}. `python -m remnic.bench faults`.",
        ]
    )
    for t in trials:
        for failure in t["failures"][:5]:
            text += f"\n- {t['kind']}: {failure}"
    return Report("faults", "Reliability: concurrent writers and kill -9", text, {"writers": writers, "kills": trials})
