"""python -m remnic.bench [suite ...] [--quick] [--no-write]"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import machine_line, write_section

# Suite name → module under remnic.bench. Order is the order `all` runs them in.
SUITES = {
    "store": "store",
    "locomo": "locomo",
    "pipeline": "pipeline",
    "scale": "scale",
    "xray": "xray",
    "sync": "sync",
    "adopt": "adopt",
    "server": "server",
    "cli": "cli",
    "faults": "faults",
    "spaces": "spaces",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m remnic.bench", description="run remnic benchmarks")
    parser.add_argument("suites", nargs="*", default=["all"], help=f"all, or any of: {', '.join(SUITES)}")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--no-write", action="store_true", help="print only; do not update docs/benchmarks.md")
    args = parser.parse_args(argv)
    names = list(SUITES) if args.suites == ["all"] else args.suites
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(unknown)}; valid options: all, {', '.join(SUITES)}")
    print(f"# remnic benchmarks on {machine_line()}", flush=True)
    for name in names:
        try:
            module = importlib.import_module(f"remnic.bench.{SUITES[name]}")
        except ModuleNotFoundError as exc:
            if exc.name == f"remnic.bench.{SUITES[name]}":
                print(f"\n(skipping {name}: not implemented yet)", flush=True)
                continue
            raise
        print(f"\n== {name} ==", flush=True)
        report = module.run(quick=args.quick)
        print(report.markdown, flush=True)
        if not args.no_write:
            write_section(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
