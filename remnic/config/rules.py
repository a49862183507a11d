"""Rules of single settings that their type and range do not cover: namespace names and policies, memory-file
extensions, the server's bind address, names that must not be empty.

Each returns the problems it finds (none when the value is fine), so the loader reports every one at once and
``remnic config``, ``remnic doctor``, ``serve`` and ``mcp`` refuse the same values with the same words.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from remnic.errors import FieldProblem

from .settings import did_you_mean, json_text

NAMESPACE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
"""A namespace name. The same rule as ``remnic.memfile.schema.NAMESPACE_RE``: config sits below memfile, so it
keeps its own copy (a test checks that the two agree)."""
NAMESPACE_RULE = "lowercase letters, digits, '-' and '_', up to 64; no '/' or '..'"
POLICY_KEYS = ("readPrincipals", "writePrincipals")
Policies = dict[str, dict[str, frozenset[str]]]

_HOST_NAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$")
_NOT_EMPTY = {
    "spaces.remote": "must name a git remote (the default is origin)",
    "namespaces.default": f"must name a namespace ({NAMESPACE_RULE})",
}


def namespace_policies(raw: Any, path: str | None = None) -> tuple[Policies, list[FieldProblem]]:
    """``namespaces.policies`` parsed (namespace → key → principals), and each problem with it, named by its
    dotted key in the file at ``path``. The server's policy (``remnic.server.auth``) parses it here too."""
    problems: list[FieldProblem] = []
    out: Policies = {}
    if not isinstance(raw, Mapping):
        problems.append(FieldProblem("namespaces.policies", f"expected an object, got {json_text(raw)}", path=path))
        return out, problems
    for name, policy in raw.items():
        where = f"namespaces.policies.{name}"
        if not NAMESPACE_RE.match(str(name)):
            problems.append(FieldProblem(where, f"is not a valid namespace name ({NAMESPACE_RULE})", path=path))
            continue
        if not isinstance(policy, Mapping):
            message = f"must be an object with readPrincipals and writePrincipals, got {json_text(policy)}"
            problems.append(FieldProblem(where, message, path=path))
            continue
        parsed: dict[str, frozenset[str]] = {}
        for key, value in policy.items():
            if key not in POLICY_KEYS:
                message = "unknown key" + did_you_mean(str(key), POLICY_KEYS)
                problems.append(FieldProblem(f"{where}.{key}", message, path=path, options=POLICY_KEYS))
            elif not isinstance(value, list) or not all(isinstance(p, str) for p in value):
                message = f'must be a list of principal names (["alice", "*"]), got {json_text(value)}'
                problems.append(FieldProblem(f"{where}.{key}", message, path=path))
            else:
                parsed[key] = frozenset(value)
        out[str(name)] = parsed
    return out, problems


def value_problems(dotted: str, value: Any, path: str) -> list[FieldProblem]:
    """What is wrong with ``value`` (already of the setting's type) beyond its type and range."""
    if value is None:
        return []
    if dotted in _NOT_EMPTY and isinstance(value, str) and not value.strip():
        return [FieldProblem(dotted, _NOT_EMPTY[dotted] + ", got an empty string", path=path)]
    if dotted == "namespaces.default" and not NAMESPACE_RE.match(value):
        return [FieldProblem(dotted, f"{json_text(value)} is not a valid namespace ({NAMESPACE_RULE})", path=path)]
    if dotted == "namespaces.policies":
        return namespace_policies(value, path)[1]
    if dotted == "store.extensions":
        return _extension_problems(value, path)
    if dotted == "server.host" and not _is_host(value):
        # "" would bind every interface (the socket module reads it as INADDR_ANY): never by accident.
        message = f"{json_text(value)} is not an IP address or host name (e.g. 127.0.0.1, ::1, localhost)"
        return [FieldProblem(dotted, message, path=path)]
    return []


def _extension_problems(value: list[str], path: str) -> list[FieldProblem]:
    if not value:
        # Refused rather than read as the defaults: an empty list looks like "no memory files at all".
        message = 'must name at least one extension, e.g. [".md", ".markdown"] (leave it out for those defaults)'
        return [FieldProblem("store.extensions", message, path=path)]
    problems = []
    for i, ext in enumerate(value):
        field = f"store.extensions[{i}]"
        if not ext.startswith(".") or len(ext) < 2 or "/" in ext or ext.strip() != ext:
            # Matched by the end of a file's name: "md" would take "notes.cmd" too, so it is refused, not guessed.
            bare = ext.strip().lstrip(".")
            hint = f'did you mean ".{bare}"?' if bare and "/" not in bare else 'one is a dot and a name, as in ".md"'
            message = f"{json_text(ext)} is not a file extension; {hint}"
            problems.append(FieldProblem(field, message, path=path))
    return problems


def _is_host(value: str) -> bool:
    try:
        ipaddress.ip_address(value.strip("[]").split("%")[0])
        return True
    except ValueError:
        return bool(_HOST_NAME.match(value))
