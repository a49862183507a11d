"""``remnic connectors list`` and ``connectors install|remove|doctor claude-code|codex``: remnic's hooks in a host's config."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import UsageError

from ._common import add_command, emit, emit_failure, open_memory, table

if TYPE_CHECKING:  # the drivers load when a connectors command runs, not when the parser is built
    from remnic.drivers import connectors as C

EPILOG = """\
install merges remnic's hooks into the host's own config — Claude Code:
~/.claude/settings.json ($CLAUDE_CONFIG_DIR), Codex: ~/.codex/hooks.json ($CODEX_HOME) —
leaving every other hook and key as it is: SessionStart injects the pinned memories
(rules, principles, key preferences) and what recall finds for the repository; Stop
hands the transcript's new turns to observe, PreCompact and SessionEnd (Codex since
0.171) also flush them into memories. Running it again changes
nothing; a changed file is first copied to <file>.remnic-backup-<time>. The hooks use
this Python and the memory repository the command finds: run it from yours, or
pass --memory-dir. remove takes only remnic's hooks out. doctor
checks the config and fires each hook with a sample payload; doctor --no-fire
checks the config, the trust and the files without firing any (the fire checks are
then listed as skipped, never as passed: run it without --no-fire once to know the
hooks run).

Codex runs a hook only once you trusted it, and again after install changed it: run
`codex`, then /hooks (doctor says which it would skip).

examples:
  remnic connectors install claude-code
  remnic connectors doctor codex
  remnic connectors doctor codex --no-fire
  remnic connectors list --json
"""


def register(sub: Any) -> None:
    p = add_command(
        sub, "connectors", "remnic's hooks in Claude Code's or Codex's config: install, remove, check", epilog=EPILOG
    )
    csub = p.add_subparsers(dest="connectors_command", metavar="<list|install|remove|doctor>", required=True)
    q = add_command(csub, "list", "each host: is remnic installed, where its config is")
    q.set_defaults(handler=cmd_list)
    for name, help_text, handler in (
        ("install", "merge remnic's hooks into the host's config (idempotent, with a backup)", cmd_install),
        ("remove", "take remnic's hooks out of the host's config (with a backup)", cmd_remove),
        ("doctor", "check the host's config and fire each of remnic's hooks once", cmd_doctor),
    ):
        q = add_command(csub, name, help_text)
        q.add_argument("host", help="claude-code or codex")
        q.add_argument("--config", type=Path, help="the host's config file (default: the host's own)")
        if name == "doctor":
            q.add_argument(
                "--no-fire",
                action="store_true",
                help="check the config, trust and files but fire no hook (the fire checks are reported as skipped)",
            )
        q.set_defaults(handler=handler)


def _path(args: argparse.Namespace, host: C.Host) -> Path:
    """The config file, absolute (not resolved: a symlinked config stays the link's path)."""
    path = args.config.expanduser() if getattr(args, "config", None) else host.config_path()
    return Path(os.path.abspath(path))


def cmd_list(args: argparse.Namespace) -> int:
    from remnic.drivers import connectors as C

    rows = [C.describe(h, h.config_path()) for h in C.HOSTS.values()]
    emit(
        args,
        {"connectors": rows},
        lambda: "\n".join(
            [
                table([[r["host"], r["state"], r["configPath"]] for r in rows], ["HOST", "STATE", "CONFIG"]),
                *(f"{r['host']}: {r['problem']}" for r in rows if r.get("problem")),
            ]
        ),
    )
    return 0


def _mcp_hint(host: C.Host, memory_dir: Path, config_path: Path) -> str:
    # -P: the host starts the server in the session's project folder, whose json.py must not be imported.
    command = [sys.executable, "-P", "-m", "remnic", "mcp", "--memory-dir", str(memory_dir)]
    if host.id == "claude-code":
        return "MCP tools too: claude mcp add remnic -- " + " ".join(shlex.quote(c) for c in command)
    args = ", ".join(json.dumps(c) for c in command[1:])  # a TOML basic string is a JSON string
    # Codex reads config.toml beside its hooks.json ($CODEX_HOME, or the --config file's folder).
    toml = config_path.parent / "config.toml"
    return f"MCP tools too, in {toml}:\n  [mcp_servers.remnic]\n  command = {json.dumps(command[0])}\n  args = [{args}]"


def cmd_install(args: argparse.Namespace) -> int:
    from remnic.drivers import connectors as C

    host = C.host(args.host)
    memory = open_memory(args)  # the hooks get a memory repository that exists
    path = _path(args, host)
    if args.config and not path.parent.is_dir():
        # As export's --out: a folder typed wrong would get hooks no host reads, so none is created.
        raise UsageError(
            f"--config {str(args.config)!r}: directory {path.parent} does not exist; create it first, or leave "
            f"out --config for {host.name}'s own config ({host.config_path()})"
        )
    result = C.install(host, path, memory_dir=memory.root)
    result["mcp"] = _mcp_hint(host, memory.root, path)

    def text() -> str:
        if result["status"] == "already_installed":
            head = f"{host.name}: remnic's hooks are already in {result['configPath']} (nothing changed)"
        else:
            head = f"{host.name}: {', '.join(result['changes'])} in {result['configPath']}"
            head += f" (backup: {result['backup']})" if result["backup"] else ""
        tail = _trust_hint(result) if host.id == "codex" else ""
        tail += "".join(f"\nwarning: {w}" for w in result["warnings"])
        return f"{head}\nmemory repository: {memory.root}\n{result['mcp']}{tail}\ncheck: remnic connectors doctor {host.id}"

    emit(args, result, text)
    return 0


def _trust_hint(result: dict[str, Any]) -> str:
    """Codex skips a hook nobody trusted, and one changed since, without a word: say which need it."""
    waiting = [event for event, status in result.get("codexTrust", {}).items() if status != "trusted"]
    if not waiting:
        return ""
    updated = any(change.endswith(": updated") for change in result["changes"])
    again = " (a hook changed by install must be trusted again)" if updated else ""
    return (
        f"\nCodex runs a hook only once you trust it: {', '.join(waiting)} are not trusted{again}. "
        "Run `codex`, then /hooks, and trust them."
    )


def cmd_remove(args: argparse.Namespace) -> int:
    from remnic.drivers import connectors as C

    host = C.host(args.host)
    result = C.remove(host, _path(args, host))
    emit(
        args,
        result,
        f"{host.name}: remnic's hooks removed from {result['configPath']} (backup: {result['backup']})"
        if result["status"] == "removed"
        else f"{host.name}: no remnic hooks in {result['configPath']}",
    )
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from remnic.drivers import connectors as C

    host = C.host(args.host)
    result = C.doctor(host, _path(args, host), cwd=os.getcwd(), fire_hooks=not args.no_fire)
    emit(
        args,
        result,
        lambda: (
            "\n".join(f"{_MARKS[c['status']]} {c['name']}: {c['detail']}" for c in result["checks"])
            + "".join(f"\nSKIP {name}: not fired (--no-fire)" for name in result["skipped"])
            + (_healthy(result, host) if result["healthy"] else _unhealthy(result, host))
        ),
    )
    if not result["healthy"]:
        failed = [c["name"] for c in result["checks"] if c["status"] == "fail"]
        emit_failure(args, f"{host.id} is not healthy: {', '.join(failed) or 'see checks'}", "check_failed")
    return 0 if result["healthy"] else 1


_MARKS = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


def _healthy(result: dict[str, Any], host: C.Host) -> str:
    """The closing line when nothing failed: a warning is something remnic could not verify, and a
    hook not fired (--no-fire) is not known to run."""
    unverified = [*result["warnings"], *(["whether the hooks run (not fired)"] if result["skipped"] else [])]
    if not unverified:
        return "\nhealthy"
    line = f"\nno check failed, but remnic could not verify {', '.join(unverified)}"
    if result["warnings"]:
        line += ": see WARN above"
    if result["skipped"]:
        line += f"; run `remnic connectors doctor {host.id}` to fire each hook once"
    return line


def _unhealthy(result: dict[str, Any], host: C.Host) -> str:
    """The closing line of a failed doctor: an install is the cure only when a handler is missing."""
    missing = any(not c["ok"] and c["name"].endswith(" hook") for c in result["checks"])
    if missing:
        return f"\nnot healthy: run `remnic connectors install {host.id}`?"
    if any(not c["ok"] and c["name"].endswith(" trusted by Codex") for c in result["checks"]):
        return "\nnot healthy: Codex runs none of the hooks it has not trusted; run `codex`, then /hooks"
    return "\nnot healthy: see FAIL above"
