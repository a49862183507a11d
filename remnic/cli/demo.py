"""`make demo`: the main job on an embedded default, narrated as the CLI commands a user would type.

Creates a demo memory repo from memory-template/ (``build/demo-memory`` by
default, or the directory given; deleted and made again on every run), imports
the packaged demo memories, edits one by hand, syncs, recalls, X-rays the recall
and shows the file's history.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from . import build_parser


def _available(command: str) -> bool:
    parser = build_parser()
    for action in parser._actions:  # argparse offers no public way to list sub-commands
        if action.__class__.__name__ == "_SubParsersAction" and action.choices is not None:
            return command in action.choices
    return False


def _run(args: list[str], memory_dir: Path) -> str:
    shown = " ".join(shlex.quote(a) for a in ["remnic", *args])
    print(f"\n$ {shown}", flush=True)
    proc = subprocess.run(
        [sys.executable, "-m", "remnic", *args, "--memory-dir", str(memory_dir)], capture_output=True, text=True
    )
    output = (proc.stdout + proc.stderr).rstrip()
    if output:
        print(output, flush=True)
    if proc.returncode not in (0,):
        raise SystemExit(f"demo step failed (exit {proc.returncode}): {shown}")
    return proc.stdout


def _shown(path: Path) -> str:
    """``path`` relative to the current directory when inside it (what a user types), else absolute."""
    try:
        return shlex.quote(str(path.relative_to(Path.cwd())))
    except ValueError:
        return shlex.quote(str(path))


def remnic_command() -> str:
    """How to run remnic from where the demo ran: ``make demo`` installs into .venv/ without
    activating it, so a bare ``remnic`` is not on PATH; the venv's own script always works."""
    script = Path(sys.executable).parent / "remnic"
    return _shown(script) if os.access(script, os.X_OK) else f"{shlex.quote(sys.executable)} -m remnic"


def closing(target: Path) -> str:
    """The demo's last lines: where its repository is, and a command to try that works as printed."""
    activate = Path(sys.prefix) / "bin" / "activate"
    hint = f"\n(or `. {_shown(activate)}` once, then plain `remnic ...`)" if activate.is_file() else ""
    return (
        f"\nDemo memory repository: {target} (recreated by every `make demo`)\n"
        f'Try: {remnic_command()} --memory-dir {_shown(target)} query "how do I roll back a release?"' + hint
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    target = Path(argv[0] if argv else "build/demo-memory").resolve()
    if target.exists():
        print(f"# {target} is recreated by every `make demo`: removing the previous one", flush=True)
        shutil.rmtree(target)
    data = resources.files("remnic") / "data" / "demo.jsonl"
    with resources.as_file(data) as demo_jsonl:
        _run(["init", str(target)], target)
        _run(["import", str(demo_jsonl)], target)
    _run(["list", "--category", "decision"], target)
    edited = next(iter(sorted((target / "facts").glob("*replica-lag*.md"))), target / "facts" / "missing.md")
    if edited.exists():
        print(f"\n# a hand edit in an editor: {edited.relative_to(target)} (200ms → 250ms)")
        edited.write_text(edited.read_text(encoding="utf-8").replace("200ms", "250ms"), encoding="utf-8")
    if _available("sync"):
        _run(["sync", "run"], target)
    if _available("query"):
        _run(["query", "when do we cut releases?", "--top-k", "3"], target)
    if _available("xray"):
        # A decision answered directly, a pending rumour shown for review, and the ladder that got there.
        out = _run(
            ["xray", "what did we decide about the recall cache TTL", "--budget", "2048", "--top-k", "4"], target
        )
        audit_id = next(
            (line.split(": ", 1)[1].strip() for line in out.splitlines() if line.strip().startswith("audit-entry: ")),
            None,
        )
        if audit_id and _available("audit"):
            _run(["audit", "show", audit_id], target)
    if edited.exists() and _available("sync"):
        _run(["versions", "diff", str(edited.relative_to(target))], target)
    _run(["doctor"], target)
    print(closing(target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
