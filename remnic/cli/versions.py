"""`remnic versions list|show|diff|revert`: a memory's versions, read from git history."""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING, Any

from remnic.errors import RemnicError

from ._common import add_command, emit, memory_ref, open_memory, safe, table, warnings_of

if TYPE_CHECKING:
    from remnic.service.memory import Memory

VERSION_HELP = (
    "a version: v1, 2, the sha (prefix) of a commit that changed the file, HEAD~N (the version in effect "
    "at that commit), 'latest' or 'working' (the file on disk now)"
)
REVERT_VERSION_HELP = (
    "a committed version: v1, 2, the sha (prefix) of a commit that changed the file, HEAD~N or 'latest'"
)
# What every version's JSON carries (list, show, diff): one shape, `version` always the number.
VERSION_JSON = "{version, label, sha, path, previousPath, date}"
VERSION_KEYS = (
    "\nversion is the number (1 for v1; null for 'working'), label its name (v1, working),\n"
    "sha the full commit, date ISO 8601 (both null for 'working', which has no commit)."
)


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "versions",
        "list, show, diff and revert a memory's versions (from git history)",
        epilog="Versions are numbered from v1 (oldest). Renames are followed; a copy's history\n"
        "starts where it was copied (v1, added). A version that deleted the file is marked\n"
        "deleted: it has no text (show says so, diff shows every line removed, revert to it\n"
        "is refused: revert to the version before it instead). Asked for by id, the versions are\n"
        "those whose file has that id (a path another memory held before is not mixed in), at\n"
        "every path it had: a move git saw as a delete and an add, a swap, a revival, a typo\n"
        "in the id later fixed. A merge that changed the file (its file differs from every\n"
        "parent's) is a version too, at the merge commit, so 'latest' is what HEAD holds.\n"
        "A path is taken from the repository root; it may also be typed as ./facts/x.md, as\n"
        "an absolute path, or relative to a folder of the repository you are in.\n\n"
        "examples:\n  remnic versions list facts/editor.md\n"
        "  remnic versions diff mem_018f9a3b2c1d4e5f6a7b v1 v3\n"
        "  remnic versions revert facts/editor.md v2",
    )
    vsub = p.add_subparsers(dest="versions_command", metavar="<list|show|diff|revert>", required=True)

    q = add_command(
        vsub,
        "list",
        "every committed version, oldest first",
        epilog="--json: {path, uncommittedChanges, versions: [...]}, each version\n"
        + VERSION_JSON
        + " plus author, subject, change,\ndeleted, operation and trailers."
        + VERSION_KEYS
        + "\n\nexamples:\n  remnic versions list facts/editor.md\n  remnic versions list mem_018f9a3b2c1d4e5f6a7b --json",
    )
    q.add_argument("target", metavar="ID-OR-PATH", help="a memory id, or a memory file path (also one deleted since)")
    q.set_defaults(handler=cmd_list)

    q = add_command(
        vsub,
        "show",
        "print one version of the file",
        epilog="--json: "
        + VERSION_JSON
        + " plus content, deleted, title (the\ndiff header: facts/x.md@v1 (47d1e44d)), number "
        "(the same as version) and, for a deletion,\nbefore (the label of the last version with text)."
        + VERSION_KEYS
        + "\nA commit sha that did not change the file is refused, naming the version in effect then."
        + "\n\nexamples:\n  remnic versions show facts/editor.md v1\n  remnic versions show facts/editor.md HEAD~2",
    )
    q.add_argument("target", metavar="ID-OR-PATH", help="a memory id, or a memory file path (also one deleted since)")
    q.add_argument("version", nargs="?", default="latest", help=VERSION_HELP + " (default: latest)")
    q.set_defaults(handler=cmd_show)

    q = add_command(
        vsub,
        "diff",
        "unified diff between two versions",
        epilog="With no versions: the last two commits, or the latest commit against\n"
        "uncommitted edits on disk. With one version: that version against latest.\n"
        "--json: {diff, changed, from, to}, from and to each\n"
        + VERSION_JSON
        + "."
        + VERSION_KEYS
        + "\n\nexamples:\n  remnic versions diff facts/editor.md   # uncommitted edits, else the last change\n"
        "  remnic versions diff facts/editor.md v1 v3",
    )
    q.add_argument("target", metavar="ID-OR-PATH", help="a memory id, or a memory file path (also one deleted since)")
    q.add_argument("old", nargs="?", help=VERSION_HELP)
    q.add_argument("new", nargs="?", help=VERSION_HELP)
    q.set_defaults(handler=cmd_diff)

    q = add_command(
        vsub,
        "revert",
        "restore a version's content as a new commit",
        epilog="Reverting a deleted file to a version before its deletion brings it back.\n"
        "A version that is the deletion has no content: reverting to it is refused (exit 2).\n"
        "The restored file keeps its current id, and after a move between category folders\n"
        "the category its folder gives (as sync sets it). A revert is a change made now:\n"
        "`updated` is the time of the revert (`created` stays).\n"
        "A revert that makes a memory current again while another memory still supersedes it, or\n"
        "one later in its chain is current (A replaced by B, B by C: C holds A's value now), is\n"
        "refused (exit 2), naming the successor and the chain's current memory: both would be\n"
        "recalled as current. --force reverts anyway and drops the successor's `supersedes` claim\n"
        "in the same commit. A memory `dedup --merge` or consolidation merged into another\n"
        "(archived with mergedInto) is refused the same way, saying so; --force then undoes the\n"
        "merge on the survivor too: it no longer lists the memory in derived_from nor counts it\n"
        "in reinforcement_count (tags, turns and sessions it took stay). The other way round is refused\n"
        "too: a version that supersedes a memory that is current now (made current again by a\n"
        "dismiss); --force then marks that memory superseded again in the same commit. A version\n"
        "that is superseded by a memory gives that memory its `supersedes` back in the same commit.\n"
        "Each other memory a revert changes is named in its output and in the commit's body;\n"
        "--json lists them as alsoChanged, each {id, path, change}: supersedes-dropped,\n"
        "merge-undone, superseded-again, supersedes-restored or current-again (a version that no\n"
        "longer replaces a memory the current one replaced makes that memory current again).\n"
        "'working' (the file on disk) is not a committed version: commit it with `remnic sync run`.\n"
        "A file moved by hand and not committed yet (refused without --force) is reverted where it is\n"
        "now, and the commit records the move (the old path deleted), so the memory keeps one file\n"
        "and its whole history; --json: movedFrom (the old path, else null).\n"
        "A version is v1 (the oldest), v2, ... as `versions list` numbers them, or a commit's sha.\n"
        "--force over uncommitted edits to the file discards nothing: they are committed first, as they\n"
        "are, as a version of their own, named in the output (--json: keptEdits {version, label, commit,\n"
        "path, malformed}, else null); `remnic versions revert PATH vK` brings them back.\n\n"
        "examples:\n  remnic versions list facts/editor.md   # its versions: v1, v2, ...\n"
        "  remnic versions revert facts/editor.md v2\n"
        "  remnic versions revert mem_018f9a3b2c1d4e5f6a7b v1 --force",
    )
    q.add_argument("target", metavar="ID-OR-PATH", help="a memory id, or a memory file path (also one deleted since)")
    q.add_argument("version", help=REVERT_VERSION_HELP)
    q.add_argument(
        "--force",
        action="store_true",
        help="revive a memory another one supersedes or was merged into (refused otherwise), or revert a file with "
        "uncommitted edits: nothing is discarded, the edits are first committed as a version of their own "
        "(keptEdits in --json)",
    )
    q.set_defaults(handler=cmd_revert)


def cmd_list(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    with memory_ref(memory, args.target) as args.target:
        found = memory.memory_history(args.target)
    versions, path, dirty = found.versions, found.working_path, found.uncommitted
    rows = [
        [v.label, v.short, v.date, v.operation + (" (deleted)" if v.deleted else ""), v.author, v.path]
        for v in versions
    ]

    def text() -> str:
        out = table(rows, ["VERSION", "COMMIT", "DATE", "OPERATION", "AUTHOR", "PATH"])
        if dirty:
            out += f"\n(uncommitted changes on disk: compare with `remnic versions diff {shlex.quote(args.target)}`)"
        return out

    emit(args, {"path": path, "versions": [v.to_dict() for v in versions], "uncommittedChanges": dirty}, text)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    with memory_ref(memory, args.target) as args.target:
        read, fields = memory.version_detail(args.target, args.version)
    if getattr(args, "json", False):
        # "version" is the number, as list and diff give it; the diff-header label is "title".
        data: dict[str, Any] = {**fields, "number": fields["version"], "title": read.label}
        data.update(content=read.text, deleted=read.deleted)
        if read.deleted:
            data["before"] = read.before
        emit(args, data)
    elif read.deleted:  # a deletion has no text to print: say so, and where the last text is
        where = "is not on disk" if args.version.strip().lower() == "working" else "was deleted in this version"
        hint = (
            f"; its last content: `remnic versions show {shlex.quote(args.target)} {read.before}`"
            if read.before
            else ""
        )
        print(f"{read.label}: the file {where}{hint}")
    else:
        print(read.text, end="" if read.text.endswith("\n") else "\n")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    with memory_ref(memory, args.target) as args.target:
        data = memory.version_diff_detail(args.target, args.old, args.new)
    emit(args, data, data["diff"] or "(no differences)")
    return 0


def cmd_revert(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    with memory_ref(memory, args.target) as args.target:
        shown = _version_label(memory, args.target, args.version)  # HEAD~3 names another version after the commit
        result = memory.revert(args.target, args.version, source="cli", force=args.force)
    record = result.record
    also = result.also_changed
    text = (
        f"reverted {record.path} to {shown} in a new commit ({(result.commit or '')[:8]})"
        if result.changed
        else f"{record.path} already has the content of {shown}; nothing to commit"
    )
    kept = result.kept_edits
    if kept is not None:  # the edits the revert replaced are a version now: say which, so they can come back
        back = "show" if kept.malformed else "revert"  # a malformed version is read back, not reverted to
        text += (
            f"\nkept your uncommitted edits as {kept.label} (commit {kept.commit[:8]}) before reverting"
            + (" (the file did not parse: committed as it was)" if kept.malformed else "")
            + f"; to get them back: remnic versions {back} {shlex.quote(kept.path)} {kept.label}"
        )
    if result.moved_from:  # the commit deleted a path too: say where the file was
        with_what = "them" if kept else "it"
        text += f"\nthe move from {result.moved_from}, made by hand, is committed with {with_what} (history kept)"
    if also:  # the other memories the commit changed, so no file is rewritten unannounced
        text += "\nalso changed in that commit:\n" + "\n".join(f"  {safe(a.describe(record.id))}" for a in also)
    data = {**record.to_dict(), "commit": result.commit, "changed": result.changed, **warnings_of(result)}
    data["alsoChanged"] = [a.to_dict() for a in also]
    data["movedFrom"] = result.moved_from
    data["keptEdits"] = kept.to_dict() if kept is not None else None
    emit(args, data, text)
    return 0


def _version_label(memory: Memory, target: str, spec: str) -> str:
    """The version label (``v2``) a spec names, resolved before the revert moves HEAD; as typed when it
    names none (the revert then says why)."""
    try:
        return str(memory.version_detail(target, spec)[1]["label"])
    except RemnicError:
        return spec
