"""A `remnic serve` killed with SIGKILL while clients write: every acknowledged write survives, nothing is half-written."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import git, run_remnic

from remnic.service import Memory

TOKEN = "rmn_kill_serve_0123456789abcdef"


def start(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", "serve", "--memory-dir", str(root), "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdout is not None
    return proc, int(json.loads(proc.stdout.readline())["port"])


def post(port: int, content: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        body = json.dumps({"content": content})
        conn.request(
            "POST",
            "/engram/v1/memories",
            body,
            {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        return conn.getresponse().status
    finally:
        conn.close()


def test_killing_the_server_mid_writes_loses_no_acknowledged_write(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"server": {"writeRateLimit": 100000}}))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("REMNIC_")},
        "HOME": str(tmp_path),
        "REMNIC_TOKENS_PATH": str(tmp_path / "tokens.json"),
        "REMNIC_CONFIG_PATH": str(config),
        "REMNIC_TOKEN": TOKEN,
    }
    assert run_remnic("init", str(root), env=env).code == 0
    for trial in range(2):
        proc, port = start(root, env)
        acknowledged: list[str] = []
        stop = threading.Event()

        def writer(n: int, port: int = port, trial: int = trial) -> None:
            i = 0
            while not stop.is_set():
                content = f"Trial {trial} client {n} note {i}"
                try:
                    if post(port, content) == 201:
                        acknowledged.append(content)
                except OSError:
                    return  # the server is gone
                i += 1

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        # Kill it mid-way through the writes, a few acknowledged ones in (more the second time, so the
        # two kills land at different points); a loaded machine takes longer to answer them.
        deadline = time.monotonic() + 30
        while len(acknowledged) < 2 + 4 * trial and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        stop.set()
        for t in threads:
            t.join(30)
        assert acknowledged, "the server answered no write before it was killed"
        with Memory.open(root) as memory:  # opening recovers what the dead server left
            stored = {r.content for r in memory.list()}
            assert set(acknowledged) <= stored
            assert memory.recall(acknowledged[-1]).hits[0].content == acknowledged[-1]
        assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
        subprocess.run(["git", "fsck", "--no-progress"], cwd=root, check=True, capture_output=True)
