"""The ``remnic`` command line: a thin layer over :class:`remnic.service.Memory`.

Each command module registers its sub-commands; the exit codes are
:data:`remnic.errors.EXIT_CODES` (0 success, 1 failure, 2 usage or input error,
3 ``daemon status`` with no server running, 130 interrupted).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from remnic.errors import by_interrupt

if TYPE_CHECKING:
    from ._common import Parser

DESCRIPTION = """\
remnic: git-backed, file-native memory for AI agents and the people who work with them.

Memories are markdown files with YAML frontmatter in a git repository. Every
change is a commit; recall is hybrid (BM25 + local embeddings) and every recall
can be X-rayed.
"""

EPILOG = """\
examples:
  remnic init ~/memories
  remnic store "We cut releases every Tuesday" --category decision --tags ops
  remnic list --category decision
  remnic versions diff decisions/we-cut-releases-every-tuesday.md
  remnic query "when do we release?"

Run `remnic <command> --help` for each command's options.
"""


def _modules() -> list[Any]:
    from . import (
        advice,
        config,
        connectors,
        entities,
        hooks,
        lcm,
        memories,
        observe,
        portable,
        recall,
        serve,
        space,
        sync,
        versions,
    )

    modules = [memories, portable, versions, config, recall, observe, sync, serve, hooks, lcm, entities, connectors]
    return [*modules, space, advice]


def build_parser() -> Parser:
    from ._common import Formatter, Parser, common_parent

    parser = Parser(
        prog="remnic", description=DESCRIPTION, epilog=EPILOG, formatter_class=Formatter, parents=[common_parent()]
    )
    from remnic.version import __version__

    parser.add_argument("--version", action="version", version=f"remnic {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    for module in _modules():
        module.register(sub)
    from .examples import add_examples

    add_examples(parser)
    return parser


_gc_paused = False
"""Whether :func:`main` paused the garbage collector while this process starts (see :func:`_started`)."""


def main(argv: Sequence[str] | None = None, parser: Parser | None = None) -> int:
    """The ``remnic`` command: ``argv`` (default: this process's arguments), parsed by ``parser`` when one
    is given (a process running many commands builds it once: every command's parser is ~40 ms)."""
    global _gc_paused
    if argv is None and gc.isenabled():  # the process is this one command: see _started
        gc.disable()
        _gc_paused = True
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv, parser)
    except (KeyboardInterrupt, ImportError) as exc:
        # Ctrl-C while the command modules (or onnxruntime, which wraps it in an ImportError) are still
        # loading, before execute() is in charge: the same exit as later on, not a traceback.
        if not by_interrupt(exc):
            raise
        return _interrupted(exc if isinstance(exc, KeyboardInterrupt) else KeyboardInterrupt(), "--json" in argv)


def _main(argv: list[str], parser: Parser | None) -> int:
    if sys.stdin is None:  # started with standard input closed (`<&-`): read it as empty, so '-' is a usage error
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - for the life of the process
    if len(argv) == 5 and argv[0] == "merge-file" and not any(a.startswith("-") for a in argv[1:]):
        return _merge_driver(argv[1:])
    if _asks_version(argv):  # before any parser or service module is imported: --version is instant
        from remnic.version import __version__

        print(f"remnic {__version__}")
        return 0
    from .fastpath import try_server  # light: config and the standard library

    served = try_server(argv)  # store and query through a running server: no model load here
    if served is not None:
        return served
    return run(argv, parser)


def _asks_version(argv: list[str]) -> bool:
    """Whether argparse would answer ``argv`` with the version: --version before any command or --help."""
    value_flags = {"--memory-dir", "--space"}
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--version":
            return True
        elif arg in ("-h", "--help", "--") or not arg.startswith("-"):
            return False
        else:
            skip = arg in value_flags
    return False


def _merge_driver(args: list[str]) -> int:
    """git's merge driver, run once per memory file a merge touches on both sides: straight to the
    service, without building every command's parser (the same as `remnic merge-file` with no flags)."""
    from pathlib import Path

    from remnic.errors import RemnicError
    from remnic.service.merge_driver import merge_file_at

    try:
        return merge_file_at(Path.cwd(), Path(args[0]), Path(args[1]), Path(args[2]), args[3])
    except (OSError, RemnicError) as exc:
        print(f"remnic merge-file: {exc}; git's own merge applies", file=sys.stderr)
        return 1


def run(argv: list[str], parser: Parser | None = None) -> int:
    """One command, in this process (``parser``: one built before, as a server keeps)."""
    from ._common import Parser

    Parser.json_errors = "--json" in argv
    parser = parser or build_parser()
    args = parser.parse_command_line(argv)
    _started()
    if not getattr(args, "handler", None):
        return _no_command(parser)
    return execute(args)


def _started() -> None:
    """The command's modules and parser are loaded, and live as long as the process: they are frozen out
    of the collector's reach before it runs again. Collections while they loaded, and every later one
    scanning them again, were ~5% of a short command's CPU and found next to nothing to free."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


def _no_command(parser: Parser) -> int:
    """`remnic` alone is a usage error (exit 2): the help, for a person, on standard error as every
    usage error is; under --json the error as JSON. `remnic --help` prints it on stdout, exit 0."""
    from ._common import Parser

    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    message = f"a command is required; choose from {', '.join(commands)} (`remnic <command> --help`)"
    if Parser.json_errors:  # the shape of every other usage error under --json
        detail = {"field": "command", "message": "required", "options": list(commands)}
        error = {"error": message, "code": "usage_error", "details": [detail]}
        print(json.dumps(error, indent=2, ensure_ascii=False), file=sys.stderr)
        return 2
    parser.print_help(sys.stderr)
    print(f"\n{parser.prog}: error: {message}", file=sys.stderr)
    return 2


def execute(args: argparse.Namespace) -> int:
    """Run a parsed command: its exit code, errors printed as the CLI prints them."""
    from remnic.errors import RemnicError

    try:
        return int(args.handler(args) or 0)
    except RemnicError as exc:
        from ._common import describe_for_cli, error_dict_for_cli

        parser = getattr(args, "command_parser", None)
        if getattr(args, "json", False):
            print(json.dumps(error_dict_for_cli(exc, parser), indent=2, ensure_ascii=False), file=sys.stderr)
        else:
            print(f"remnic: error: {describe_for_cli(exc, parser)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        return _interrupted(exc, bool(getattr(args, "json", False)))
    except ImportError as exc:
        if not by_interrupt(exc):
            raise
        return _interrupted(KeyboardInterrupt(), bool(getattr(args, "json", False)))
    except BrokenPipeError:
        return 0


def _interrupted(exc: KeyboardInterrupt, as_json: bool) -> int:
    from remnic.errors import EXIT_INTERRUPTED

    said = f": {exc}" if str(exc) else ""  # what stands despite the interruption (an import's commit)
    if as_json:  # the shape of every other error under --json
        print(json.dumps({"error": f"interrupted{said}", "code": "interrupted"}, indent=2), file=sys.stderr)
    else:
        print(f"remnic: interrupted{said}", file=sys.stderr)
    return int(getattr(exc, "exit_code", EXIT_INTERRUPTED))  # 143 for a SIGTERM a command turned into one
