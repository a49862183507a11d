"""`remnic space list|create|switch|delete|clone|push|pull|share|promote|audit`, and `remnic merge-file`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config.spaces import KINDS
from remnic.errors import FieldProblem, UsageError
from remnic.service import spaces as S

from ._common import (
    add_command,
    choice_list,
    emit,
    memory_dir_arg,
    open_memory,
    plural,
    positive_int,
    safe,
    table,
    wants_json,
)

EPILOG = """\
A space is a memory repository registered under a name in your own spaces registry
($REMNIC_SPACES_PATH, else $XDG_CONFIG_HOME/remnic/spaces.json, else
~/.config/remnic/spaces.json). Push and pull go through the repository's git remote
with git's own credentials. See docs/spaces.md.

examples:
  remnic space create team --path ~/memory/team --kind team --remote git@host:acme/memory.git
  remnic space clone git@host:acme/memory.git --name team
  remnic space pull team; remnic space push team
  remnic space share mem_01a2006f25062f452162 --to team
  remnic query "release day" --space team
"""

if TYPE_CHECKING:
    from remnic.service.memory import Memory


def register(sub: Any) -> None:
    p = add_command(sub, "space", "personal, project and team memory spaces shared through git remotes", epilog=EPILOG)
    ssub = p.add_subparsers(
        dest="space_command",
        metavar="<list|create|switch|delete|clone|push|pull|share|promote|audit>",
        required=True,
    )

    q = add_command(ssub, "list", "the registered spaces, which one is active, and where they live")
    q.set_defaults(handler=cmd_list)

    q = add_command(
        ssub,
        "create",
        "register a space: a new memory repository, or an existing one at --path",
        epilog="examples:\n  remnic space create work --remote git@github.com:me/work-memory.git --switch\n"
        "  remnic space create notes --path ~/notes --kind project   # a memory repository already there",
    )
    q.add_argument("name", metavar="NAME", help="the space's name (lower-case letters, digits, '-', '_')")
    q.add_argument("--path", metavar="DIR", help="where it lives (default: ~/.remnic/spaces/NAME)")
    q.add_argument(
        "--kind", type=choice_list("kind", KINDS), default="personal", help=" | ".join(KINDS) + " (default: personal)"
    )
    q.add_argument("--remote", metavar="URL", help="the git remote to push to and pull from (becomes origin)")
    q.add_argument(
        "--read-only",
        action="store_true",
        help="recall searches it alongside the active space; remnic's writes and push refuse it",
    )
    q.add_argument("--switch", action="store_true", help="make it the active space too")
    q.set_defaults(handler=cmd_create)

    q = add_command(ssub, "switch", "make a space the active one (the memory repository commands use)")
    q.add_argument("name", metavar="NAME", help="the space's name")
    q.set_defaults(handler=cmd_switch)

    q = add_command(ssub, "delete", "forget a space; its files stay unless --purge (and it says what it would remove)")
    q.add_argument("name", metavar="NAME", help="the space's name")
    q.add_argument(
        "--purge",
        action="store_true",
        help="also remove its directory and every file in it; refused (exit 2) while it holds files never "
        "committed, uncommitted changes, stashes or commits no remote has",
    )
    q.add_argument(
        "--force",
        action="store_true",
        help="with --purge: remove it even so, destroying what git has nowhere else",
    )
    q.set_defaults(handler=cmd_delete)

    q = add_command(
        ssub,
        "clone",
        "clone a space from a git URL, install the merge driver, index and register it",
        epilog="examples:\n  remnic space clone git@github.com:acme/team-memory.git --name team\n"
        "  remnic space clone ~/shared/memory.git ~/memories/shared --read-only",
    )
    q.add_argument("url", metavar="URL", help="any URL git accepts (a path, file://, ssh, https)")
    q.add_argument("dir", metavar="DIR", nargs="?", help="where to clone it (default: ~/.remnic/spaces/NAME)")
    q.add_argument("--name", help="the space's name (default: from the URL)")
    q.add_argument(
        "--kind", type=choice_list("kind", KINDS), default="team", help=" | ".join(KINDS) + " (default: team)"
    )
    q.add_argument(
        "--read-only",
        action="store_true",
        help="recalled alongside the active space; remnic's writes and push refuse it",
    )
    q.set_defaults(handler=cmd_clone)

    for verb, help_text in (
        ("pull", "fetch and merge the remote (memory files merged key by key), then index what changed"),
        ("push", "commit hand edits and push; refused with a clear message when the remote moved"),
    ):
        examples = f"examples:\n  remnic space {verb}   # the current memory repository\n  remnic space {verb} team"
        q = add_command(ssub, verb, help_text, epilog=examples + (" --remote backup" if verb == "push" else ""))
        q.add_argument("name", metavar="NAME", nargs="?", help="the space (default: the current memory repository)")
        q.add_argument("--remote", metavar="REMOTE", help="the git remote (default: the branch's, else origin)")
        if verb == "pull":
            q.add_argument(
                "--allow-unrelated",
                action="store_true",
                help="merge a remote branch that shares no history with this space (refused otherwise: it is "
                "usually another repository)",
            )
        q.set_defaults(handler=cmd_pull if verb == "pull" else cmd_push)

    for verb, help_text in (
        ("share", "copy a memory into another space: new id, provenance pointing back, one commit there"),
        ("promote", "promote a memory to a team space (--to) or to a shared namespace of this one"),
    ):
        q = add_command(ssub, verb, help_text)
        q.add_argument("id", metavar="ID", help="the memory id (mem_…)")
        q.add_argument(
            "--to",
            metavar="SPACE",
            required=verb == "share",
            help="the target space" + ("" if verb == "share" else " (default: this repository)"),
        )
        q.add_argument(
            "--namespace",
            "-n",
            metavar="NS",
            help="the target namespace (default: the memory's own"
            + ("" if verb == "share" else "; without --to: shared")
            + ")",
        )
        q.set_defaults(handler=cmd_share if verb == "share" else cmd_promote)

    q = add_command(ssub, "audit", "what arrived from whom: commits since a revision, with author and trailers")
    q.add_argument("name", metavar="NAME", nargs="?", help="the space (default: the current memory repository)")
    q.add_argument("--since", metavar="REV", help="only commits after this revision (a sha, a tag, ORIG_HEAD)")
    q.add_argument("--limit", type=positive_int("--limit"), default=200, help="at most this many (default 200)")
    q.set_defaults(handler=cmd_audit)

    m = add_command(
        sub,
        "merge-file",
        "git's merge driver for memory files (what `git merge` runs; see docs/spaces.md)",
        epilog="Registered by `remnic init`, `remnic hooks install` and `remnic space create|clone`:\n"
        '  [merge "remnic"] driver = <python> -P -m remnic merge-file %O %A %B %P\n'
        "Writes the merge into OURS; exit 0 when resolved. A true body conflict keeps both\n"
        "versions as two linked memories waiting for review, never conflict markers.",
    )
    m.add_argument("base", metavar="BASE", help="the common version (%%O)")
    m.add_argument("ours", metavar="OURS", help="this side's version, overwritten with the result (%%A)")
    m.add_argument("theirs", metavar="THEIRS", help="the other side's version (%%B)")
    m.add_argument("path", metavar="PATH", help="the file's path in the repository (%%P)")
    m.set_defaults(handler=cmd_merge_file)


def _space_memory(args: argparse.Namespace) -> Memory:
    if getattr(args, "name", None):
        if getattr(args, "space", None) or getattr(args, "memory_dir", None):
            raise UsageError("name the space once: NAME, or --space/--memory-dir")
        args.space = args.name
    return open_memory(args)


def cmd_list(args: argparse.Namespace) -> int:
    data = S.list_spaces()

    def text() -> str:
        if not data["spaces"]:
            return f"no spaces registered ({data['registry']}); `remnic space create NAME` makes one"
        rows = [
            [
                ("* " if r["active"] else "  ") + r["name"],
                r["kind"] + (" (read-only)" if r["readOnly"] else ""),
                r["path"] + ("" if r["exists"] else "  (missing)"),
                r["remote"] or "-",
            ]
            for r in data["spaces"]
        ]
        return table(rows, ["SPACE", "KIND", "PATH", "REMOTE"])

    emit(args, data, text)
    return 0


def cmd_create(args: argparse.Namespace) -> int:
    data = S.create_space(
        args.name, args.path, kind=args.kind, remote=args.remote, read_only=args.read_only, activate=args.switch
    )
    verb = "created" if data["created"] else "registered the existing memory repository"
    if not wants_json(args):  # --json carries the warnings and existingFiles instead
        found = data["existingFiles"]
        for warning in data.get("warnings", []):
            listed = ", ".join(safe(p) for p in found["paths"])
            more = " …" if found["count"] > len(found["paths"]) or found["more"] else ""
            print(f"remnic: warning: {warning['message']} (found: {listed}{more})", file=sys.stderr)
    emit(args, data, f"{verb} space {data['name']} at {data['path']}" + (" (now active)" if args.switch else ""))
    return 0


def cmd_switch(args: argparse.Namespace) -> int:
    S.require_space(args.name)
    data = S.switch_space(args.name)
    emit(args, data, f"active space: {data['active']} ({data['path']})")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    if args.force and not args.purge:
        raise UsageError("--force only applies with --purge (without it, no file is removed)")
    S.require_space(args.name)  # an unknown name is an input error (exit 2), as for switch and --space
    data = S.delete_space(args.name, purge=args.purge, force=args.force)
    where = f"{data['path']} ({plural(data['files'], 'file')})"
    text = (
        f"deleted space {data['name']} and removed {where}"
        if data["purged"]
        else f"forgot space {data['name']}; its files are left at {where} (`--purge` would remove them)"
    )
    emit(args, data, text)
    return 0


def cmd_clone(args: argparse.Namespace) -> int:
    from remnic.config import load_settings

    timeout = load_settings().spaces.network_timeout_s
    data = S.clone_space(
        args.url, args.dir, name=args.name, kind=args.kind, read_only=args.read_only, timeout_s=timeout
    )
    emit(
        args,
        data,
        f"cloned space {data['name']} into {data['path']} ({plural(data['indexed'], 'memory', 'memories')} indexed)",
    )
    return 0


def cmd_pull(args: argparse.Namespace) -> int:
    with _space_memory(args) as memory:
        report = memory.space_pull(args.remote, allow_unrelated=args.allow_unrelated)
    data = report.to_dict()

    def text() -> str:
        # Which repository: the nearest one above the working directory wins over the active space.
        where = f"space {report.space} at {report.root}" if report.space else report.root
        lines = [
            f"pulled {report.tracking or f'{report.remote}/{report.branch}'}: {report.outcome} (into {safe(where)})"
        ]
        if report.outcome == "no-branch":
            lines = [_no_branch(report, memory.root)]
        if report.history_rewritten:
            lines.append(_rewritten(report.history_rewritten))
        if report.adopted:
            lines.append(
                f"this clone held only its `remnic init` commit ({report.adopted[:8]}), so it took the history "
                f"of {report.tracking} instead of merging an unrelated one"
            )
        if report.finished_previous:
            lines.append(f"a merge an interrupted pull left was {report.finished_previous}")
        if report.edits_commit:
            lines.append(f"hand edits committed first in {report.edits_commit[:8]}")
        if report.changed:
            lines.append(f"{plural(len(report.changed), 'memory file')} changed; index updated ({report.indexed})")
        for r in report.resolved:
            lines.append(f"  resolved {safe(r['path'])}: {r['how']}")
        reviewed = [c for c in report.conflicts if c.get("inReview", True)]
        if reviewed:
            lines.append(
                f"{plural(len(reviewed), 'conflict')} kept as two memories each, waiting for review "
                "(`remnic review list`):"
            )
            lines += [f"  {safe(c['path'])} <-> {safe(c['copyPath'])}" for c in reviewed]
        for c in report.malformed_conflicts:
            bad = " and ".join(safe(c["path"] if side == "ours" else c["copyPath"]) for side in c["malformed"])
            lines.append(
                f"  {safe(c['path'])} was changed on both sides and {bad} is malformed, so both were kept exactly "
                f"as they are, side by side (this side's at {safe(c['path'])}, the other's at {safe(c['copyPath'])}"
                "; one id in both, not linked): fix the frontmatter (`remnic doctor`), then keep one"
            )
        for d in report.review_disputes:
            lines.append(
                f"  {safe(d['path'])}: approved on one side and dismissed on the other, so it is back in review "
                "(`remnic review list`)"
            )
        for entry in report.saved:
            lines.append(f"  {safe(entry['path'])}: {entry['how']}")
        for fork in report.supersession_forks:
            lines.append(f"  {safe(fork['message'])}")
        if report.vectors_behind:
            lines.append(f"the vectors of the hand edits committed first wait ({safe(report.vectors_behind)})")
        if report.index_behind:
            lines.append(f"the index could not follow ({safe(report.index_behind)}): the next recall catches up")
        if report.problems:
            lines.append(
                f"{plural(len(report.problems), 'problem')} in memory files (they are left out of recall until "
                "fixed; `remnic doctor` lists them):"
            )
            lines += [f"  {safe(FieldProblem(**p).describe())}" for p in report.problems]
        settled = [c for c in report.conflicts if not c.get("inReview", True)]
        if settled:
            # The merge gave them a status ranked before review (forgotten …): the queue does not hold them.
            lines.append(
                f"{plural(len(settled), 'conflict')} kept as two linked memories each, not in the review queue "
                "(`remnic list --status STATUS` shows them):"
            )
            lines += [
                f"  {safe(c['path'])} <-> {safe(c['copyPath'])} (status: {c.get('status') or 'unknown'})"
                for c in settled
            ]
        if report.duplicates:
            lines.append(
                f"{plural(len(report.duplicates), 'memory', 'memories')} stored on both sides: "
                "the other side's id kept as superseded"
            )
        return "\n".join(lines)

    emit(args, data, text)
    return 0


def _rewritten(found: dict[str, Any]) -> str:
    """The remote's branch no longer holds what the last fetch saw there (a force push): what that means."""
    kept = found["kept"]
    back = (
        f"; {kept} of them are in this clone's history, so the merge keeps them and the next `remnic space push` "
        "puts them back on the remote (if they were removed on purpose, ask who rewrote it before pushing)"
        if kept
        else ""
    )
    return (
        f"{found['tracking']} was rewritten since the last fetch (a force push): it was {found['was'][:8]}, now "
        f"{found['now'][:8]}, and {plural(found['dropped'], 'commit')} it had are no longer on it{back}"
    )


def _no_branch(report: Any, root: Path) -> str:
    """The remote has branches, but not this one: pushing would start a second, separate history there, so
    the advice is to take the remote's branch."""
    theirs = report.remote_branches
    pick = theirs[0] if len(theirs) == 1 else "BRANCH"
    return (
        f"{report.remote} has no branch {report.branch}, so nothing was pulled (it has: {', '.join(theirs)}). "
        f"Pushing would start a second branch there that the others never pull; to share {report.remote}'s "
        f"history instead, rename this branch to {'it' if pick != 'BRANCH' else 'one of them'}: "
        f"`git -C {root} branch -m {report.branch} {pick}`, then `remnic space pull`"
    )


def cmd_push(args: argparse.Namespace) -> int:
    with _space_memory(args) as memory:
        data = memory.space_push(args.remote)
    if not wants_json(args):  # --json carries them in warnings
        for warning in data.get("warnings", []):
            print(f"remnic: warning: {safe(warning['message'])}", file=sys.stderr)
    text = (
        f"pushed {data['branch']} to {data['remote']} ({(data['head'] or '')[:8]})"
        + (", upstream set" if data["upstreamSet"] else "")
        if data["pushed"]
        else f"{data['remote']}/{data['branch']} is up to date"
    )
    emit(args, data, text)
    return 0


def _written(args: argparse.Namespace, result: Any, verb: str) -> int:
    record = result.record
    data = {**result.to_dict(), "id": record.id, "path": record.path, "namespace": record.namespace}
    data["sourceMemoryId"] = record.frontmatter.get("sourceMemoryId")
    data["sourceSpace"] = record.frontmatter.get("sourceSpace")
    text = (
        f"{verb} as {record.id} ({record.path}) in commit {(result.commit or '')[:8]}"
        if result.changed
        else f"already there as {record.id} ({record.path}); nothing written"
    )
    emit(args, data, text)
    return 0


def cmd_share(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        result = memory.share(args.id, args.to, namespace=args.namespace, source="cli")
        return _written(args, result, f"shared to {args.to}")


def cmd_promote(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        result = memory.promote(args.id, to_space=args.to, namespace=args.namespace, source="cli")
        return _written(args, result, "promoted")


def cmd_audit(args: argparse.Namespace) -> int:
    with _space_memory(args) as memory:
        rows = memory.space_audit(args.since, args.limit)

    def text() -> str:
        if not rows:
            return "nothing since " + (args.since or "the beginning")
        return table(
            [
                [
                    r["sha"][:8],
                    r["date"][:19],
                    safe(f"{r['author']} <{r['email']}>"),
                    r["operation"] + (f" from {r['sourceSpace']}" if r["sourceSpace"] else ""),
                    safe(r["subject"][:60]),
                ]
                for r in rows
            ],
            ["COMMIT", "DATE", "AUTHOR", "OPERATION", "SUBJECT"],
        )

    emit(args, {"since": args.since, "count": len(rows), "commits": rows}, text)
    return 0


def cmd_merge_file(args: argparse.Namespace) -> int:
    from remnic.service.merge_driver import merge_file_at

    # git runs the driver at the top of the work tree; no Memory is opened (a pull holds the lock).
    root = Path(memory_dir_arg(args) or Path.cwd())
    code = merge_file_at(root, Path(args.base), Path(args.ours), Path(args.theirs), args.path)
    if getattr(args, "json", False):
        emit(args, {"path": args.path, "resolved": code == 0})
    return code
