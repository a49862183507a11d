"""`remnic hooks install|status|uninstall|run|agent-config`: git hooks and agent host hooks.

The agent hook scripts run ``python -m remnic.cli.hooks run <event>`` (:func:`main`): this command's
parser alone, at every session start, response and compaction.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from remnic.drivers.hooks import AGENT_EVENTS, AGENT_HOSTS, flush_idle, observe_transcript, session_start_output
from remnic.errors import NotFoundError, RemnicError
from remnic.service.githooks import GIT_HOOKS, hooks_source_dir, pre_commit_problems

from ._common import (
    Formatter,
    Parser,
    add_command,
    choice_list,
    common_parent,
    emit,
    open_memory,
    progress_bar,
    settings_of,
    table,
)


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "hooks",
        "git hooks for the memory repo, and agent host hooks (Claude Code, Codex)",
        epilog="Git hooks: pre-commit refuses malformed memory files; post-merge, post-checkout\n"
        "and post-rewrite update the index after a pull, checkout or rebase.\n"
        "Agent hooks (see hooks/README.md): session start recalls memories into the\n"
        "context; stop and compaction hand the transcript to observe.\n\n"
        "examples:\n  remnic hooks install\n  remnic hooks status\n"
        "  remnic hooks agent-config claude-code",
    )
    hsub = p.add_subparsers(dest="hooks_command", metavar="<install|status|uninstall|agent-config|run>", required=True)

    q = add_command(
        hsub,
        "install",
        "install the git hooks into the memory repository",
        epilog="Records the Python running this command, so the hooks work without remnic on PATH.\n"
        "Also installs the merge driver for memory files (.gitattributes and the repository's git\n"
        "config), so a plain `git pull` merges memories key by key (docs/spaces.md).",
    )
    q.add_argument(
        "--force",
        action="store_true",
        help="also where another hook exists (it is kept as <hook>.pre-remnic and runs first)",
    )
    q.set_defaults(handler=cmd_install)

    q = add_command(
        hsub,
        "status",
        "which git hooks are installed, and where the agent hook scripts are",
        epilog="Exits 1 when any git hook is not installed (a check for scripts), else 0.",
    )
    q.set_defaults(handler=cmd_status)

    q = add_command(hsub, "uninstall", "remove remnic's git hooks (restoring hooks install kept aside)")
    q.set_defaults(handler=cmd_uninstall)

    q = add_command(
        hsub,
        "agent-config",
        "print the hooks settings for an agent host, with absolute paths",
        epilog="The handlers name this Python and the memory repository (REMNIC_MEMORY_DIR): run it from\n"
        "your memory repository or pass --memory-dir. `remnic connectors install claude-code|codex`\n"
        "merges the same handlers into the host's config for you, keeping every other hook.\n"
        "By hand: merge the output into ~/.claude/settings.json (or a project's .claude/settings.json)\n"
        "or ~/.codex/hooks.json; redirecting it (> ~/.codex/hooks.json) replaces the hooks already there.",
    )
    q.add_argument("host", type=choice_list("host", AGENT_HOSTS), help=" or ".join(AGENT_HOSTS))
    q.set_defaults(handler=cmd_agent_config)

    q = add_command(
        hsub,
        "run",
        "run one hook's logic (what the hook scripts call)",
        epilog="Git hooks: "
        + ", ".join(GIT_HOOKS)
        + ". Agent hooks (JSON on stdin, --host): "
        + ", ".join(AGENT_EVENTS)
        + ".",
    )
    q.add_argument(
        "hook",
        type=choice_list("hook", (*GIT_HOOKS, *AGENT_EVENTS)),
        help="the hook git or the agent host runs: " + ", ".join((*GIT_HOOKS, *AGENT_EVENTS)),
    )
    q.add_argument("hook_args", nargs="*", help="the arguments git passes to the hook")
    q.add_argument(
        "--host",
        type=choice_list("host", AGENT_HOSTS),
        default="claude-code",
        help="agent host of an agent hook (default: claude-code)",
    )
    q.set_defaults(handler=cmd_run)


def cmd_install(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    rows = memory.install_git_hooks(force=args.force)
    driver = memory.install_merge_driver()
    emit(
        args,
        {"hooks": rows, "python": sys.executable, "mergeDriver": driver},
        lambda: (
            "\n".join(f"{r['hook']}: {r['state']}" + (f" ({r['detail']})" if r.get("detail") else "") for r in rows)
            + f"\nmerge driver for memory files: {driver['driver']}"
            + f"\nhooks run remnic with {sys.executable}"
        ),
    )
    return 1 if any(r["state"] == "skipped" for r in rows) else 0


def cmd_status(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    rows = memory.git_hooks_status()
    agent_dir = hooks_source_dir()
    data = {"git": rows, "agentHooks": {h: str(agent_dir / h) for h in AGENT_HOSTS}}
    emit(
        args,
        data,
        lambda: (
            table([[r["hook"], r["state"], r["detail"]] for r in rows], ["HOOK", "STATE", "DETAIL"])
            + "\n\nagent hook scripts: "
            + ", ".join(str(agent_dir / h) for h in AGENT_HOSTS)
            + "\n(`remnic connectors install claude-code|codex` adds them to the host's config)"
        ),
    )
    return 0 if all(r["state"] == "installed" for r in rows) else 1


def cmd_uninstall(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    rows = memory.uninstall_git_hooks()
    emit(args, {"hooks": rows}, lambda: "\n".join(f"{r['hook']}: {r['state']}" for r in rows))
    return 0


def agent_config(host_name: str, memory_dir: Path, python: str = sys.executable) -> dict[str, Any]:
    """The hooks settings for ``host_name`` (Claude Code settings.json and Codex hooks.json share a shape):
    exactly the handlers ``remnic connectors install`` writes, naming this Python and ``memory_dir``
    (without it the hooks would fall back to ~/.remnic/memory, whatever repository printed them)."""
    from remnic.drivers.connectors import command_for, handler_for, host, host_events  # not for every hook run

    h = host(host_name)
    hooks: dict[str, Any] = {}
    for event in host_events(h.id):
        command = command_for(h, event, python=python, memory_dir=memory_dir)
        entry: dict[str, Any] = {"hooks": [handler_for(command, h.timeout(event))]}
        hooks[event] = [{"matcher": h.session_matcher, **entry} if event == "SessionStart" else entry]
    return {"hooks": hooks}


def cmd_agent_config(args: argparse.Namespace) -> int:
    memory = open_memory(args)  # the hooks must name a memory repository that exists
    print(json.dumps(agent_config(args.host, memory.root), indent=2))
    return 0


def _read_payload() -> tuple[dict[str, Any], str | None]:
    """The hook's JSON input, and what is wrong with it (None: nothing); a bad input reads as ``{}``."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}, None
    text = sys.stdin.read()
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return {}, f"stdin is not JSON ({exc}): {text[:80]!r}"
    if not isinstance(data, dict):
        return {}, f"stdin is JSON but not an object (got {type(data).__name__})"
    return data, None


def cmd_run(args: argparse.Namespace) -> int:
    if args.hook == "pre-commit":
        settings = settings_of(args)
        problems = pre_commit_problems(settings)
        if not problems:
            return 0
        paths = sorted({p.path for p in problems if p.path})
        lines = [f"remnic pre-commit: {len(paths)} staged memory file(s) are malformed; the commit was stopped."]
        lines += [f"  {p.describe()}" for p in problems]
        lines.append("Fix them and `git add` them again (or commit anyway with `git commit --no-verify`).")
        print("\n".join(lines), file=sys.stderr)
        return 1
    if args.hook in GIT_HOOKS:
        return _run_git_update(args)
    return _run_agent(args)


def _run_git_update(args: argparse.Namespace) -> int:
    """post-merge/post-checkout/post-rewrite: an index update that never fails the git command."""
    try:
        memory = open_memory(args)
        with memory:
            report = memory.sync(
                commit=False, normalize=False, source="hook", progress=progress_bar(args, f"indexing after {args.hook}")
            )
    except Exception as exc:  # noqa: BLE001 - a hook must never break git
        detail = exc.describe() if isinstance(exc, RemnicError) else f"{type(exc).__name__}: {exc}"
        print(f"remnic {args.hook}: index not updated ({detail}); run `remnic sync run`", file=sys.stderr)
        return 0
    if report.changes:
        print(f"remnic: index updated after {args.hook} ({len(report.changes)} change(s))", file=sys.stderr)
    if report.problems:
        print(
            f"remnic: {len(report.malformed_paths)} malformed memory file(s) kept out of the index "
            "(run `remnic doctor`)",
            file=sys.stderr,
        )
    return 0


def _run_agent(args: argparse.Namespace) -> int:
    payload, problem = _read_payload()
    status: dict[str, Any] = {"hook": args.hook, "host": args.host, "ok": False}
    if problem:
        print(f"remnic {args.hook}: {problem}", file=sys.stderr)
    try:
        try:
            memory = open_memory(args)
        except NotFoundError as exc:  # no memory repository there: say so where the user sees it
            _no_memory(args, exc.describe(), status)
            raise
        status["memoryDir"] = str(memory.root)
        with memory:
            if args.hook == "session-start":
                output = session_start_output(memory, payload)
                if output:
                    print(json.dumps(output, ensure_ascii=False), flush=True)
                else:  # rare: doctor tells "no memories yet" from "none pinned or found"
                    status["activeMemories"] = len(memory.list(status="active"))
                flushed = flush_idle(memory, args.host)
                if flushed:
                    print(f"remnic {args.hook}: flushed idle sessions {json.dumps(flushed)}", file=sys.stderr)
            elif not problem:  # an input that is not a JSON object names no transcript
                result = observe_transcript(memory, payload, args.host, args.hook)
                print(f"remnic {args.hook}: {json.dumps(result, default=str)}", file=sys.stderr)
                problem = problem or result.get("error")
        # The hook still exits 0 (a session never fails for memory); the status tells `connectors doctor`.
        status["ok"] = not problem
        if problem:
            status["error"] = problem
    except Exception as exc:  # noqa: BLE001 - an agent session must never be blocked by memory
        detail = exc.describe() if isinstance(exc, RemnicError) else f"{type(exc).__name__}: {exc}"
        print(f"remnic {args.hook}: {detail}", file=sys.stderr)
        status["error"] = detail
    _report_status(status)
    return 0


def _no_memory(args: argparse.Namespace, detail: str, status: dict[str, Any]) -> None:
    """The memory repository the hook was given (or fell back to) is missing: a session must still
    start, but not silently without memories, so SessionStart shows the host's ``systemMessage``
    (both hosts display it to the user) and the status names the directory."""
    status["memoryDir"] = str(settings_of(args).memory_dir)
    status["memoryDirMissing"] = True
    if args.hook == "session-start":
        message = (
            f"remnic: no memories loaded: {detail}. Install the hooks from your memory repository "
            f"(`remnic connectors install {args.host} --memory-dir DIR`)."
        )
        # hookSpecificOutput as well: Codex refuses SessionStart output without it.
        output = {
            "systemMessage": message,
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ""},
        }
        print(json.dumps(output, ensure_ascii=False), flush=True)


def _report_status(status: dict[str, Any]) -> None:
    """How the run went, as JSON in $REMNIC_HOOK_STATUS when set (`connectors doctor` reads it: the
    exit code is always 0, so it cannot tell); never fails the hook."""
    path = os.environ.get("REMNIC_HOOK_STATUS")
    if not path:
        return
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(status, fh)
    except OSError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """``remnic hooks …`` (``argv`` after ``hooks``) with only this command's parser: what the agent
    hook scripts run. Building every command's parser, and importing their modules, would add about
    a tenth of a second to each hook; the parsing and the run are ``remnic hooks``'s own."""
    from remnic.cli import run

    from .examples import add_examples

    parser = Parser(prog="remnic", formatter_class=Formatter, parents=[common_parent()])
    register(parser.add_subparsers(dest="command", metavar="<command>"))
    add_examples(parser)  # `hooks run --help` ends with the same examples
    return run(["hooks", *(sys.argv[1:] if argv is None else argv)], parser)


if __name__ == "__main__":
    sys.exit(main())
