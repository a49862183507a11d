"""To add to tests/test_server_r30.py once /tmp/r30/fc/observe_kept_fields.patch is applied."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_server_http import Env, make_env


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from make_env(tmp_path, monkeypatch)


@pytest.mark.parametrize("extract", [True, False])
def test_observe_archives_source_format_parts_and_name_as_sent(env: Env, extract: bool) -> None:
    parts = [{"type": "text", "text": "Dana moved to Lisbon."}, {"type": "file", "path": "a.md"}]
    msg = {"role": "user", "content": "Dana moved to Lisbon.", "sourceFormat": "pi", "parts": parts, "name": "dana"}
    body = {"sessionKey": "s1", "messages": [msg, {"role": "assistant", "content": "Noted."}]}
    if not extract:
        body["skipExtraction"] = True
    assert env.call("POST", "/engram/v1/observe", body).status == 202
    lines = [
        json.loads(x) for f in (env.root / "state" / "transcripts").rglob("*.jsonl") for x in f.read_text().splitlines()
    ]
    first = next(x for x in lines if x["role"] == "user")
    assert first["sourceFormat"] == "pi" and first["parts"] == parts and first["name"] == "dana"
    assert first["speaker"] == "dana"
    second = next(x for x in lines if x["role"] == "assistant")
    assert not {"sourceFormat", "parts", "name"} & set(second)
