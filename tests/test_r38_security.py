"""Security fixes of session 38: a private key is redacted whole (BEGIN through END) and leaves no copy;
credential shapes observe missed (API keys said by name, Authorization headers, GitLab, Hugging Face,
npm, SendGrid, Azure keys); a frontmatter integer past Python's digit limit is a malformed file, not a
crash; ``state.commit`` is the user's alone; the LCM index is owner-only; the tokens file check sees
through symlinks; two Origin headers are refused; remnic's git commands run no repository hook or
fsmonitor command."""

from __future__ import annotations

import glob
import json
import os
import socket
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, run_cli
from test_server_http import Env, make_env, make_shared_env

from remnic import Memory, ValidationError
from remnic.bench.locomo import default_data_dir as locomo_data_dir
from remnic.config import load_settings
from remnic.errors import MemoryFormatError, UsageError
from remnic.memfile.model import parse_file, slugify
from remnic.observe.secrets import redact_secrets
from remnic.repo import remote
from remnic.server.auth import ensure_outside_repo

BODY = [
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "QyNTUxOQAAACDq0mVq3bdj5UuBgZ2t4YX8dE6xSxvS0pQ3lBuZ1m0bKgAAAJgFDR4eBQ0e",
]
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(BODY) + "\n-----END OPENSSH PRIVATE KEY-----"


# --- private keys: the whole block ---


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (f"Here is the deploy key:\n{KEY}\nUse it for the release server.", "Here is the deploy key:\n[REDACTED]\n"),
        (f"cut off: {KEY.rsplit(chr(10), 1)[0]}", "cut off: [REDACTED]"),  # no END line: to the end
        (
            f"the rest of it:\n{BODY[0]}\n{BODY[1]}\n-----END RSA PRIVATE KEY-----\nthanks",
            "the rest of it:\n[REDACTED]",
        ),
        ('{"key": "' + KEY.replace("\n", "\\n") + '"}', '{"key": "[REDACTED]"}'),  # JSON-escaped newlines
    ],
)
def test_a_private_key_is_redacted_from_begin_through_end(said: str, kept: str) -> None:
    redacted = redact_secrets(said)
    assert redacted.startswith(kept)
    assert not [b for b in BODY if b[:12] in redacted or b[-12:] in redacted]


def test_a_refusal_shows_no_part_of_a_secret(memory: Memory) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.store(f"key\n-----BEGIN RSA PRIVATE KEY-----\n{BODY[0]}\n-----END RSA PRIVATE KEY-----")
    assert "private key" in str(caught.value) and BODY[0][:8] not in str(caught.value)
    # The excerpt hides what observe would guess too, though a guess alone never refuses a write.
    with pytest.raises(ValidationError) as caught:
        memory.store("the admin password is Plum4Orchard! and the token is glpat-Zx81SpectrumToken2024ab")
    assert "Plum4Orchard" not in str(caught.value) and "Zx81" not in str(caught.value)


def test_an_observed_private_key_leaves_no_copy_anywhere(memory: Memory) -> None:
    messages = [
        {"role": "user", "content": "The production database is postgres for orders."},
        {"role": "user", "content": f"Here is the deploy key:\n{KEY}\nUse it for the release server."},
    ]
    memory.observe("s", messages, flush=True)
    memory.lcm_flush("s")
    memory.settle_index()  # the index writes its files in the background: read them once it is done
    assert memory.lcm_search(BODY[0]) == [] and memory.lcm_search("deploy key")
    history = git(memory.root, "log", "-p", "--all")
    files = [p for p in memory.root.rglob("*") if p.is_file() and ".git" not in p.relative_to(memory.root).parts]
    assert any("transcripts" in p.parts for p in files)  # the archive, the buffer, the ledger, the LCM index …
    for fragment in (BODY[0][:16], BODY[0][-16:], BODY[1][:16], BODY[1][-16:]):
        assert fragment not in history
        assert not [p for p in files if p.is_file() and fragment.encode() in p.read_bytes()], fragment


# --- credential shapes observe missed ---


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (
            "Our staging API key is 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c for billing.",
            "Our staging API key is [REDACTED] for billing.",
        ),
        (
            'curl -H "Authorization: Bearer 8f3b2c1d9e7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c" https://x',
            'curl -H "Authorization: Bearer [REDACTED]" https://x',
        ),
        ("api_key=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c", "api_key=[REDACTED]"),
        ('{"api_key": "sk_test_abc123def456ghi"}', '{"api_key": "[REDACTED]"}'),
        ("The GitLab deploy token is glpat-Zx81SpectrumToken2024ab", "The GitLab deploy token is [REDACTED]"),
        ("hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456 is mine", "[REDACTED] is mine"),
        ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
        ("SG.abcdefghij1234567890ab.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", "[REDACTED]"),
        (
            "AccountName=prod;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy==;EndpointSuffix=core",
            "AccountName=prod;AccountKey=[REDACTED];EndpointSuffix=core",
        ),
    ],
)
def test_more_credential_shapes_are_redacted(said: str, kept: str) -> None:
    assert redact_secrets(said) == kept


@pytest.mark.parametrize(
    "said",
    [
        "Fixed in commit 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e.",
        "The request id is 123e4567-e89b-12d3-a456-426614174000.",
        "The token is valid for 24 hours.",
        "The secret is to practice every day.",
        "The API key is stored in the vault.",
        "The API key is rotated every 90 days.",
        "max_tokens: 4096",
        "The access token is short-lived.",
        "The session token is HMAC-SHA256-signed.",
        "Authorization: Bearer <token>",
        "Authorization: Bearer YOUR_ACCESS_TOKEN",
        "NPM_TOKEN=${NPM_TOKEN}",
        "API_KEY=your-api-key-here",
        "use hf_hub_download for the model",
        "The API key is in 1Password.",
    ],
)
def test_prose_about_keys_and_tokens_is_no_secret(said: str) -> None:
    assert redact_secrets(said) == said


def test_no_locomo_turn_or_caption_changes() -> None:
    paths = sorted(glob.glob(str(locomo_data_dir() / "*.json")))
    if not paths:
        pytest.skip("LoCoMo data not present")
    said = [
        text
        for path in paths
        for key, session in json.loads(Path(path).read_text(encoding="utf-8")).items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
        for text in (turn.get("text") or "", turn.get("blip_caption") or "")
        if text
    ]
    assert len(said) > 3000
    assert [t for t in said if redact_secrets(t) != t] == []


def test_a_guessed_secret_stays_out_of_the_file_name(memory: Memory) -> None:
    assert slugify("the admin password is Plum4Orchard! for staging") == "the-admin-password-is-for-staging"
    result = memory.store("The deploy API key is 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c for billing")
    assert "9f8e7d6c" not in result.record.path


# --- a frontmatter integer past Python's digit limit ---

HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("text", "field", "line"),
    [
        (f"---\nid: mem_big\ncategory: fact\nreinforcement_count: {HUGE}\n---\nBig.\n", "reinforcement_count", 4),
        (f"---\ncategory: fact\nlinks:\n  - a: 1\n    b: 0x{'f' * 4000}\n---\nBig.\n", "links", 5),
        (f'+++\nid = "mem_t1"\ncategory = "fact"\nn = {HUGE}\n+++\nToml.\n', "n", 4),
        (f'+++\ncategory = "fact"\n[x]\nhexy = [1, 0x{"f" * 4000}]\n+++\nToml.\n', "hexy", 4),
    ],
)
def test_a_huge_integer_makes_the_file_malformed_naming_line_and_field(text: str, field: str, line: int) -> None:
    with pytest.raises(MemoryFormatError) as caught:
        parse_file(text, "facts/big.md")
    [problem] = caught.value.problems
    assert (problem.field, problem.line) == (field, line)
    assert "more than 4,300 digits" in problem.message


def test_a_huge_integer_in_one_file_leaves_every_command_and_the_server_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_env(tmp_path, monkeypatch)
    e = next(env)
    try:
        e.memory.store("Cut releases every Tuesday.")
        (e.root / "facts" / "big.md").write_text(
            f"---\nid: mem_bigint2\ncategory: fact\nreinforcement_count: {HUGE}\n---\nBig number body.\n"
        )
        assert e.call("GET", "/engram/v1/memories").status == 200
        assert e.call("POST", "/engram/v1/recall", {"query": "releases"}).status == 200
        for command in (["list"], ["doctor"], ["status"]):
            r = run_cli(*command, "--memory-dir", str(e.root))
            assert "Traceback" not in r.err and "Exceeds the limit" not in r.err + r.out, command
        assert "facts/big.md:4: reinforcement_count: invalid YAML" in run_cli("doctor", "--memory-dir", str(e.root)).out
    finally:
        next(env, None)


# --- state.commit: the user's own config only ---


def test_state_commit_from_the_repository_config_is_ignored_with_a_warning(memory: Memory) -> None:
    (memory.root / "remnic.config.json").write_text(json.dumps({"state": {"commit": True}}))
    settings = load_settings(memory.root)
    assert settings.state.commit is False
    assert [w for w in settings.warnings if "state.commit" in w and "your own config" in w]
    user = Path(os.environ["HOME"]) / ".config" / "remnic" / "config.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"state": {"commit": True}}))
    try:
        assert load_settings(memory.root).state.commit is True
    finally:
        user.unlink()


# --- lows ---


def test_the_lcm_index_is_owner_only(memory: Memory) -> None:
    old = os.umask(0o022)
    try:
        memory.observe("s", [{"role": "user", "content": "Zebrabank moved its office."}], extract=False)
        assert memory.lcm_search("Zebrabank")
    finally:
        os.umask(old)
    index = memory.root / ".remnic" / "lcm"
    assert stat.S_IMODE(index.stat().st_mode) == 0o700
    loose = [p.name for p in index.iterdir() if p.is_file() and stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert loose == []


def test_a_tokens_file_reached_through_a_symlink_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    (tmp_path / "link").symlink_to(root / "state")
    with pytest.raises(UsageError, match="inside the memory repository"):
        ensure_outside_repo(tmp_path / "link" / "tokens.json", None)
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "link" / "tokens.json"))
    r = run_cli("token", "generate", "--principal", "x", "--memory-dir", str(tmp_path / "elsewhere"))
    assert r.code == 2 and "inside the memory repository" in r.err
    assert not (root / "state" / "tokens.json").exists()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    yield from make_shared_env(tmp_path_factory.mktemp("shared"))


def test_two_origin_headers_are_refused(shared: Env) -> None:
    for origins in (("http://localhost", "http://evil.com"), ("http://localhost", "http://localhost")):
        head = "".join(f"Origin: {o}\r\n" for o in origins)
        request = (
            f"GET /engram/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{shared.port}\r\n"
            f"Authorization: Bearer {shared.alice}\r\n{head}Connection: close\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", shared.port), timeout=10) as sock:
            sock.sendall(request.encode())
            assert sock.recv(64).startswith(b"HTTP/1.1 403"), origins
    assert shared.call("GET", "/engram/v1/health", headers={"Origin": "http://localhost"}).status == 200


def test_remnics_git_commands_run_no_repository_hook_or_fsmonitor(memory: Memory, tmp_path: Path) -> None:
    hooks, ran = tmp_path / "hooks", tmp_path / "ran"
    hooks.mkdir()
    ran.mkdir()
    for name in ("reference-transaction", "post-commit", "post-index-change"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {ran}/{name}\n")
        (hooks / name).chmod(0o755)
    (tmp_path / "fsmonitor.sh").write_text(f"#!/bin/sh\ntouch {ran}/fsmonitor\nexit 1\n")
    (tmp_path / "fsmonitor.sh").chmod(0o755)
    git(memory.root, "config", "core.hooksPath", str(hooks))
    git(memory.root, "config", "core.fsmonitor", str(tmp_path / "fsmonitor.sh"))
    memory.store("Cut releases every Tuesday.")
    (memory.root / "facts" / "by-hand.md").write_text("---\ncategory: fact\n---\nDeploys need two approvals.\n")
    memory.sync()
    memory.ledger.is_dirty("facts/by-hand.md")
    remote.run_git(memory.root, ["ls-files", "-u", "-z"])
    assert sorted(p.name for p in ran.iterdir()) == []
    subprocess.run(["git", "status"], cwd=memory.root, capture_output=True, check=True)  # plain git does run them
    assert "fsmonitor" in {p.name for p in ran.iterdir()}


def test_a_huge_integer_in_a_config_file_is_an_error_naming_file_and_line(memory: Memory) -> None:
    (memory.root / "remnic.config.json").write_text('{\n  "recall": {"topK": ' + HUGE + "}\n}\n")
    with pytest.raises(ValidationError) as caught:
        load_settings(memory.root)
    assert "remnic.config.json:2: config: invalid JSON: a number has more than 4,300 digits" in str(
        caught.value.problems[0].describe()
    )
