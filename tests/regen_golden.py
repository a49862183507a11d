#!/usr/bin/env python3
"""Regenerate the Recall X-ray golden files ON PURPOSE.

    python tests/regen_golden.py            # rewrite changed expected.* files
    python tests/regen_golden.py --check    # only report; exit 1 if any differ
    python tests/regen_golden.py full null  # limit to some cases

For every ``golden/xray/<case>/snapshot.json`` this renders the snapshot in
each format and writes ``expected.txt`` / ``expected.md`` / ``expected.json``
next to it, printing which files changed. This is the ONLY thing that writes
golden files: the tests never do. Review the diff (``git diff golden/``)
before committing.

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if anything would change")
    args = parser.parse_args(argv)

    dirs = case_dirs()
    if args.cases:
        known = {d.name: d for d in dirs}
        missing = [c for c in args.cases if c not in known]
        if missing:
            parser.error(f"unknown case(s): {', '.join(missing)}; known: {', '.join(known)}")
        dirs = [known[c] for c in args.cases]
    if not dirs:
        print(f"no cases found under {GOLDEN_DIR}", file=sys.stderr)
        return 1

    changed: list[Path] = []
    unchanged = 0
    for case_dir in dirs:
        for name, data in render_case(case_dir).items():
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
