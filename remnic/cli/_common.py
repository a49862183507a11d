"""Shared CLI plumbing: common flags, opening the memory, output, progress, errors."""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import posixpath
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from remnic.config import Settings, load_settings
from remnic.errors import FieldProblem, NotFoundError, RemnicError, UsageError
from remnic.memfile.graphemes import display_width
from remnic.memfile.paths import repo_relative, to_posix
from remnic.memfile.schema import CATEGORIES, STATUSES

from .usage_errors import Choices, error_object

if TYPE_CHECKING:  # the service loads when a command opens the memory, not when the parser is built
    from remnic.service.memory import Memory


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the hand-wrapped examples in descriptions and epilogs as written."""


class Parser(argparse.ArgumentParser):
    """argparse, but usage errors come out as JSON (same shape as every other error) under --json."""

    json_errors = False

    def error(self, message: str) -> None:  # type: ignore[override]
        message = _with_suggestion(message)
        if Parser.json_errors:  # the shape of every other error under --json, details and all
            print(json.dumps(error_object(self, message), indent=2, ensure_ascii=False), file=sys.stderr)
            raise SystemExit(2)
        super().error(message)

    def parse_command_line(self, argv: list[str]) -> argparse.Namespace:
        """`parse_args`, but a trailing optional positional may come after options (`clone URL --name N DIR`).

        argparse settles a ``nargs="?"`` positional when it meets the one before it, so a value written
        after an option is left over as "unrecognized"; it goes to the first such positional still unset."""
        args, extras = self.parse_known_args(argv)
        if not extras:
            return args
        command = getattr(args, "command_parser", None)
        open_slots = [
            action
            for action in (command._actions if command is not None else [])
            if not action.option_strings and action.nargs == "?" and getattr(args, action.dest, None) == action.default
        ]
        if any(extra.startswith("-") for extra in extras) or len(extras) > len(open_slots):
            # The command's own usage: `remnic list --bogus` was rejected by `remnic list`.
            refusing = command if isinstance(command, Parser) else self
            refusing.error("unrecognized arguments: " + " ".join(extras) + _flag_suggestions(refusing, extras))
        for action, value in zip(open_slots, extras, strict=False):
            setattr(args, action.dest, value)
        return args


def _flag_suggestions(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """The command's closest flag for each unknown one (`--categroy` -> did you mean --category?), as
    `_with_suggestion` does for a mistyped command; "" when none is close."""
    import difflib

    flags = [s for action in parser._actions for s in action.option_strings if s.startswith("--")]
    close = []
    for extra in extras:
        name = extra.split("=", 1)[0]
        match = difflib.get_close_matches(name, flags, n=1) if name.startswith("--") else []
        if match and match[0] != name:
            close.append((name, match[0]))
    if not close:
        return ""
    if len(close) == 1:
        return f"; did you mean {close[0][1]}?"
    return "; did you mean " + ", ".join(f"{meant} (for {name})" for name, meant in close) + "?"


_INVALID_CHOICE = re.compile(r"invalid choice: '?(?P<value>[^']*?)'? \(choose from (?P<options>.*)\)$")


def _with_suggestion(message: str) -> str:
    """argparse's "invalid choice" with the closest valid one named first (`lst` -> did you mean 'list'?)."""
    import difflib

    match = _INVALID_CHOICE.search(message)
    if match is None:
        return message
    options = [o.strip().strip("'") for o in match["options"].split(",")]
    close = difflib.get_close_matches(match["value"], options, n=1)
    if not close:
        return message
    head = message[: match.start()]
    return f"{head}invalid choice: {match['value']!r}; did you mean {close[0]!r}? (choose from {match['options']})"


def common_parent() -> argparse.ArgumentParser:
    """Flags every command takes; SUPPRESS defaults so `remnic --json cmd` and `remnic cmd --json` both work."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print machine-readable JSON instead of text"
    )
    parent.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        default=argparse.SUPPRESS,
        help="no progress bars on standard error (they show only when it is a terminal)",
    )
    parent.add_argument(
        "--memory-dir",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the memory repository (default: $REMNIC_MEMORY_DIR, the nearest memory repo "
        "above the current directory, the active space, memoryDir from config, then ~/.remnic/memory)",
    )
    parent.add_argument(
        "--space",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help="the registered memory space NAME instead (`remnic space list`)",
    )
    return parent


def add_command(
    sub: Any, name: str, help_text: str, description: str | None = None, epilog: str | None = None, **kwargs: Any
) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        name,
        help=help_text,
        description=description or help_text,
        epilog=epilog,
        parents=[common_parent()],
        formatter_class=Formatter,
        **kwargs,
    )
    parser.set_defaults(command_parser=parser)  # the innermost command's, for naming its flags in errors
    return parser


# A service field whose CLI argument has another name.
_FIELD_ALIASES = {"content": "text", "text": "content", "reasonCode": "reason"}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _argument_names(parser: argparse.ArgumentParser | None) -> dict[str, str]:
    """The command's argument for each service field name (``confidence`` -> ``--confidence``,
    ``content`` -> ``TEXT``), so a validation error names what the user typed."""
    names: dict[str, str] = {}
    for action in getattr(parser, "_actions", ()):
        if action.dest in ("help", "json", "quiet", "memory_dir", "space"):
            continue
        if action.option_strings:
            shown = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
        else:
            shown = str(action.metavar or action.dest.upper())
        for key in (action.dest, _camel(action.dest)):
            names.setdefault(key, shown)
    for field, dest in _FIELD_ALIASES.items():
        if dest in names:
            names.setdefault(field, names[dest])
    return names


def describe_for_cli(exc: RemnicError, parser: argparse.ArgumentParser | None) -> str:
    """``exc.describe()`` with each problem's field named as the command's flag or argument."""
    names = _argument_names(parser)
    if not exc.problems or not any(_flag_of(p, names) for p in exc.problems):
        return exc.describe()
    problems = [replace(p, field=_flag_of(p, names) or p.field) for p in exc.problems]
    renamed = copy.copy(exc)
    renamed.problems = problems
    if len(exc.problems) == 1 and exc.problems[0].describe() == exc.message:
        renamed.message = problems[0].describe()
    return renamed.describe()


def error_dict_for_cli(exc: RemnicError, parser: argparse.ArgumentParser | None) -> dict[str, Any]:
    """``exc.to_dict()``; a detail whose field is one of the command's flags also says ``flag``."""
    names = _argument_names(parser)
    out = exc.to_dict()
    for problem, detail in zip(exc.problems, out.get("details", ()), strict=False):
        if flag := _flag_of(problem, names):
            detail["flag"] = flag
    return out


def _flag_of(problem: FieldProblem, names: dict[str, str]) -> str | None:
    """A problem with a file's field (an import line, a config key) is not about a flag."""
    return None if problem.path or problem.line else names.get(problem.field)


def wants_json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


_SHARED: ContextVar[Memory | None] = ContextVar("remnic_shared_memory", default=None)


@contextmanager
def shared_memory(memory: Memory) -> Iterator[None]:
    """Commands run by a server for the CLI (:mod:`.fastpath`) use its open, warm Memory."""
    token = _SHARED.set(memory)
    try:
        yield
    finally:
        _SHARED.reset(token)


def progress_bar(args: argparse.Namespace, label: str) -> ProgressBar:
    """A progress bar for a long step: on standard error when it is a terminal, unless --quiet or --json."""
    return ProgressBar(label, False if getattr(args, "quiet", False) or wants_json(args) else None)


def memory_dir_arg(args: argparse.Namespace) -> str | None:
    """The directory --memory-dir or --space names (None: resolve it as usual)."""
    name = getattr(args, "space", None)
    directory = getattr(args, "memory_dir", None)
    if name is None:
        return directory
    if directory is not None:
        raise UsageError("--space and --memory-dir both name a memory repository; give one of them")
    from remnic.config.spaces import space_dir

    return str(space_dir(name))


def settings_of(args: argparse.Namespace, **options: Any) -> Settings:
    """The settings for the repository --memory-dir or --space names, its origin said as typed."""
    settings = load_settings(memory_dir_arg(args), **options)
    if getattr(args, "space", None) is not None:
        settings.origins["memoryDir"] = f"--space {args.space}"
    return settings


def open_memory(args: argparse.Namespace, *, one_shot_write: bool = False) -> Memory:
    """The memory repository a command acts on. ``one_shot_write``: a command that writes and exits
    leaves the index to the next recall (``store.cliIndex``), so it never loads the model."""
    shared = _SHARED.get()
    if shared is not None:
        return shared  # the server checked that the memory directory and settings are the same
    from remnic.service.memory import Memory

    settings = settings_of(args)
    try:
        memory = Memory.open(settings=settings)
    except NotFoundError as exc:
        if getattr(args, "memory_dir", None) is None:
            raise
        # The directory was typed on this command line: a bad flag value, as an unknown --space is.
        raise UsageError(exc.message) from None
    if one_shot_write and not settings.store.cli_index:
        memory.defer_index()
    return memory


def repo_path(memory: Memory, target: str) -> str:
    """An ID-OR-PATH as typed, a path made repo-relative: ``./facts/x.md``, an absolute path inside the
    repository, or (from a folder inside it, as git takes paths) a path relative to the current folder
    when a file is there and not at the same path from the root. Anything else stays as it is, for
    the service to judge. On POSIX a backslash is a file-name character, but a path typed the Windows
    way (``facts\\x.md``) names ``facts/x.md`` when only that file is there."""
    found = _repo_path(memory, target)
    if os.sep == "/" and "\\" in target and not os.path.lexists(memory.root / found):
        slashed = _repo_path(memory, target.replace("\\", "/"))
        return slashed if os.path.lexists(memory.root / slashed) else found
    return found


def _repo_path(memory: Memory, target: str) -> str:
    rel = repo_relative(target, memory.root)
    if rel.startswith("/"):  # the repository reached through a symlink (/tmp → /private/tmp)
        inside = repo_relative(os.path.realpath(rel), os.path.realpath(memory.root))
        return rel if inside.startswith("/") else inside
    here = _cwd_in(memory)
    if not here or not rel or not memory.names_path(target):
        return rel
    from_here = posixpath.normpath(posixpath.join(here, to_posix(target)))
    if from_here.startswith("../") or os.path.lexists(memory.root / rel):
        return rel
    return from_here if os.path.lexists(memory.root / from_here) else rel


def _cwd_in(memory: Memory) -> str | None:
    """The current folder relative to the repository root, when it is a folder inside it."""
    try:
        here = os.path.relpath(os.path.realpath(os.getcwd()), os.path.realpath(memory.root))
    except (OSError, ValueError):
        return None
    return None if here == "." or here.startswith("..") else here.replace(os.sep, "/")


@contextmanager
def memory_ref(memory: Memory, typed: str) -> Iterator[str]:
    """An ID-OR-PATH as every command that names one memory takes it: the id, or the path resolved as
    :func:`repo_path` resolves it, and the service's "not found" made to say where a file of that
    name is. ``with memory_ref(memory, args.id) as target: memory.update(target, …)``."""
    target = repo_path(memory, typed)
    with path_hint(memory, target):
        yield target


@contextmanager
def path_hint(memory: Memory, target: str) -> Iterator[None]:
    """Adds to a path's "not found" or "not a memory file" error where a memory file of that name is:
    paths are taken from the repository root."""
    try:
        yield
    except (UsageError, NotFoundError) as exc:
        if not memory.names_path(target) or exc.problems:
            raise
        name = repo_relative(target, memory.root)
        near = sorted(r.path for r in memory.list() if r.path.endswith("/" + name))
        if not near:
            raise
        also = f" or {len(near) - 1} more" if len(near) > 1 else ""
        hint = f"paths are relative to the repository root (did you mean {near[0]}{also}?)"
        if not os.path.lexists(memory.root / name):
            # Nothing is at that path: the service's reason (not in a memory folder) would send the
            # user to store.include for a file that is a memory, one folder down.
            raise type(exc)(f"no memory file at {name}; {hint}") from None
        raise type(exc)(f"{exc.message}; {hint}") from None


def emit(args: argparse.Namespace, data: Any, text: str | Callable[[], str] | None = None) -> None:
    """Print ``data`` as JSON under --json, else the text rendering."""
    if wants_json(args):
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    rendered = text() if callable(text) else text
    if rendered is None:
        rendered = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if rendered:
        print(rendered.rstrip("\n"))


def emit_failure(args: argparse.Namespace, message: str, code: str, **extra: Any) -> None:
    """Under --json, the error of a command that exits non-zero on standard error as every error is,
    ``{error, code}`` (a result it still reports, such as doctor's checks, stays on standard output)."""
    if wants_json(args):
        error = {"error": message, "code": code, **extra}
        print(json.dumps(error, indent=2, ensure_ascii=False, default=str), file=sys.stderr)


def warnings_of(result: Any) -> dict[str, list[dict[str, str]]]:
    """``{"warnings": [{field, message}]}`` for a write that is done with a caveat, shaped as the server's
    (text mode has them on stderr already, from the log)."""
    warnings = [{"field": "gitIndex", "message": w} for w in getattr(result, "warnings", ()) or ()]
    return {"warnings": warnings} if warnings else {}


def not_utf8(exc: UnicodeDecodeError, where: str) -> str:
    """The message for text that is not UTF-8: the byte and its offset."""
    bad = exc.object[exc.start]
    return f"{where} is not UTF-8 text: byte 0x{bad:02X} at byte offset {exc.start} ({exc.reason}); send UTF-8 text"


def read_text_arg(value: str) -> str:
    """A TEXT argument, where '-' means standard input."""
    if value == "-":
        data = sys.stdin.read()
        if not data.strip():
            raise UsageError("no text on standard input (TEXT was '-')")
        return data
    return value


def positive_int(name: str, maximum: int = 2**31 - 1) -> Callable[[str], int]:
    """A whole number from 1 to ``maximum`` (a bound, so a huge one is an error, not an overflow deep down)."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {value!r}") from None
        if number <= 0:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {value!r}")
        if number > maximum:
            raise argparse.ArgumentTypeError(f"{name} must be at most {maximum}, got {value!r}")
        return number

    return parse


def non_negative_int(name: str) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be 0 or a positive integer, got {value!r}") from None
        if number < 0:
            raise argparse.ArgumentTypeError(f"{name} must be 0 or a positive integer, got {value!r}")
        return number

    return parse


def positive_float(name: str) -> Callable[[str], float]:
    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {value!r}") from None
        if not (number > 0 and math.isfinite(number)):
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {value!r}")
        return number

    return parse


def unit_float(name: str) -> Callable[[str], float]:
    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number from 0 to 1, got {value!r}") from None
        if not 0.0 <= number <= 1.0:
            raise argparse.ArgumentTypeError(f"{name} must be from 0 to 1, got {value!r}")
        return number

    return parse


def choice_list(name: str, options: Iterable[str]) -> Callable[[str], str]:
    """Like argparse choices, but the error lists the options in one line."""
    return Choices(name, tuple(options))


class ProgressBar:
    """A one-line progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, label: str, enabled: bool | None = None) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0
        self._start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        frac = done / total if total else 1.0
        bar = "#" * int(frac * width)
        rate = done / max(now - self._start, 1e-9)
        sys.stderr.write(f"\r{self.label} [{bar:<{width}}] {done}/{total} ({rate:.0f}/s)")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def table(rows: list[list[str]], headers: list[str]) -> str:
    # Padded by the columns a terminal draws (a CJK character takes two, a combining accent none), not by len().
    cells = [[str(c) for c in row] for row in [headers, *rows]]
    widths = [max(map(display_width, col)) for col in zip(*cells)]
    pad = [[c + " " * (w - display_width(c)) for c, w in zip(row, widths)] for row in cells]
    return "\n".join("  ".join(row).rstrip() for row in pad)


_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe(text: str) -> str:
    """Text for a terminal: control characters (ANSI/OSC escapes) and bidi overrides made visible,
    so a memory written by an agent can't recolour, retitle or reorder what a person reads."""
    return _UNSAFE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


# --- the recall filters `query` and `xray` share ---


def add_filter_args(p: argparse.ArgumentParser) -> None:
    """The options that choose which memories a recall may return: one definition for `query` and `xray`
    (read back by :func:`filter_options`)."""
    p.add_argument("--category", "-c", type=choice_list("category", CATEGORIES), help="search only this category")
    p.add_argument(
        "--status",
        "-s",
        action="append",
        type=choice_list("status", STATUSES),
        help="admit only these statuses (repeatable; default: active)",
    )
    p.add_argument(
        "--include-superseded",
        action="store_true",
        help="also return memories a newer one superseded, each ranked below its successor when both are "
        "returned (with --status: those statuses and superseded)",
    )
    p.add_argument(
        "--include-inactive",
        action="store_true",
        help="return every status: superseded, forgotten, rejected, … memories too, ranked below active ones "
        "(not with --status, which it would override)",
    )
    p.add_argument(
        "--tag",
        "-t",
        action="append",
        dest="tags",  # the service's field name: a refused tag is reported as --tag
        metavar="TAG",
        help="only memories tagged TAG (repeatable: any of them; with --tag-match all, all of them)",
    )
    p.add_argument(
        "--tag-match", choices=("any", "all"), help="several --tag: any (default) or all of them (needs --tag)"
    )
    p.add_argument(
        "--as-of",
        metavar="TIME",
        help="only memories valid at TIME (ISO 8601): begun by then, not invalidated or superseded by then",
    )


def filter_options(args: argparse.Namespace) -> dict[str, Any]:
    """The recall options :func:`add_filter_args` read, as the service takes them; flags that
    contradict each other are a usage error naming both."""
    if args.include_inactive and args.status:
        raise UsageError(
            "--include-inactive admits every status and --status only those named; give one of them "
            "(--status S ... --include-superseded adds superseded to S)"
        )
    if args.tag_match is not None and not args.tags:
        raise UsageError(f"--tag-match {args.tag_match} needs at least one --tag to match")
    return {
        "category": args.category,
        "include_inactive": args.include_inactive,
        "statuses": list(args.status or []) or None,
        "include_superseded": args.include_superseded,
        "tags": args.tags,
        "tag_match": args.tag_match or "any",
        "as_of": args.as_of,
    }
