"""docs/cli.md is the live parser's reference, and every command and argument explains itself."""

from __future__ import annotations

from pathlib import Path

from remnic.cli import build_parser
from remnic.cli.reference import cli_markdown, options, walk

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def test_cli_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == cli_markdown(), "run `make docs` and review the diff of docs/cli.md"


def test_every_command_and_argument_has_help_text() -> None:
    missing = []
    commands = list(walk(build_parser()))
    for words, sub, help_ in commands:
        if not help_:
            missing.append(f"remnic {' '.join(words)}")
        missing += [f"remnic {' '.join(words)} {spelled}" for spelled, text in options(sub) if not text]
    assert len(commands) > 30 and not missing, missing


def test_the_reference_names_every_command() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for words, _sub, _help in walk(build_parser()):
        assert f"## `remnic {' '.join(words)}`" in doc
