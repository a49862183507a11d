#!/usr/bin/env python3
"""Regenerate the golden files (Recall X-ray, observation pipeline) ON PURPOSE.

    python tests/regen_golden.py            # rewrite changed expected.* files
    python tests/regen_golden.py --check    # only report; exit 1 if any differ
    python tests/regen_golden.py full null  # limit to some cases

For every ``golden/xray/<case>/snapshot.json`` this renders the snapshot in
each format and writes ``expected.txt`` / ``expected.md`` / ``expected.json``
next to it, printing which files changed. This is the ONLY thing that writes
golden files: the tests never do. Review the diff (``git diff golden/``)
before committing.

For every ``golden/observe/<case>/`` (an ``input.*`` transcript and a ``case.json`` naming its
format, session key, clock and observe settings) this writes ``expected.json`` (the turns read
from the transcript and the observations planned from them) and ``expected-verdicts.jsonl`` (the
verdict-ledger lines).

``snapshot.json`` is read with Python's json module, so the non-standard
literals ``NaN`` / ``Infinity`` are allowed (used to exercise non-finite
values); ``null`` means "no snapshot captured".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "golden" / "xray"
OBSERVE_DIR = ROOT / "golden" / "observe"
OBSERVE_FILES = ("expected.json", "expected-verdicts.jsonl")

# file name -> render format
EXPECTED_FILES: dict[str, str] = {
    "expected.txt": "text",
    "expected.md": "markdown",
    "expected.json": "json",
}

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def case_dirs(golden_dir: Path = GOLDEN_DIR) -> list[Path]:
    """Every case directory (one holding a snapshot.json), sorted by name."""
    return sorted(p.parent for p in golden_dir.glob("*/snapshot.json"))


def load_snapshot(case_dir: Path):
    with open(case_dir / "snapshot.json", encoding="utf-8") as fh:
        return json.load(fh)


def render_case(case_dir: Path) -> dict[str, bytes]:
    """file name -> expected bytes for one case."""
    from remnic.render.xray import render_xray

    snapshot = load_snapshot(case_dir)
    return {name: render_xray(snapshot, fmt).encode("utf-8") for name, fmt in EXPECTED_FILES.items()}


def observe_case_dirs(golden_dir: Path = OBSERVE_DIR) -> list[Path]:
    """Every observation case directory (one holding a case.json), sorted by name."""
    return sorted(p.parent for p in golden_dir.glob("*/case.json"))


def observe_input(case_dir: Path) -> Path:
    inputs = sorted(case_dir.glob("input.*"))
    if len(inputs) != 1:
        raise SystemExit(f"{case_dir}: expected exactly one input.* file, found {len(inputs)}")
    return inputs[0]


def render_observe_case(case_dir: Path) -> dict[str, bytes]:
    """file name -> expected bytes for one observation case (auto-detected format, no embedder)."""
    from remnic.config import ObserveSettings, snake
    from remnic.observe.ledger import verdict_event
    from remnic.observe.pipeline import plan_observations
    from remnic.observe.transcripts import parse_transcript

    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    settings = ObserveSettings(**{snake(k): v for k, v in case.get("settings", {}).items()})
    source = observe_input(case_dir)
    parsed = parse_transcript(source.read_text(encoding="utf-8"), "auto", source=source.name)
    observations = plan_observations(parsed.turns, session_key=case["sessionKey"], settings=settings, now=case["now"])
    expected = {
        "format": parsed.format,
        "compactions": list(parsed.compactions),
        "turns": [t.to_dict() for t in parsed.turns],
        "observations": [o.to_dict() for o in observations],
    }
    verdicts = [verdict_event(o, case["sessionKey"], ts=case["now"]) for o in observations]
    return {
        "expected.json": (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
        "expected-verdicts.jsonl": "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in verdicts).encode("utf-8"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if anything would change")
    args = parser.parse_args(argv)

    dirs = case_dirs() + observe_case_dirs()
    if args.cases:
        known = {d.name: d for d in dirs}
        missing = [c for c in args.cases if c not in known]
        if missing:
            parser.error(f"unknown case(s): {', '.join(missing)}; known: {', '.join(known)}")
        dirs = [known[c] for c in args.cases]
    if not dirs:
        print(f"no cases found under {GOLDEN_DIR} or {OBSERVE_DIR}", file=sys.stderr)
        return 1

    changed: list[Path] = []
    unchanged = 0
    for case_dir in dirs:
        rendered = render_observe_case(case_dir) if case_dir.parent == OBSERVE_DIR else render_case(case_dir)
        for name, data in rendered.items():
            path = case_dir / name
            old = path.read_bytes() if path.exists() else None
            if old == data:
                unchanged += 1
                continue
            changed.append(path)
            verb = "would " if args.check else ""
            status = "create" if old is None else "update"
            print(f"{verb}{status}: {path.relative_to(ROOT)}")
            if not args.check:
                path.write_bytes(data)

    print(f"{len(changed)} changed, {unchanged} unchanged ({len(dirs)} cases)")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
