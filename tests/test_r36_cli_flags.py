"""Short flags mean the same on every command: `-n` is `--namespace` wherever a command has one, and so on
(a new user typed `update -c` after `store -c` and got "unrecognized arguments")."""

from __future__ import annotations

import argparse

import pytest

from remnic.cli import build_parser
from remnic.cli.reference import walk

SHORT_FOR = {
    "--namespace": "-n",
    "--category": "-c",
    "--tag": "-t",
    "--tags": "-t",
    "--status": "-s",
    "--format": "-f",
}
"""Each long flag and the short form it has wherever a command takes it."""

TAKEN: dict[tuple[str, str], str] = {}
"""(command, short flag) -> why that command's short flag means something else; empty while none does."""


@pytest.fixture(scope="module")
def commands() -> list[tuple[str, argparse.ArgumentParser]]:
    return [(" ".join(words), sub) for words, sub, _ in walk(build_parser())]


def _owner(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


def test_every_long_flag_has_its_short_form(commands: list[tuple[str, argparse.ArgumentParser]]) -> None:
    wrong = []
    for name, sub in commands:
        for long, short in SHORT_FOR.items():
            action = _owner(sub, long)
            if action is None:
                continue
            if short in action.option_strings:
                assert (name, short) not in TAKEN, f"{name}: {short} is {long}; drop its TAKEN entry"
            elif (name, short) not in TAKEN:
                other = _owner(sub, short)
                wrong.append(f"remnic {name}: {long} has no {short}" + (f" ({short} is {other.dest})" if other else ""))
    assert not wrong, "\n".join(wrong)
    assert len([n for n, s in commands if _owner(s, "--namespace")]) >= 15  # the walk did reach the sub-commands


def test_short_forms_parse_as_the_long_ones() -> None:
    parser = build_parser()
    args = parser.parse_args(["update", "mem_x", "-c", "fact", "-t", "a,b", "-s", "archived"])
    assert (args.category, args.tags, args.status) == ("fact", "a,b", "archived")
    args = parser.parse_args(["query", "q", "-t", "ops", "-t", "dev", "-s", "active", "-n", "work"])
    assert (args.tags, args.status, args.namespace) == (["ops", "dev"], ["active"], "work")
    args = parser.parse_args(["observe", "-", "--session-key", "s", "-f", "plain", "-n", "work"])
    assert (args.format, args.namespace) == ("plain", "work")
    for words in (["lcm", "search", "x"], ["lcm", "flush", "s"], ["review", "list"], ["entities", "list"]):
        assert parser.parse_args([*words, "-n", "work"]).namespace == "work"


def test_doctor_help_states_its_exit_codes(commands: list[tuple[str, argparse.ArgumentParser]]) -> None:
    text = " ".join(dict(commands)["doctor"].format_help().split())
    assert "0 when every check is ok or only warns, 1 when any check FAILs" in text
