"""Server load benchmark: concurrent clients mixing recall and writes over loopback HTTP.

The server is a real ``remnic serve`` subprocess (so its threads do not share a
GIL with the clients); each client is a thread with its own keep-alive
connection and its own principal. Afterwards the server is stopped and every
write it acknowledged (201) is checked in git (a commit whose
``Remnic-Memory-Id`` trailer names it, the file at HEAD) and in the index.

Writes are not rate-limited here (a config file raises ``server.writeRateLimit``):
the point is throughput and durability under contention, and the limit has its
own test. A bounded benchmark, not a timed test: ``python -m remnic.bench server``.
"""

from __future__ import annotations

import http.client
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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from remnic.config import settings_for
from remnic.server.auth import TokenStore
from remnic.service.memory import Memory

from . import Report, md_table, percentile
from .words import sentence

CLIENTS = 8
WRITE_SHARE = 0.2
QUERIES = (
    "when do we deploy",
    "database migration incident",
    "who owns the roadmap",
    "cache latency alarm",
    "vacation budget",
    "review the invoice",
    "staging replica backup",
    "customer tenant design",
)


@dataclass
class ClientStats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"read": [], "write": []})
    statuses: Counter = field(default_factory=Counter)
    acked: list[tuple[str, str]] = field(default_factory=list)
    """(memory id, path) of every write the server answered 201."""
    errors: list[str] = field(default_factory=list)


def _client(
    port: int,
    token: str,
    seed: int,
    deadline: float,
    read_op: str,
    stats: ClientStats,
    write_share: float = WRITE_SHARE,
) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    while time.monotonic() < deadline:
        write = rng.random() < write_share
        if write:
            method, path = "POST", "/engram/v1/memories"
            body = json.dumps({"content": sentence(rng), "category": "fact", "tags": ["load"]})
        elif read_op == "recall":
            method, path = "POST", "/engram/v1/recall"
            body = json.dumps({"query": rng.choice(QUERIES), "topK": 5})
        else:
            method, path, body = "GET", "/engram/v1/memories?query=" + rng.choice(QUERIES).split()[-1], None
        started = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            stats.errors.append(repr(exc))
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            continue
        stats.latencies["write" if write else "read"].append((time.perf_counter() - started) * 1000)
        stats.statuses[resp.status] += 1
        if write and resp.status == 201:
            reply = json.loads(data)
            stats.acked.append((reply["memoryId"], reply["path"]))
    conn.close()


def _start_server(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "remnic",
            "serve",
            "--memory-dir",
            str(root),
            "--port",
            "0",
            "--json",
            "--log-level",
            "warning",
        ],
        stdout=subprocess.PIPE,
        stderr=open(root.parent / "server.log", "wb"),  # noqa: SIM115 - the child owns it
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"server did not start; see {root.parent / 'server.log'}")
    return proc, int(json.loads(line)["port"])


def _verify(root: Path, acked: list[tuple[str, str]]) -> dict[str, int]:
    """How many acknowledged writes are committed in git and present in the index."""
    log = subprocess.run(["git", "log", "--format=%B"], cwd=root, capture_output=True, text=True, check=True).stdout
    trailer_ids = {line.split(":", 1)[1].strip() for line in log.splitlines() if line.startswith("Remnic-Memory-Id:")}
    tracked = set(
        subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True).stdout.split(
            "\0"
        )
    )
    in_git = sum(1 for mid, path in acked if mid in trailer_ids and path in tracked)
    in_index = 0
    with Memory.open(root, settings=settings_for(root)) as memory:
        index = memory.index
        in_index = sum(1 for mid, path in acked if index.path_of(mid) == path)
    return {
        "acked": len(acked),
        "in_git": in_git,
        "in_index": in_index,
        "clean_tree": int(
            not subprocess.run(
                ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
            ).stdout.strip()
        ),
    }


def run(quick: bool = False) -> Report:
    duration = 5.0 if quick else 30.0
    read_op = "recall"  # what agents call most; _client also knows "browse" (GET memories?query=)
    with tempfile.TemporaryDirectory(prefix="remnic-bench-server-") as tmp:
        base = Path(tmp)
        root = base / "mem"
        memory = Memory.init(root, settings=settings_for(root))
        rng = random.Random(11)
        memory.import_records([{"content": sentence(rng), "category": "fact"} for _ in range(300)])
        memory.close()
        (base / "config.json").write_text(json.dumps({"server": {"writeRateLimit": 1_000_000}}))
        env = {
            **os.environ,
            "REMNIC_TOKENS_PATH": str(base / "tokens.json"),
            "REMNIC_CONFIG_PATH": str(base / "config.json"),
            "HOME": str(base),
        }
        store = TokenStore(base / "tokens.json")
        tokens = [store.generate(f"agent{i}")[0] for i in range(CLIENTS)]
        proc, port = _start_server(root, env)
        try:
            stats = [ClientStats() for _ in range(CLIENTS)]
            # Warm-up: the first recall loads the embedding model; keep it out of the numbers.
            _client(port, tokens[0], 0, time.monotonic() + 1.0, read_op, ClientStats())
            # Baseline: one client, reads only, so queueing under load can be told from service time.
            solo = ClientStats()
            _client(port, tokens[0], 1, time.monotonic() + (2.0 if quick else 5.0), read_op, solo, write_share=0.0)
            # And one client writing alone: a write's own cost (lock, file, commit), without queueing.
            solo_writes = ClientStats()
            _client(
                port, tokens[0], 2, time.monotonic() + (2.0 if quick else 5.0), read_op, solo_writes, write_share=1.0
            )
            deadline = time.monotonic() + duration
            threads = [
                threading.Thread(target=_client, args=(port, tokens[i], 100 + i, deadline, read_op, stats[i]))
                for i in range(CLIENTS)
            ]
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - started
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        acked = [a for s in [*stats, solo_writes] for a in s.acked]
        verified = _verify(root, acked)
    reads = [x for s in stats for x in s.latencies["read"]]
    writes = [x for s in stats for x in s.latencies["write"]]
    statuses = sum((s.statuses for s in stats), Counter())
    errors = [e for s in stats for e in s.errors]
    total = len(reads) + len(writes)
    rows = [
        [
            f"{read_op} ({'POST recall, topK 5' if read_op == 'recall' else 'GET memories?query='})",
            len(reads),
            f"{statistics.median(reads):.1f} ms" if reads else "—",
            f"{percentile(reads, 95):.1f} ms" if reads else "—",
        ],
        [
            "write (POST memories → file + git commit + index)",
            len(writes),
            f"{statistics.median(writes):.1f} ms" if writes else "—",
            f"{percentile(writes, 95):.1f} ms" if writes else "—",
        ],
        [
            "all",
            total,
            f"{statistics.median(reads + writes):.1f} ms" if total else "—",
            f"{percentile(reads + writes, 95):.1f} ms" if total else "—",
        ],
    ]
    solo_reads = solo.latencies["read"]
    rows.insert(
        0,
        [
            f"{read_op}, 1 client alone (baseline)",
            len(solo_reads),
            f"{statistics.median(solo_reads):.1f} ms" if solo_reads else "—",
            f"{percentile(solo_reads, 95):.1f} ms" if solo_reads else "—",
        ],
    )
    alone = solo_writes.latencies["write"]
    rows.insert(
        1,
        [
            "write, 1 client alone (baseline)",
            len(alone),
            f"{statistics.median(alone):.1f} ms" if alone else "—",
            f"{percentile(alone, 95):.1f} ms" if alone else "—",
        ],
    )
    markdown = (
        md_table(["request", "count", "p50", "p95"], rows)
        + f"\n\n**{total / elapsed:.1f} requests/s** with {CLIENTS} concurrent keep-alive clients "
        f"({int(WRITE_SHARE * 100)}% writes) for {elapsed:.0f} s against `remnic serve` on 127.0.0.1 "
        f"(300 memories to start). Status codes: {dict(sorted(statuses.items()))}; transport errors: {len(errors)}."
        f" Request threads enter the service concurrently; writes serialise on the repository write lock"
        f" (file + git commit + index), which is what the write latency measures."
        f"\n\nDurability: {verified['acked']} writes acknowledged (201, the lone writer's included); {verified['in_git']} found committed in "
        f"git (trailer + file at HEAD), {verified['in_index']} found in the index; working tree clean: "
        f"{bool(verified['clean_tree'])}. `python -m remnic.bench server`."
    )
    return Report(
        "server",
        "Server: concurrent recall + writes over loopback HTTP",
        markdown,
        {
            "requests_per_s": total / elapsed,
            "read_op": read_op,
            "read_p50_ms": statistics.median(reads) if reads else None,
            "read_p95_ms": percentile(reads, 95) if reads else None,
            "write_p50_ms": statistics.median(writes) if writes else None,
            "write_p95_ms": percentile(writes, 95) if writes else None,
            "errors": len(errors),
            **verified,
        },
    )
