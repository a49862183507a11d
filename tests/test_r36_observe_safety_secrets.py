"""Credentials said in words — a password, ``user:pass@host``, an AWS secret access key beside its
key id — are secrets to the one scanner the store and observe share: redacted before the buffer and
the archive, the sentence rejected by the judge, no memory file and no file name holds them."""

from __future__ import annotations

import glob
import json
import subprocess
from pathlib import Path

import pytest

from remnic import Memory, ValidationError
from remnic.bench.locomo import default_data_dir as locomo_data_dir
from remnic.observe.secrets import SECRET_REASON, redact_secrets

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SAID = [
    ("The staging DB password is Tr0ub4dor&3xyz.", "The staging DB password is [REDACTED]."),
    ("The wifi password at the office is sunshine2026.", "The wifi password at the office is [REDACTED]."),
    ("password: hunter22", "password: [REDACTED]"),
    ("The root passwd is now P@ssw0rd!", "The root passwd is now [REDACTED]"),  # the "!" is the password's
    (
        "postgres://admin:s3cretPass@db.internal:5432/prod is our prod connection string.",
        "postgres://admin:[REDACTED]@db.internal:5432/prod is our prod connection string.",
    ),
    (
        f"Our AWS key is AKIAIOSFODNN7EXAMPLE and the secret is {AWS_SECRET}.",
        "Our AWS key is [REDACTED] and the secret is [REDACTED].",
    ),
    (f"{AWS_SECRET} goes with ASIAIOSFODNN7EXAMPLE", "[REDACTED] goes with [REDACTED]"),
    (f"My secret access key is {AWS_SECRET}", "My secret access key is [REDACTED]"),
]
NOT_SECRETS = [
    "The password policy requires 12 characters.",
    "The password is in 1Password.",  # where it is kept: a fact worth recalling
    "The password is required.",
    "The password is 12 characters long.",
    "The office wifi password rotates monthly.",
    "Use postgres://user:password@localhost for local dev.",
    "Local dev is postgres://postgres:postgres@localhost:5432/app.",
    "password = os.environ['DB_PASSWORD']",
    "Password: $DB_PASS or <your-password>, never ********.",
    "Run pwd: /home/ana is where it starts.",
    "The commit is 0123456789abcdef0123456789abcdef01234567.",
]


@pytest.mark.parametrize(("said", "kept"), SAID)
def test_a_credential_said_in_words_is_redacted_value_only(said: str, kept: str) -> None:
    assert redact_secrets(said) == kept


@pytest.mark.parametrize("said", NOT_SECRETS)
def test_prose_about_passwords_is_no_secret(said: str) -> None:
    assert redact_secrets(said) == said


def test_the_store_refuses_the_precise_kinds_and_leaves_words_to_observe(memory: Memory) -> None:
    with pytest.raises(ValidationError, match=r"secret \(password in a URL\)"):
        memory.store("Prod is postgres://admin:s3cretPass@db.internal:5432/prod")
    # "password is X" is a guess from words: observe redacts it, a write is never refused for it (a false
    # positive there would block the write, or make a hand-written note malformed).
    assert memory.store("The password is SHA-256 hashed and AES-256 encrypted at rest.").changed
    assert memory.store("The wifi password at the office is sunshine2026.").changed
    assert memory.store("The password is in 1Password.").changed


def test_observing_credentials_commits_no_file_and_keeps_no_copy(memory: Memory) -> None:
    lines = [f"[2026-05-01T09:0{i}:00Z] Dana: {said}" for i, (said, _) in enumerate(SAID)]
    lines.append("[2026-05-01T09:09:00Z] Dana: We decided to deploy on Fridays.")
    result = memory.observe_transcript("sec", "\n".join(lines), fmt="plain", flush=True)
    accepted = [o.fact.content for o in result.observations if o.proposed_status]
    assert accepted == ["We decided to deploy on Fridays."]
    assert all(o.verdict.reason == SECRET_REASON for o in result.observations if not o.proposed_status)
    git = ["git", "-C", str(memory.root)]
    tracked = subprocess.run([*git, "ls-files"], capture_output=True, text=True, check=True).stdout
    history = subprocess.run([*git, "log", "-p", "--all"], capture_output=True, text=True, check=True).stdout
    values = ["Tr0ub4dor", "sunshine2026", "hunter22", "P@ssw0rd", "s3cretPass", AWS_SECRET]
    assert not [v for v in values if v in tracked + history]
    archived = [*memory.root.rglob("*.jsonl"), *memory.durable_dir.rglob("*.jsonl")]
    assert archived
    for path in archived:  # the buffer and the archive keep the turns, redacted
        text = path.read_text(encoding="utf-8")
        assert not [v for v in values if v in text], path


def test_no_locomo_turn_is_taken_for_a_credential() -> None:
    paths = sorted(glob.glob(str(locomo_data_dir() / "*.json")))
    if not paths:
        pytest.skip("LoCoMo data not present")
    said = [
        turn.get("text") or ""
        for path in paths
        for key, session in json.loads(Path(path).read_text(encoding="utf-8")).items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    assert len(said) > 2000
    assert [t for t in said if redact_secrets(t) != t] == []
