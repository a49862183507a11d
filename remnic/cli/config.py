"""`remnic config [--defaults] | migrate [FILE]`: the resolved settings, and the original's files rewritten."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from remnic.config import (
    describe_settings,
    migrated,
    read_config_file,
    read_config_files,
    translate,
)
from remnic.errors import UsageError
from remnic.fsio import write_atomic

from ._common import add_command, emit, plural, settings_of


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "config",
        "show the resolved configuration and where each value came from",
        epilog="The config files read are listed first, lowest precedence first (--json: configFiles).\n"
        "Each value is shown with the file that set it; a value set by one of the original\n"
        "Remnic's flat keys (recallBudgetChars, namespacesEnabled, ...) names that key, and\n"
        "the original's keys remnic does not read are listed as warnings.\n\n"
        "examples:\n  remnic config\n  remnic config --defaults\n  remnic config migrate ~/.config/remnic/config.json",
    )
    p.add_argument(
        "--defaults",
        action="store_true",
        help="list every setting with its default and meaning, marking those that are user only",
    )
    p.set_defaults(handler=cmd_config)
    csub = p.add_subparsers(dest="config_command", metavar="<migrate>")
    q = add_command(
        csub,
        "migrate",
        "rewrite a config file in remnic's nested form (the original's flat keys as sections)",
        epilog='Writes FILE in the nested form remnic documents ({"recall": {"budgetChars": ...}}),\n'
        'keeping the original Remnic\'s keys remnic does not read under "_remnicOriginal" (ignored\n'
        "on load) with what an earlier migration kept there, and comment keys (_about, $schema) as\n"
        "they are, after copying FILE to FILE.bak (FILE.bak.1, ... if taken). A migrated file is\n"
        "left as it is. Without FILE, every config file in use that has the original's spellings\n"
        "is migrated.",
    )
    q.add_argument("file", nargs="?", metavar="FILE", help="the config file (default: those in use that need it)")
    q.add_argument("--dry-run", action="store_true", help="print the migrated file; write nothing")
    q.set_defaults(handler=cmd_migrate)


def cmd_config(args: argparse.Namespace) -> int:
    if args.defaults:
        rows = describe_settings()
        emit(
            args,
            rows,
            lambda: "\n".join(
                f"{r['key']} = {json.dumps(r['default'])}{'    (user only)' if r['userOnly'] else ''}\n    {r['doc']}"
                for r in rows
            ),
        )
        return 0
    settings = settings_of(args)
    values = settings.to_dict()
    flat: list[dict[str, Any]] = [
        {"key": "memoryDir", "value": values["memoryDir"], "origin": settings.origins.get("memoryDir", "default")}
    ]
    for section, entries in values.items():
        if isinstance(entries, dict):
            for key, value in entries.items():
                dotted = f"{section}.{key}"
                flat.append({"key": dotted, "value": value, "origin": settings.origins.get(dotted, "default")})

    def text() -> str:
        # Warnings go to stderr, so the listing on stdout stays what scripts and `grep` read.
        for warning in settings.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        # Which files were read, so a value's origin can be told from a file that set nothing (or was not found).
        read = [f"  {label}" for label in settings.config_files] or ["  none (defaults only)"]
        values = [f"{r['key']} = {json.dumps(r['value'], default=str)}    ({r['origin']})" for r in flat]
        stale = daemon.stale_text(server) if server else ""
        return "\n".join(
            ["config files read (lowest precedence first):", *read, "", *values, *(["", stale] if stale else [])]
        )

    from remnic.server import daemon

    # A server running for this directory with older values of settings only a restart applies.
    server = daemon.config_state(settings)
    out: dict[str, Any] = {
        "settings": values,
        "origins": {r["key"]: r["origin"] for r in flat},
        "configFiles": settings.config_files,
        "warnings": settings.warnings,
    }
    if server is not None:
        out["server"] = server
    emit(args, out, text)
    return 0


def _backup_path(path: Path) -> Path:
    candidate = path.with_name(path.name + ".bak")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak.{n}")
        n += 1
    return candidate


def _targets(args: argparse.Namespace) -> list[Path]:
    if args.file:
        path = Path(args.file).expanduser()
        if not path.is_file():
            raise UsageError(f"no config file at {args.file}")
        return [path]
    settings = settings_of(args)
    files = read_config_files(Path.cwd(), os.environ)
    paths = [f.path for f in files if f.translated.uses_original_spellings]
    repo_cfg = settings.memory_dir / "remnic.config.json"
    if (
        repo_cfg.is_file()
        and repo_cfg.resolve() not in {f.path for f in files}
        and translate(read_config_file(repo_cfg), str(repo_cfg)).uses_original_spellings
    ):
        paths.append(repo_cfg.resolve())
    return paths


def cmd_migrate(args: argparse.Namespace) -> int:
    results = []
    for path in _targets(args):
        data = read_config_file(path)
        migration = migrated(data, str(path))
        nested = migration.nested
        entry: dict[str, Any] = {
            "file": str(path),
            "changed": nested != data,
            "renamed": migration.translated.names,
            "notRead": migration.not_read,
            "kept": migration.kept,
            "migrated": nested,
        }
        if nested != data and not args.dry_run:
            backup = _backup_path(path)
            # The backup holds what the file held (a plaintext authToken, say): no wider access than it had.
            write_atomic(backup, path.read_bytes(), mode=path.stat().st_mode & 0o777)
            write_atomic(path, json.dumps(nested, indent=2, ensure_ascii=False) + "\n")
            entry["backup"] = str(backup)
        results.append(entry)

    def text() -> str:
        if not results:
            return "no config file in use has the original Remnic's spellings; nothing to migrate"
        lines = []
        for r in results:
            if not r["changed"]:
                lines.append(f"{r['file']}: already in remnic's nested form")
                continue
            if args.dry_run:
                lines.append(f"{r['file']} would become (--dry-run):")
                lines.append(json.dumps(r["migrated"], indent=2, ensure_ascii=False))
            else:
                lines.append(f"migrated {r['file']} (backup: {r['backup']})")
            for dotted, name in sorted(r["renamed"].items()):
                lines.append(f"  {name} -> {dotted}")
            if r["kept"]:
                lines.append(
                    f"  {plural(len(r['kept']), 'key')} of the original setting nothing here kept under "
                    f"_remnicOriginal: " + ", ".join(r["kept"])
                )
            if r["notRead"]:
                lines.append(
                    f"  {plural(len(r['notRead']), 'key')} remnic does not read kept under _remnicOriginal: "
                    + ", ".join(r["notRead"])
                )
        return "\n".join(lines)

    emit(args, {"files": results, "dryRun": args.dry_run}, text)
    return 0
