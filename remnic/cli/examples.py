"""The ``examples:`` block of the commands whose module does not write one into its epilog: added when
the parser is built, so every ``remnic ... --help`` ends with commands to copy (tests check each has one)."""

from __future__ import annotations

import argparse

EXAMPLES: dict[str, tuple[str, ...]] = {
    "config migrate": ("remnic config migrate --dry-run", "remnic config migrate ~/.config/engram/config.json"),
    "audit show": ("remnic audit list --limit 5", "remnic audit show audit-20261121-5f6b1a2c9d8e"),
    "audit list": ("remnic audit list", "remnic audit list --limit 50 --json"),
    "reindex": ("remnic reindex", "remnic reindex --json"),
    "benchmark locomo": (
        "remnic benchmark locomo --data ~/data/locomo --limit-questions 50",
        "remnic benchmark locomo --track raw --k 10 --json",
    ),
    "benchmark scale": ("remnic benchmark scale", "remnic benchmark scale --sizes 1k,10k --queries 20"),
    "benchmark adopt": ("remnic benchmark adopt", "remnic benchmark adopt --notes 2000 --seed 7"),
    "consolidate": ("remnic consolidate", "remnic consolidate --days 30 --json"),
    "daemon": ("remnic daemon start", "remnic daemon status", "remnic daemon stop"),
    "daemon start": ("remnic daemon start", "remnic daemon start --port 4318"),
    "daemon restart": ("remnic daemon restart", "remnic daemon restart --host 127.0.0.1 --port 4318"),
    "daemon stop": ("remnic daemon stop",),
    "daemon status": ("remnic daemon status", "remnic daemon status --json   # exit 3: no server running"),
    "token": ("remnic token generate --principal alice", "remnic token list", "remnic token revoke alice"),
    "mcp": ("remnic mcp", "remnic mcp --principal alice --memory-dir ~/memories"),
    "hooks install": ("remnic hooks install", "remnic hooks install --force"),
    "hooks status": ("remnic hooks status", "remnic hooks status --json"),
    "hooks uninstall": ("remnic hooks uninstall",),
    "hooks agent-config": ("remnic hooks agent-config claude-code", "remnic hooks agent-config codex"),
    "hooks run": ("remnic hooks run pre-commit", "remnic hooks run --host claude-code session-start < payload.json"),
    "lcm status": ("remnic lcm status", "remnic lcm status --json"),
    "lcm flush": ("remnic lcm flush my-session", "remnic lcm flush my-session --namespace team"),
    "entities refresh": ("remnic entities refresh", "remnic entities refresh --force"),
    "connectors list": ("remnic connectors list", "remnic connectors list --json"),
    "connectors install": (
        "remnic connectors install claude-code",
        "remnic connectors install codex --config ~/.codex/hooks.json",
    ),
    "connectors remove": ("remnic connectors remove claude-code", "remnic connectors remove codex"),
    "connectors doctor": ("remnic connectors doctor codex", "remnic connectors doctor claude-code --no-fire"),
    "space list": ("remnic space list", "remnic space list --json"),
    "space switch": ("remnic space switch work",),
    "space delete": ("remnic space delete old-notes", "remnic space delete old-notes --purge"),
    "space share": (
        "remnic space share mem_018f9a3b2c1d4e5f6a7b --to team",
        "remnic space share mem_018f9a3b2c1d4e5f6a7b --to team --namespace shared",
    ),
    "space promote": (
        "remnic space promote mem_018f9a3b2c1d4e5f6a7b",
        "remnic space promote mem_018f9a3b2c1d4e5f6a7b --to team",
    ),
    "space audit": ("remnic space audit", "remnic space audit team --limit 20 --json"),
    "merge-file": ("remnic merge-file %O %A %B %P   # as git's merge driver runs it (remnic hooks install sets it)",),
}


def add_examples(parser: argparse.ArgumentParser, name: str = "") -> None:
    """Append the block from :data:`EXAMPLES` to each command under ``parser`` that has none."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for sub_name, sub in action.choices.items():
            path = f"{name} {sub_name}".strip()
            lines = EXAMPLES.get(path)
            if lines and "examples:" not in (sub.epilog or ""):
                block = "examples:\n" + "\n".join(f"  {line}" for line in lines)
                sub.epilog = f"{sub.epilog.rstrip()}\n\n{block}" if sub.epilog else block
            add_examples(sub, path)
