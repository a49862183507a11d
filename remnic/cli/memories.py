"""Commands that create, read and change memories, plus status/doctor/config."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from remnic.config import MARKER_FILE, load_settings
from remnic.errors import RemnicError, UsageError, ValidationError
from remnic.memfile.schema import CATEGORIES, STATUSES

from ._common import (
    add_command,
    choice_list,
    emit,
    emit_failure,
    memory_dir_arg,
    memory_ref,
    non_negative_int,
    not_utf8,
    open_memory,
    plural,
    positive_int,
    read_text_arg,
    repo_path,
    safe,
    settings_of,
    table,
    unit_float,
    wants_json,
    warnings_of,
)
from .portable import IMPORT_EPILOG, cmd_import

if TYPE_CHECKING:  # the service loads when a command runs, not when the parser is built
    from remnic.memfile.model import MemoryRecord


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "init",
        "create a memory repository (or complete one) from the template",
        epilog="Lays down folders per category, a README, .gitignore for .remnic/ and a sample\n"
        "remnic.config.json, then commits them. Existing files are never overwritten.\n"
        "A repository with no memories yet also gets its (empty) search index, so status\n"
        "and doctor are healthy from the start.\n\n"
        "In a folder that already holds files, only the memory folders (facts/, decisions/,\n"
        "..., entities/, namespaces/*/...) are memories: notes elsewhere (a root notes.md)\n"
        "are listed as skipped and never given frontmatter or committed, unless --adopt\n"
        "names them. `remnic sync run` (try --dry-run first) adopts what init found and\n"
        "commits it as it is on disk: notes you have not committed yet (edited, staged or\n"
        "untracked) are in that commit too.\n\n"
        "examples:\n  remnic init ~/memories\n  remnic init . --adopt 'notes/**'\n"
        "  remnic init ~/vault --adopt '**'      # every markdown note of a vault",
    )
    p.add_argument("dir", nargs="?", help="directory to create (default: the resolved memory dir)")
    p.add_argument(
        "--adopt",
        action="append",
        default=[],
        metavar="PATTERN",
        help="also make notes matching this glob memories (** spans folders); kept in store.include of the "
        "repository's remnic.config.json; repeatable",
    )
    p.set_defaults(handler=cmd_init)

    p = add_command(
        sub,
        "store",
        "store a new memory (one file, one commit)",
        epilog='examples:\n  remnic store "We deploy on Tuesdays" --category decision --tags ops,release\n'
        '  echo "Ana prefers tabs" | remnic store - --category preference',
    )
    p.add_argument("text", metavar="TEXT", help="the memory's text, or - to read standard input")
    p.add_argument(
        "--category",
        "-c",
        type=choice_list("category", CATEGORIES),
        help=f"one of: {', '.join(CATEGORIES)} (default: fact; with --supersedes, the superseded memory's)",
    )
    p.add_argument("--tags", "-t", help="comma-separated tags (default: none; with --supersedes, its tags)")
    p.add_argument("--confidence", type=unit_float("--confidence"), help="0..1 (default 0.9)")
    p.add_argument(
        "--importance", type=unit_float("--importance"), help="0..1 (default 0.5; with --supersedes, its importance)"
    )
    p.add_argument("--namespace", "-n", help="namespace sub-tree (default: namespaces.default)")
    p.add_argument(
        "--supersedes", metavar="ID", help="this memory replaces memory ID (which becomes superseded, its file kept)"
    )
    p.add_argument("--dry-run", action="store_true", help="validate and show the file without writing it")
    p.set_defaults(handler=cmd_store)

    p = add_command(
        sub,
        "get",
        "show one memory by id or by its file path",
        epilog="examples:\n  remnic get mem_018f9a3b2c1d4e5f6a7b\n  remnic get facts/editor.md --raw   # the file as on disk",
    )
    p.add_argument("id", metavar="ID-OR-PATH", help="a memory id, or its file path (facts/x.md)")
    p.add_argument("--raw", action="store_true", help="print the file exactly as on disk (with --json: as fileText)")
    p.set_defaults(handler=cmd_get)

    p = add_command(
        sub,
        "list",
        "list memories, optionally filtered (all filters must match)",
        epilog="examples:\n  remnic list --category decision\n  remnic list --status pending_review --json\n"
        "  remnic list --tag ops --namespace team-a\n  remnic list --limit 50 --offset 100   # the third page of 50",
    )
    p.add_argument(
        "--category", "-c", type=choice_list("category", CATEGORIES), help=f"one of: {', '.join(CATEGORIES)}"
    )
    p.add_argument("--status", "-s", type=choice_list("status", STATUSES), help=f"one of: {', '.join(STATUSES)}")
    p.add_argument("--tag", "-t", help="memories carrying this tag")
    p.add_argument("--namespace", "-n", help="memories in this namespace (default: every namespace)")
    p.add_argument(
        "--limit", type=positive_int("--limit"), metavar="N", help="show at most N memories (default: all of them)"
    )
    p.add_argument(
        "--offset",
        type=non_negative_int("--offset"),
        default=0,
        metavar="N",
        help="skip the first N matches (paths in order; with --limit, pages through a large repository)",
    )
    p.set_defaults(handler=cmd_list)

    p = add_command(
        sub,
        "import",
        "import memories from a JSONL file (validated first, one commit)",
        epilog=IMPORT_EPILOG,
    )
    p.add_argument("file", metavar="FILE.jsonl", help="the file, or - for standard input")
    p.add_argument("--namespace", "-n", help="namespace for lines that name none")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="validate every line and report what would be imported and skipped; write nothing",
    )
    p.set_defaults(handler=cmd_import)

    p = add_command(
        sub,
        "update",
        "change a memory's text, tags, status, importance or category (one commit)",
        epilog="Only the frontmatter lines that change are rewritten; a new category moves the\n"
        "file to that category's folder under its own file name and sub-folder (facts/sub/Plan.md\n"
        "-> decisions/sub/Plan.md; Plan-2.md only when that name is taken, in any case, and back\n"
        "to Plan.md once it is free), so [[links]] to it still resolve. In archive/ or cold/ the\n"
        "file stays in that tier (archive/facts/x.md -> archive/decisions/x.md; a dated\n"
        "archive/2026-01-02/x.md stays put), so its status never changes. An uncommitted hand edit of the file is kept out of the commit.\n"
        "--status forgotten is `forget` (sets forgottenAt); --status archived sets archivedAt;\n"
        "--status active on a superseded memory drops its supersededBy, supersededAt and\n"
        "invalidAt and the successor's supersedes; --status superseded needs a successor\n"
        "(`store --supersedes` or `update --supersedes`). --supersedes on a memory that already\n"
        "replaces another adds OTHER: its supersedes lists both, and both stay replaced.\n"
        'Each other memory the commit changed is named ("also changed in that commit"); --json\n'
        "lists them as alsoChanged, each {id, path, change}, as `versions revert` does.\n\n"
        "examples:\n  remnic update mem_01a2… --status archived\n"
        "  remnic update mem_01a2… --tags ops,release --importance 0.9\n"
        "  remnic update mem_01a2… --supersedes mem_0199…",
    )
    p.add_argument("id", metavar="ID-OR-PATH", help="a memory id (mem_…), or its file path (facts/x.md)")
    p.add_argument("--content", help="the new text (- reads standard input)")
    p.add_argument("--tags", "-t", help="comma-separated tags (replaces the list; '' clears it)")
    p.add_argument("--status", "-s", type=choice_list("status", STATUSES), help=f"one of: {', '.join(STATUSES)}")
    p.add_argument("--importance", type=unit_float("--importance"), help="importanceScore, 0..1")
    p.add_argument("--confidence", type=unit_float("--confidence"), help="0..1")
    p.add_argument(
        "--category", "-c", type=choice_list("category", CATEGORIES), help=f"one of: {', '.join(CATEGORIES)}"
    )
    p.add_argument("--supersedes", metavar="OTHER", help="this memory replaces memory OTHER (marked superseded)")
    p.set_defaults(handler=cmd_update)

    p = add_command(
        sub,
        "forget",
        "mark a memory forgotten: its file is kept (status: forgotten) and left out of recall",
        epilog='examples:\n  remnic forget mem_018f9a3b2c1d4e5f6a7b --reason "no longer true"\n'
        "  remnic forget facts/editor.md",
    )
    p.add_argument("id", metavar="ID-OR-PATH", help="a memory id (mem_…), or its file path (facts/x.md)")
    p.add_argument("--reason", help="why, recorded as forgottenReason")
    p.set_defaults(handler=cmd_forget)

    p = add_command(
        sub,
        "timeline",
        "a memory's history from git, one event per commit",
        epilog="examples:\n  remnic timeline facts/editor.md\n  remnic timeline mem_018f9a3b2c1d4e5f6a7b --json",
    )
    p.add_argument("id", metavar="ID-OR-PATH", help="a memory id (mem_…), or its file path (facts/x.md)")
    p.set_defaults(handler=cmd_timeline)

    p = add_command(
        sub,
        "status",
        "summary of the memory repository and its index",
        epilog="examples:\n  remnic status\n  remnic status --json --memory-dir ~/memories",
    )
    p.set_defaults(handler=cmd_status)

    p = add_command(
        sub,
        "doctor",
        "check python, git, the memory dir, the index and every memory file",
        description="Check python, git, the memory dir, the index and every memory file: one line per\n"
        "check, marked ok, WARN (something to look at; nothing is broken) or FAIL.\n\n"
        "exit codes: 0 when every check is ok or only warns, 1 when any check FAILs\n"
        "(2 for a bad flag). --json prints {ok, checks}: ok is false exactly when it exits 1, and\n"
        "then standard error also has {error, code: check_failed} naming the failed checks, as\n"
        "every --json error is on standard error.",
        epilog="examples:\n  remnic doctor\n  remnic doctor --json",
    )
    p.set_defaults(handler=cmd_doctor)


def _record_text(record: MemoryRecord) -> str:
    tags = ", ".join(record.tags) or "-"
    ns = "" if record.namespace == "default" else f"  namespace: {record.namespace}"
    # A CRLF file's line ends are not control characters to show (--raw prints the bytes as they are).
    content = record.content.replace("\r\n", "\n")
    return safe(
        f"{record.id}  [{record.category}, {record.status}]  {record.path}\n"
        f"tags: {tags}  confidence: {record.confidence:.2f}  importance: {record.importance:.2f}{ns}\n\n"
        f"{content}"
    )


def cmd_init(args: argparse.Namespace) -> int:
    directory = args.dir if args.dir is not None else memory_dir_arg(args)
    if directory is not None and not directory.strip():  # "" would silently mean the default (or cwd)
        raise UsageError("the directory to create is empty; name one, or omit it for the resolved memory dir")
    from remnic.service.memory import Memory

    settings = load_settings(directory)
    existed = (settings.memory_dir / MARKER_FILE).is_file()  # init completes or updates one already there
    with Memory.init(settings=settings, adopt=args.adopt) as memory:
        found = memory.adoption()
        head = memory.head()

    def text() -> str:
        lines = [f"{'updated' if existed else 'initialised'} memory repository at {memory.root}"]
        if found["include"]:
            lines.append("also memories: " + ", ".join(found["include"]) + " (store.include)")
        if found["memoryFiles"]:
            lines.append(
                f"found {plural(found['memoryFiles'], 'memory file')}; `remnic sync run` adopts "
                + ("it" if found["memoryFiles"] == 1 else "them")
                + " (`--dry-run` lists what it would change)"
            )
            lines.append("it commits each note as it is on disk: uncommitted, staged and untracked ones too")
        if found["skipped"]:
            lines.append(f"{plural(len(found['skipped']), 'file')} left alone (not memories):")
            lines += [f"  ~ {_one_line(s['path'])}: {s['reason']}" for s in found["skipped"][:20]]
            if len(found["skipped"]) > 20:
                lines.append(f"  ... and {len(found['skipped']) - 20} more (`remnic doctor` lists them all)")
        return "\n".join(lines)

    emit(args, {"memoryDir": str(memory.root), "head": head, "created": not existed, **found}, text)
    return 0


def _one_line(path: str) -> str:
    """A file name for a one-line-per-file listing: control characters and a line break shown escaped."""
    return safe(path).replace("\n", "\\n")


def _stdin_text(field: str) -> str:
    """Standard input decoded as strict UTF-8: a bad byte is a usage error naming its offset, never
    a crash (or a silently escaped byte, which is what the C locale's text stdin would give)."""
    import sys

    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # stdin replaced by a text stream (embedding, tests): already text
        return read_text_arg("-")
    data = buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError.single(field, not_utf8(exc, "standard input")) from None
    if not text.strip():
        raise UsageError("no text on standard input (TEXT was '-')")
    return text


def cmd_store(args: argparse.Namespace) -> int:
    from remnic.memfile.model import serialize

    memory = open_memory(args, one_shot_write=True)
    content = _stdin_text("content") if args.text == "-" else args.text
    if args.supersedes:
        args.supersedes = repo_path(memory, args.supersedes)
    result = memory.store(
        content,
        category=args.category,
        tags=args.tags,
        confidence=args.confidence,
        importance=args.importance,
        namespace=args.namespace,
        source="cli",
        dry_run=args.dry_run,
        extra={"supersedes": args.supersedes} if args.supersedes else None,
    )
    # A dry run predicts the real write: an exact duplicate would not be written.
    record = result.record
    duplicate = not result.changed and (not args.dry_run or bool(result.duplicates))
    data = {**record.to_dict(), "duplicate": duplicate, "dryRun": args.dry_run, "commit": result.commit}
    data.update(warnings_of(result))
    file_text = serialize(record.frontmatter, record.body)
    if args.dry_run and not duplicate:
        data["fileText"] = file_text  # what the text mode prints: the file that would be written
    if duplicate:
        text = f"duplicate of {record.id} ({record.path}); nothing {'would be ' if args.dry_run else ''}stored"
    elif args.dry_run:
        text = f"would write {record.path}:\n" + file_text
    else:
        text = f"stored {record.id} → {record.path}" + (f" in commit {result.commit[:8]}" if result.commit else "")
        old = record.frontmatter.get("supersedes")
        if old:  # say what changed beside the new file, and what it took from the memory it replaces
            data["superseded"] = old
            given = {"category": args.category, "tags": args.tags, "importance": args.importance}
            took = [name for name, value in given.items() if value is None]
            text += f"\nsupersedes {old} (now superseded)" + (f"; {', '.join(took)} taken from it" if took else "")
    emit(args, data, text)
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    from remnic.service.browse import unicode_twin

    memory = open_memory(args)
    with memory_ref(memory, _required(args.id, "ID")) as target:
        # A name typed in NFC finds the file a Mac named in NFD (and the reverse), when it is the only one.
        record = memory.find((memory.names_path(target) and unicode_twin(memory.root, target)) or target)
    if args.raw and not wants_json(args):
        print(memory.file_text(record.path), end="")
        return 0
    data = record.to_dict()
    if args.raw:  # --json --raw: the record, and the file exactly as on disk (as store --dry-run --json)
        data["fileText"] = memory.file_text(record.path)
    emit(args, data, lambda: _record_text(record))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    import sys

    from remnic.service.browse import listing

    memory = open_memory(args)
    filters = {"category": args.category, "status": args.status, "tag": args.tag, "namespace": args.namespace}
    matches, malformed = listing(memory, **filters)
    if malformed:  # on stderr, so the listing stays what scripts read; --json also has them under "malformed"
        shown_bad = safe(", ".join(malformed[:5]) + (", …" if len(malformed) > 5 else ""))
        bad = plural(len(malformed), "malformed file")
        print(f"remnic: warning: {bad} left out ({shown_bad}): run `remnic doctor`", file=sys.stderr)
    total = len(matches)
    end = total if args.limit is None else min(total, args.offset + args.limit)
    records = matches[args.offset : end]
    rows = [
        [r.id, r.category, r.status, r.namespace, r.path, safe(r.content.splitlines()[0][:50]) if r.content else ""]
        for r in records
    ]
    shown = plural(len(records), "memory", "memories")
    if len(records) < total:
        shown += f" ({args.offset + 1}-{args.offset + len(records)} of {total}"
        shown += f"; next page: --offset {end})" if end < total else ")"
    emit(
        args,
        {
            "count": len(records),
            "total": total,
            "offset": args.offset,
            "limit": args.limit,
            "nextOffset": end if end < total else None,
            "memories": [r.to_dict() for r in records],
            "malformed": malformed,
        },
        lambda: (
            (table(rows, ["ID", "CATEGORY", "STATUS", "NAMESPACE", "PATH", "TEXT"]) + f"\n{shown}")
            if records
            else ("no memories match" if not total else f"no memories at --offset {args.offset} ({total} match)")
        ),
    )
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    changes: dict[str, Any] = {}
    if args.tags is not None:
        changes["tags"] = [t.strip() for t in args.tags.split(",") if t.strip()]
    for flag, key in (("status", "status"), ("importance", "importanceScore"), ("confidence", "confidence")):
        if getattr(args, flag) is not None:
            changes[key] = getattr(args, flag)
    if args.category is not None:
        changes["category"] = args.category
    content = None if args.content is None else (_stdin_text("content") if args.content == "-" else args.content)
    if not changes and content is None and not args.supersedes:
        raise UsageError(
            "nothing to change: give at least one of --content, --tags, --status, --importance, --confidence, "
            "--category, --supersedes"
        )
    from remnic.service import updating as _updating

    memory = open_memory(args)
    if args.supersedes:
        changes["supersedes"] = repo_path(memory, args.supersedes)
    with memory, memory_ref(memory, args.id) as target:
        result = _updating.update(memory, target, changes, source="cli", content=content)
    record, also = result.record, result.also_changed
    text = (
        f"updated {record.id} ({record.path}) in commit {(result.commit or '')[:8]}"
        if result.commit
        else f"{record.id} already says that; nothing changed"
    )
    if also:  # as `versions revert` names them: no other file is rewritten unannounced
        text += "\nalso changed in that commit:\n" + "\n".join(f"  {safe(a.describe(record.id))}" for a in also)
    data = {**record.to_dict(), "changed": result.changed, "commit": result.commit, **warnings_of(result)}
    emit(args, {**data, "alsoChanged": [a.to_dict() for a in also]}, text)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from remnic.service.chains import Links

    memory = open_memory(args)
    with memory_ref(memory, args.id) as target:
        result = memory.forget(target, args.reason, source="cli")
    record = result.record
    # The memories it had replaced are left with no current memory: say so, with the command that revives each.
    stranded = [s.describe() for s in Links(memory.list()).stranded(record.id)] if result.changed else []
    warned = warnings_of(result).get("warnings", []) + [{"field": "supersededBy", "message": m} for m in stranded]
    emit(
        args,
        {
            **record.to_dict(),
            "changed": result.changed,
            "commit": result.commit,
            **({"warnings": warned} if warned else {}),
        },
        f"{record.id} was already forgotten; nothing changed"
        if not result.changed
        else f"forgot {record.id} ({record.path}) in commit {(result.commit or '')[:8]}\nmarked forgotten: the file "
        "is kept (status: forgotten) and left out of recall; delete the file to remove its text (git history keeps it)"
        + "".join(f"\nwarning: {safe(m)}" for m in stranded),
    )
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    with memory_ref(memory, args.id) as target:
        events = memory.timeline(target, working=True)  # and the file on disk when it differs
    rows = [
        [e["label"], e["date"] or "-", e["operation"], e["status"], (e["sha"] or "-")[:8], e["path"]] for e in events
    ]
    emit(
        args,
        {"id": args.id, "events": events},
        lambda: table(rows, ["VERSION", "DATE", "OPERATION", "STATUS", "COMMIT", "PATH"]),
    )
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from remnic.service.health import FAILED_INDEX

    memory = open_memory(args)
    status = memory.status()

    def text() -> str:
        lines = [
            f"memory dir: {status['memoryDir']}",
            f"head: {status['head'] or '(no commits)'}",
            f"memories: {status['memories']}",
        ]
        for key in ("category", "status", "namespace"):
            if status["counts"][key]:
                lines.append(f"  by {key}: " + ", ".join(f"{k}={v}" for k, v in sorted(status["counts"][key].items())))
        if status["malformed"]:
            lines.append(f"malformed: {len(status['malformed'])} (run `remnic doctor`)")
        if status["empty"]:
            lines.append(f"no text yet: {len(status['empty'])} (" + ", ".join(status["empty"][:3]) + ")")
        if status["skipped"]:
            reasons: dict[str, int] = {}
            for s in status["skipped"]:
                reasons[s["reason"]] = reasons.get(s["reason"], 0) + 1
            lines.append(f"not memories (left alone): {len(status['skipped'])}")
            lines += [f"  {n} {reason}" for reason, n in sorted(reasons.items())]
        if status.get("inProgress"):
            lines.append(f"repository: {status['inProgress']}: sync and writes wait until it is finished")
        held = status.get("uncommittedHeld") or []
        lines.append(
            f"uncommitted changes: {len(status['uncommitted'])}"
            + (f" (and {len(held)} that sync leaves until fixed: malformed, or no text)" if held else "")
        )
        index = status["index"]
        state = index.get("state")
        if state == "behind":
            lines.append("index: ok (behind HEAD by writes made without it; the next recall catches it up)")
        elif state == "ok":
            lines.append(
                f"index: ok ({plural(index.get('count', 0), 'memory', 'memories')} at {str(index.get('commit') or '')[:8]})"
            )
        else:
            lines.append(f"index: {state}" + (f" ({index['detail']})" if index.get("detail") else ""))
        if index.get("mismatch"):
            lines.append(f"index mismatch: {index['mismatch']['detail']}")
        if index.get("vectorsPending"):
            lines.append(
                f"vectors pending: {index['vectorsPending']} memories (searchable by BM25; "
                "`remnic sync run` embeds them)"
            )
        if rerank_broken:
            lines.append(f"rerank: {rerank['state']} ({rerank['detail']})")
        return "\n".join(lines)

    rerank = status.get("rerank") or {}
    rerank_broken = rerank.get("state") not in (None, "ok")
    emit(args, status, text)
    # A configured model that fails, or no index possible where it belongs: a failure, as doctor's FAIL.
    if status["index"].get("state") in FAILED_INDEX or rerank_broken:
        what = f"rerank: {rerank.get('state')}" if rerank_broken else f"index: {status['index'].get('state')}"
        emit_failure(args, f"status failed ({what})", "check_failed")
        return 1
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from remnic.service.health import system_checks
    from remnic.service.memory import Memory

    try:
        settings, broken = settings_of(args), None
    except ValidationError as exc:  # a broken config file is a finding, not a reason to stop checking
        settings, broken = settings_of(args, use_config_files=False), exc
    config: dict[str, Any] = {
        "name": "config",
        "status": "fail" if broken else "ok",
        "detail": broken.describe() if broken else (", ".join(settings.config_files) or "defaults only"),
    }
    if settings.warnings and not broken:
        unread = sum(1 for w in settings.warnings if " is not read (" in w)
        said = (
            [
                f"{unread} key(s) of the original Remnic are not read (`remnic config migrate` moves them aside under _remnicOriginal)"
            ]
            if unread
            else []
        )
        if len(settings.warnings) > unread:
            said.append(f"{len(settings.warnings) - unread} other warning(s), listed below")
        config.update(status="warn", detail=f"{config['detail']}; " + "; ".join(said), problems=settings.warnings)
    checks = [config]
    try:
        memory = Memory.open(settings=settings)
    except RemnicError as exc:  # none to check, or one that cannot open (`.remnic` a file): say so, check the rest
        checks += [*system_checks(), {"name": "memory-dir", "status": "fail", "detail": exc.message}]
    else:
        checks += memory.doctor()

    def text() -> str:
        marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
        lines = []
        for c in checks:
            lines.append(f"[{marks.get(c['status'], c['status'])}] {c['name']}: {c['detail']}")
            for problem in c.get("problems", []):
                lines.append(f"        {problem}")
        return "\n".join(lines)

    emit(args, {"ok": all(c["status"] != "fail" for c in checks), "checks": checks}, text)
    failed = [c["name"] for c in checks if c["status"] == "fail"]
    if failed:
        emit_failure(args, f"{plural(len(failed), 'check')} failed: {', '.join(failed)}", "check_failed")
    return 1 if failed else 0


def _required(value: str, name: str) -> str:
    if not value.strip():
        raise UsageError(f"{name} must not be empty")
    return value
