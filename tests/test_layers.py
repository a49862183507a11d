"""The layers of docs/ARCHITECTURE.md, enforced: imports point down, surfaces call only the service.

Every ``import`` in ``remnic/`` (module level, inside functions, under TYPE_CHECKING) is
checked against the layer order below. A violation names the file, the line and the rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "remnic"

# Lowest first. A module may import its own package and any lower layer; peers on one
# layer (sync and observe) never import each other.
LAYERS: list[set[str]] = [
    {"errors", "version", "lazy"},
    {"config"},
    {"fsio"},
    {"memfile"},
    {"repo"},
    {"index"},
    {"render"},
    {"recall"},
    {"sync", "observe"},
    {"service"},
    {"drivers"},
    {"server"},
    {"bench"},  # starts a server to measure it
    {"cli"},  # runs the server and the benchmarks
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
SURFACES = {"drivers", "cli", "server", "bench"}
# What a driver or surface may use besides the service: the shared vocabulary.
SURFACE_MAY_IMPORT = {
    "errors",
    "version",
    "lazy",
    "config",
    "fsio",
    "memfile",
    "render",
    "service",
    "drivers",
    "server",
    "bench",
}
# Benchmarks time the layers themselves (seeding the embedding cache, building a snapshot
# alone), so bench may import any lower layer; every other surface goes through the service.
MEASURES_LAYERS = {"bench"}
# Parts of the Memory facade below the service; surfaces must not reach through them.
BELOW_SERVICE_ATTRS = {"ledger", "files", "index", "committer", "indexer"}
ROOT_MODULES = {"__init__", "__main__"}  # the package's face may name the public API


def part_of(module: str) -> str | None:
    """The layer part (``repo``, ``cli``, …) of a dotted module inside remnic, or None outside it."""
    parts = module.split(".")
    if parts[0] != "remnic":
        return None
    return parts[1] if len(parts) > 1 else ""


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".")
        if not is_package:
            parts = parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [base] if node.module or node.level == 0 else [f"{base}.{a.name}" for a in node.names]


def violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """Each import (or reach past the service) in ``source`` that breaks the layer rules, as ``line: why``."""
    here = part_of(module)
    if here is None or here in ROOT_MODULES or here == "":
        return []
    out: list[str] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            targets = _absolute(node, module, is_package)
        elif (
            isinstance(node, ast.Attribute)
            and here in SURFACES - {"bench"}
            and node.attr in BELOW_SERVICE_ATTRS
            and (
                (isinstance(node.value, ast.Name) and node.value.id in ("memory", "mem"))
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "memory")
            )
        ):
            out.append(f"{node.lineno}: {here} reaches past the service through memory.{node.attr}")
        for target in targets:
            there = part_of(target)
            if there is None or there == here or there in ROOT_MODULES:
                continue
            if there == "":
                out.append(f"{node.lineno}: {here} imports the package root (import the layer instead)")
                continue
            if there not in RANK:
                out.append(f"{node.lineno}: {target} is in no layer (add it to docs/ARCHITECTURE.md and LAYERS)")
            elif here in SURFACES - MEASURES_LAYERS and there not in SURFACE_MAY_IMPORT:
                out.append(f"{node.lineno}: {here} is a surface and imports {target} (call the service instead)")
            elif RANK[there] > RANK[here]:
                out.append(f"{node.lineno}: {here} imports {target}, a higher layer")
            elif RANK[there] == RANK[here]:
                out.append(f"{node.lineno}: {here} imports its peer {target}")
    return out


def _modules() -> list[tuple[Path, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if any(p.startswith("_") and p not in ("__init__", "__main__") for p in rel.parts):
            continue
        out.append((path, ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)))
    return out


def test_every_import_points_down_and_surfaces_call_only_the_service() -> None:
    found = []
    for path, module in _modules():
        for problem in violations(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py"):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{problem}")
    assert not found, "layer rules broken (see docs/ARCHITECTURE.md):\n" + "\n".join(found)


def test_every_package_is_a_known_layer() -> None:
    parts = {part_of(module) for _, module in _modules()} - {"", *ROOT_MODULES}
    assert parts <= set(RANK), f"not in any layer: {sorted(parts - set(RANK))}"


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("remnic.repo.files", "from remnic.service.memory import Memory\n", "1: repo imports remnic.service.memory"),
        ("remnic.index.search", "def f():\n    from ..sync import engine\n", "2: index imports remnic.sync"),
        ("remnic.sync.engine", "from remnic.observe import archive\n", "1: sync imports its peer remnic.observe"),
        ("remnic.cli.recall", "from remnic.index.search import SearchIndex\n", "1: cli is a surface"),
        ("remnic.server.api", "def f(memory):\n    return memory.ledger.head()\n", "2: server reaches past"),
    ],
)
def test_a_wrong_import_is_reported_with_its_line(module: str, source: str, expected: str) -> None:
    problems = violations(source, module)
    assert problems and problems[0].startswith(expected), problems


def test_imports_that_follow_the_rules_pass() -> None:
    assert (
        violations("from remnic.memfile.model import MemoryRecord\nfrom .ledger import Ledger\n", "remnic.repo.x") == []
    )
    assert (
        violations("from remnic.service import Memory\nfrom remnic.render.xray import render_xray\n", "remnic.cli.x")
        == []
    )


MAX_MODULE_LINES = 600


def test_no_module_grows_past_600_lines() -> None:
    """A module past ~600 lines becomes a package (docs/ARCHITECTURE.md); tests are held to it too."""
    too_long = []
    for root in (PACKAGE, PACKAGE.parent / "tests"):
        for path in sorted(root.rglob("*.py")):
            if path.is_symlink() or any(part.startswith(("_hooks", "_memory_template")) for part in path.parts):
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                too_long.append(f"{path.relative_to(PACKAGE.parent)}: {lines} lines")
    assert not too_long, "split these into packages or smaller modules:\n" + "\n".join(too_long)
