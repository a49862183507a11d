"""Every CLI process pays for what its start-up imports: building the parser and parsing `query` load no
service module and compile neither the secret scanner nor the name patterns, and `remnic list` opens the
memory without the write, review, sync, pull, revert, export or transcript machinery (nor the name
patterns). A fresh interpreter, since this test process has all of them loaded already."""

from __future__ import annotations

import json
import subprocess
import sys

from remnic.service import Memory

NOT_FOR_LIST = (
    "remnic.service.writes",
    "remnic.service.review",
    "remnic.service.reverting",
    "remnic.service.portable",
    "remnic.service.pull",
    "remnic.service.profile",
    "remnic.service.feedback",
    "remnic.sync.engine",
    "remnic.observe.transcripts",
    "remnic.index.dates",
    "remnic.render.xray",
    "jinja2",
)
NOT_FOR_PARSING = (*NOT_FOR_LIST, "remnic.service.memory", "remnic.service.health", "remnic.observe.buffer")

SCRIPT = f"""
import contextlib, io, json, sys
from remnic.cli import build_parser, main
from remnic.memfile import secrets
from remnic.observe.entities.rules import _rx
args = build_parser().parse_command_line(["query", "deploy window", "--json"])
parsed = [m for m in {NOT_FOR_PARSING!r} if m in sys.modules]
scanner = secrets.secret_kinds.cache_info().currsize if hasattr(secrets, "secret_kinds") else "at import"
compiled = [scanner, _rx.cache_info().currsize]
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(["list", "--json", "--memory-dir", sys.argv[1]])
listed = [m for m in {NOT_FOR_LIST!r} if m in sys.modules]
print(json.dumps({{"text": args.text, "parsed": parsed, "compiled": compiled, "code": code,
                  "count": json.loads(out.getvalue())["count"], "listed": listed, "names": _rx.cache_info().currsize}}))
"""


def test_parsing_and_list_load_only_what_they_run(memory: Memory) -> None:
    memory.defer_index()  # the listing reads the file; no model needs loading for it
    memory.store("The deploy window is Tuesday afternoon")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(memory.root)], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "text": "deploy window",
        "parsed": [],
        "compiled": [0, 0],
        "code": 0,
        "count": 1,
        "listed": [],
        "names": 0,
    }
