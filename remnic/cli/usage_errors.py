"""A usage error (argparse's) as the documented JSON error object: ``{error, code, details}``.

Under ``--json`` every error has one shape, so a script reads ``details[0].field`` whether a flag's
value was refused by the parser or a field by the service. argparse says only a message; the action
it names ("argument --category/-c: …") gives the field, and its choices the valid options.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

_ARGUMENT = re.compile(r"^argument (?P<names>[^:]+?): (?P<message>.*)$", re.DOTALL)
_REQUIRED = "the following arguments are required: "
_UNRECOGNIZED = "unrecognized arguments: "


class Choices:
    """A ``type=`` for a flag with a fixed set of values: the error lists them in one line, and a JSON
    usage error lists them as ``options``."""

    def __init__(self, name: str, options: tuple[str, ...]) -> None:
        self.name = name
        self.options = options
        self.__name__ = name  # argparse names a type by it

    def __call__(self, value: str) -> str:
        if value not in self.options:
            raise argparse.ArgumentTypeError(f"unknown {self.name} {value!r}; valid options: {', '.join(self.options)}")
        return value


def error_object(parser: argparse.ArgumentParser, message: str) -> dict[str, Any]:
    """``{"error", "code": "usage_error", "details": [{"field", "message", "options"?}]}`` for argparse's
    ``message`` from ``parser`` (the command that refused the line)."""
    details: list[dict[str, Any]]
    if message.startswith(_REQUIRED):
        names = message[len(_REQUIRED) :].split(", ")
        details = [_detail(_action(parser, n), n, "required") for n in names]
    elif message.startswith(_UNRECOGNIZED):
        words, _, hint = message[len(_UNRECOGNIZED) :].partition("; ")
        hint = f"; {hint}" if hint else ""
        flags = [w for w in words.split() if w.startswith("-")] or words.split()  # `--limt 3`: the 3 is its value
        details = [{"field": w.split("=", 1)[0], "message": f"unrecognized argument{hint}"} for w in flags]
    elif match := _ARGUMENT.match(message):
        action = _action(parser, match["names"])
        details = [_detail(action, match["names"], match["message"])]
        field, said = details[0]["field"], match["message"]
        message = said if said.startswith(field) else f"{field}: {said}"
    else:  # a message of our own (a command is required, …): the whole line
        details = [{"field": "command", "message": message}]
    return {"error": message, "code": "usage_error", "details": details}


def _action(parser: argparse.ArgumentParser, names: str) -> argparse.Action | None:
    """The action argparse names as ``names`` ("--category/-c", a metavar, a dest)."""
    for action in parser._actions:  # argparse offers no public way to look an action up
        shown = "/".join(action.option_strings) or (action.metavar if isinstance(action.metavar, str) else action.dest)
        if names in (shown, action.dest):
            return action
    return None


def _detail(action: argparse.Action | None, names: str, message: str) -> dict[str, Any]:
    field = names
    if action is not None and action.option_strings:
        field = next((s for s in action.option_strings if s.startswith("--")), action.option_strings[0])
    elif isinstance(action, argparse._SubParsersAction):  # its metavar is the list of its commands
        field = "command"
    out: dict[str, Any] = {"field": field, "message": message}
    options = _options(action)
    if options:
        out["options"] = options
    return out


def _options(action: argparse.Action | None) -> list[str]:
    if action is None:
        return []
    if isinstance(action.type, Choices):
        return list(action.type.options)
    if action.choices is not None:
        return [str(c) for c in action.choices]
    return []
