"""The password rule of the secret scanner, sentence by sentence: a value after "password is" counts only
when it looks like one and ends its clause (a hyphenated description or a following participle is prose),
a quoted value always counts, and the refusal names the kind and a redacted excerpt, never the value."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from remnic.bench.locomo import default_data_dir as locomo_data_dir
from remnic.config.settings import StoreSettings
from remnic.memfile.secrets import describe_secret, redact, secret_spans
from remnic.memfile.validate import check_content

# (sentence, what redaction leaves, or None when the sentence holds no secret)
TABLE: list[tuple[str, str | None]] = [
    # Prose about a password: a description, a place, a rule.
    ("The password is SHA-256 hashed.", None),
    ("The password is 2FA-protected.", None),
    ("Password at login is OAuth2-based.", None),
    ("The password is base64-encoded.", None),
    ("The password is k8s-managed.", None),
    ("The password is SHA256-hashed and salted.", None),
    ("The password is UTF-8-encoded.", None),
    ("The password is ISO27001-compliant.", None),
    ("the password is x86-only", None),
    ("The password is AES256 encrypted at rest.", None),
    ("The password is PBKDF2 hashed with 600k rounds.", None),
    ("Our login password is SHA-256 hashed and we rotate it every 90 days.", None),
    ("The password is Argon2id stored in the vault.", None),
    ("The password is bcrypt2 rotated monthly.", None),
    ("The password is in 1Password.", None),
    ("The password policy requires 12 characters.", None),
    ("The password is 12+ characters.", None),
    ("The password: Must contain a number.", None),
    ("The password: at least 8 chars, 1 digit.", None),
    ("Use postgres://user:password@localhost for local dev.", None),
    # A value: clause-ending, quoted, after "is:", after a URL, with its own "!".
    ("The staging DB password is Tr0ub4dor&3xyz.", "The staging DB password is [REDACTED]."),
    ("Password is: hunter2", "Password is: [REDACTED]"),
    ("The password is: hunter22, ask Ana.", "The password is: [REDACTED], ask Ana."),
    ("The admin password at https://admin.example.com is hunter22.", None),  # filled below
    ("The password is 'Passw0rd!' for the demo box.", "The password is '[REDACTED]' for the demo box."),
    ("The root passwd is now P@ssw0rd!", "The root passwd is now [REDACTED]"),
    ('The password is "sunshine" on the guest box.', 'The password is "[REDACTED]" on the guest box.'),
    ("The password was Welcome1 before, now it is unknown.", "The password was [REDACTED] before, now it is unknown."),
    ("Wifi password: CoffeeShop2024", "Wifi password: [REDACTED]"),
    ("The wifi password is Guest-2026 and the door code is on the fridge.", None),  # filled below
    ("The password is WiFi-Guest.", "The password is [REDACTED]."),
    ("The password is 482193.", "The password is [REDACTED]."),
    ("The root password is Tr0ub4dor&3xyz here.", "The root password is [REDACTED] here."),
    ("The password is SHA-256 in transit.", None),
    ("The password is Argon2id-hashed at rest.", None),
    ("The password is AES-256/GCM encrypted.", None),
    # Set in a config line, JSON, Markdown, a sentence or a command (v8 M-2) …
    ("Our staging DB_PASSWORD=hunter22 in the env file.", "Our staging DB_PASSWORD=[REDACTED] in the env file."),
    ("MYSQL_ROOT_PASSWORD=S3cret!x", "MYSQL_ROOT_PASSWORD=[REDACTED]"),
    ("PGPASSWORD=S3cret99 psql -h db", "PGPASSWORD=[REDACTED] psql -h db"),
    ("PASSWORD: hunter22", "PASSWORD: [REDACTED]"),
    ('{"password": "S3cr3t!x"}', '{"password": "[REDACTED]"}'),
    ("**Password:** hunter22", "**Password:** [REDACTED]"),
    (
        "Dana changed the staging password to Tr0ub4dor&3 yesterday.",
        "Dana changed the staging password to [REDACTED] yesterday.",
    ),
    ("I set the password to Tr0ub4dor&3.", "I set the password to [REDACTED]."),
    ("curl -u admin:S3cret99 https://api.example.com", "curl -u admin:[REDACTED] https://api.example.com"),
    ("mysql -u root -pS3cret99 app", "mysql -u root -p[REDACTED] app"),
    ("mysql -u root -p S3cret99", "mysql -u root -p [REDACTED]"),
    ("Our Redis URL is redis://:p4ssw0rd99@redis:6379/0.", "Our Redis URL is redis://:[REDACTED]@redis:6379/0."),
    # … but not code that reads it, a placeholder, a scheme, a version or a plain "set … to expire".
    ("password: process.env.DB_PASSWORD", None),
    ("password=settings.DB_PASSWORD", None),
    ('password = os.environ["X"]', None),
    ("DB_PASSWORD=$DB_PASS", None),
    ('"password": "<your password>"', None),
    ("Remember to set the password to expire every 90 days.", None),
    ("The password is AES-256.", None),
    ("The password is Base64.", None),
    ("The password is Windows10-compatible.", None),
    ("Password: v1.2.3", None),
    ("mysql -u root -p -h db", None),
    ("curl -u $USER:$TOKEN https://api.example.com", None),
]
TABLE[23] = (TABLE[23][0], "The admin password at https://admin.example.com is [REDACTED].")
TABLE[29] = (TABLE[29][0], "The wifi password is [REDACTED] and the door code is on the fridge.")


@pytest.mark.parametrize(("said", "kept"), TABLE)
def test_a_password_is_a_value_that_ends_its_clause(said: str, kept: str | None) -> None:
    assert redact(said, "[REDACTED]") == (kept if kept is not None else said)


def test_config_and_command_values_are_observe_only_but_an_empty_url_user_is_precise() -> None:
    assert redact("Our staging DB_PASSWORD=hunter22.", "[REDACTED]", words=False) == "Our staging DB_PASSWORD=hunter22."
    assert (
        redact("curl -u admin:S3cret99 https://x.io", "[REDACTED]", words=False)
        == "curl -u admin:S3cret99 https://x.io"
    )
    assert check_content("Our Redis URL is redis://:p4ssw0rd99@redis:6379/0.", StoreSettings())  # refused
    assert not check_content("Our staging DB_PASSWORD=hunter22 in the env file.", StoreSettings())


def test_the_refusal_names_the_kind_and_an_excerpt_never_the_value() -> None:
    assert not check_content("The wifi password at the office is Tr0ub4dor&3xyz, ask Ana.", StoreSettings())
    said = describe_secret("The wifi password at the office is Tr0ub4dor&3xyz, ask Ana.")  # observe's reading
    assert said is not None and "Tr0ub4dor" not in said[0]
    assert "a password after 'password at the office is'" in said[0]
    assert "“The wifi password at the office is [REDACTED], ask Ana.”" in said[0]
    problems = check_content("Prod: postgres://admin:Tr0ub4dor3@db.internal:5432/prod, ask Ana.", StoreSettings())
    message = problems[0].message
    assert "Tr0ub4dor" not in message and "a password in a URL" in message
    assert "remove the value, or set store.scanSecrets to false in your own config" in message
    described = describe_secret(
        f"An early sentence that is long enough. Our AWS key is AKIAIOSFODNN7EXAMPLE {'x' * 60}"
    )
    assert described is not None and described[0].startswith("an AWS access key id: “…")
    assert "AKIA" not in described[0] and "[REDACTED]" in described[0]


def test_no_locomo_string_and_no_golden_file_holds_a_secret() -> None:
    root = Path(__file__).resolve().parent.parent
    texts: list[tuple[str, str]] = [
        (str(path), path.read_text(encoding="utf-8", errors="replace"))
        for path in sorted((root / "golden").rglob("*"))
        if path.is_file()
    ]

    def strings(value: object) -> list[str]:
        if isinstance(value, str):
            return [value]
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        return [s for item in items for s in strings(item)]

    for name in sorted(glob.glob(str(locomo_data_dir() / "*.json"))):  # $REMNIC_LOCOMO_DIR or shared/
        texts += [(name, s) for s in strings(json.loads(Path(name).read_text(encoding="utf-8")))]
    found = [(name, text[:120]) for name, text in texts if secret_spans(text)]
    assert texts and found == []
