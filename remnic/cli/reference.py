"""docs/cli.md, generated from the live parser (`make docs`), so the reference cannot drift from the CLI."""

from __future__ import annotations

import argparse
from collections.abc import Iterator


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
    for action in parser._actions:  # argparse keeps sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, sub, helps.get(name, "")


def walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """Every command and sub-command, depth first: (words after `remnic`, its parser, its one-line help)."""
    for name, sub, help_ in _subcommands(parser):
        yield (*path, name), sub, help_
        yield from walk(sub, (*path, name))


def options(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """(how it is written, what it does) for each argument of one command, positionals first."""
    out = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue  # a hidden option stays out of the reference as it does of --help
        if action.option_strings:
            spelled = ", ".join(action.option_strings)
            if action.nargs != 0:
                spelled += f" {action.metavar or action.dest.upper()}"
        else:
            spelled = str(action.metavar or action.dest)
        out.append((spelled, (action.help or "").replace("%(default)s", str(action.default))))
    return out


def cli_markdown() -> str:
    from remnic.errors import EXIT_CODES

    from . import build_parser

    parser = build_parser()
    lines = [
        "# Command-line reference",
        "",
        "Generated from the parser by `make docs`; a test fails when it drifts. Every command takes",
        "`--json`, `--quiet`, `--memory-dir DIR` and `--help`. `remnic` is also installed as `engram`",
        "(the original's legacy name), which runs the same commands. `remnic` with no command is a usage",
        "error: it prints its help on standard error and exits 2 (`remnic --help` prints it on standard",
        "output and exits 0).",
        "",
        "## Exit codes",
        "",
        "The same for every command (an error message names the flag, field, file and line):",
        "",
        "| code | meaning |",
        "|---|---|",
        *(f"| {code} | {meaning} |" for code, meaning in EXIT_CODES.items()),
        "",
    ]
    for words, sub, help_ in walk(parser):
        lines += [f"## `remnic {' '.join(words)}`", "", help_ or sub.description or "", ""]
        usage = sub.format_usage().strip().removeprefix("usage: ")
        lines += ["```", " ".join(usage.split()), "```", ""]
        rows = [(s, h) for s, h in options(sub) if s not in ("--json", "--memory-dir DIR", "--quiet, -q")]
        if rows:
            lines += ["| argument | meaning |", "|---|---|"]
            lines += [f"| `{s}` | {_cell(h)} |" for s, h in rows]
            lines.append("")
        if sub.epilog:
            lines += ["```text", sub.epilog.strip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
