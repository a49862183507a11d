"""A tokens.json under ~/.config that is ignored because $XDG_CONFIG_HOME holds one too is said by
`serve` (its start log), `token list` (text and --json `warnings`) and `doctor`, naming both files; and
`POST action-confidence` takes POST recall's results as they are, giving the advice the X-ray's
provenance gives. A real repository, a real server on 127.0.0.1 and the real model."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_server_http import Env, make_shared_env

from remnic.config import settings_for
from remnic.server.auth import TokenStore
from remnic.service.memory import Memory

SERVE_PORT = 19947


@pytest.fixture
def two_token_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A repository, and a tokens.json in ~/.config/remnic (principal old) and in $XDG_CONFIG_HOME/remnic (ci)."""
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    monkeypatch.delenv("REMNIC_TOKENS_PATH", raising=False)
    legacy, used = home / ".config" / "remnic" / "tokens.json", xdg / "remnic" / "tokens.json"
    TokenStore(legacy).generate("old")
    TokenStore(used).generate("ci")
    repo = tmp_path / "repo"
    Memory.init(repo, settings=settings_for(repo)).close()
    return {"repo": repo, "legacy": legacy, "used": used, "home": home, "xdg": xdg}


def _names_both(message: str, files: dict[str, Path]) -> None:
    assert f"{files['used']} ($XDG_CONFIG_HOME/remnic/tokens.json) is read" in message, message
    assert f"{files['legacy']} (~/.config/remnic/tokens.json) is ignored" in message, message


def test_token_list_and_doctor_say_which_tokens_file_is_read_and_which_is_ignored(
    two_token_files: dict[str, Path],
) -> None:
    files = two_token_files
    listed = run_cli("token", "list", "--json", cwd=files["repo"])
    assert listed.code == 0, listed.err
    data = listed.json()
    assert data["tokensFile"] == str(files["used"]) and [t["principal"] for t in data["tokens"]] == ["ci"]
    [warning] = data["warnings"]
    assert warning["field"] == "tokensFile"
    _names_both(warning["message"], files)

    text = run_cli("token", "list", cwd=files["repo"])
    assert text.code == 0 and "ci" in text.out
    assert text.err.startswith("remnic: warning: tokens.json is in two places")
    _names_both(text.err, files)

    doctor = run_cli("doctor", "--json", cwd=files["repo"])
    [check] = [c for c in doctor.json()["checks"] if c["name"] == "user-files"]
    assert check["status"] == "warn"
    _names_both(check["detail"], files)

    # One file only (or the variable naming one): nothing to warn about, and doctor names what is read.
    files["legacy"].unlink()
    quiet = run_cli("token", "list", "--json", cwd=files["repo"])
    assert "warnings" not in quiet.json() and quiet.err == ""
    [check] = [c for c in run_cli("doctor", "--json", cwd=files["repo"]).json()["checks"] if c["name"] == "user-files"]
    assert check["status"] == "ok" and f"tokens.json {files['used']}" in check["detail"]


def test_serve_says_in_its_start_log_that_the_dot_config_tokens_are_not_accepted(
    two_token_files: dict[str, Path],
) -> None:
    files = two_token_files
    env = {
        **os.environ,
        "HOME": str(files["home"]),
        "XDG_CONFIG_HOME": str(files["xdg"]),
        "REMNIC_NO_DAEMON": "1",
    }
    env.pop("REMNIC_TOKENS_PATH", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", "serve", "--port", str(SERVE_PORT), "--memory-dir", str(files["repo"])],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = ""
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while "is in two places" not in seen and time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                seen += proc.stderr.readline()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    line = next((ln for ln in seen.splitlines() if "is in two places" in ln), "")
    assert "WARNING remnic.server: tokens.json is in two places" in line, seen
    _names_both(line, files)
    assert "the server does not accept its tokens" in line


# --- action-confidence from recall's results ---


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        for env in make_shared_env(tmp_path_factory.mktemp("advice")):
            env.memory.store("The release branch is cut every Thursday", confidence=0.95, tags=["work"])
            env.memory.store("Release notes go to the team channel", confidence=0.7, tags=["personal"])
            env.memory.store("Correction: the release branch is cut on Thursday mornings", category="correction")
            yield env


def _advice(env: Env, memories: list[dict[str, Any]], **request: Any) -> dict[str, Any]:
    r = env.call("POST", "/engram/v1/action-confidence", {**request, "retrievedMemories": memories})
    assert r.status == 200, r.raw
    body: dict[str, Any] = r.json()
    return body


def test_recall_results_passed_as_they_are_give_the_advice_the_xray_provenance_gives(served: Env) -> None:
    query = "when is the release branch cut"
    recall = served.call("POST", "/engram/v1/recall", {"query": query})
    assert recall.status == 200, recall.raw
    results = recall.json()["results"]
    assert len(results) >= 3 and all("provenance" not in r for r in results)
    xray = served.call("GET", "/engram/v1/recall/xray?q=" + query.replace(" ", "+")).json()
    provenance = [x["provenance"] for x in xray["snapshot"]["results"]]
    assert len(provenance) == len(results)

    for request in (
        {},
        {"risk": "low", "contextReadiness": "sufficient"},
        {"risk": "medium", "currentContextScopes": ["work"]},
    ):
        from_recall = _advice(served, results, **request)
        assert from_recall == _advice(served, provenance, **request), request
        assert from_recall["usableMemoryCount"] == len(results)
    # The frontmatter's confidence (0.95, 0.7, the default 0.9), not 0 for a confidence not stated.
    advice = _advice(served, results, risk="low", contextReadiness="sufficient")
    assert advice["decision"] == "act" and advice["confidence"] > 0.8, advice
    assert advice["correctedMemoryCount"] == 1  # the correction, from its category
    scoped = _advice(served, results, currentContextScopes=["work"])
    assert scoped["scopeMismatchCount"] == 1  # the one tagged personal, from its frontmatter's tags

    # What a memory states wins over its frontmatter; a frontmatter that is no object is refused, named.
    stated = _advice(served, [{**results[0], "confidence": 0.1}], risk="low")
    assert stated["confidence"] == 0.1 and stated["decision"] == "ask"
    bad = served.call(
        "POST", "/engram/v1/action-confidence", {"retrievedMemories": [{**results[0], "frontmatter": "x"}]}
    )
    assert bad.status == 400 and bad.json()["details"][0]["field"] == "retrievedMemories[0].frontmatter", bad.raw


def test_the_tool_schema_and_docs_say_recall_results_are_taken_as_they_are() -> None:
    from remnic.server.original_routes import MEMORY_SHAPE

    for key in ("frontmatter", "category", "id", "path", "content", "score", "rank", "preview", "disclosure"):
        assert key in MEMORY_SHAPE["properties"], key
    docs = Path(__file__).resolve().parent.parent / "docs"
    agents = " ".join((docs / "agents.md").read_text().split())
    assert "`retrievedMemories` takes what recall returned, as it is" in agents
    assert "recall result's provenance" not in (docs / "server.md").read_text()
