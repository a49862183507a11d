"""Commands load only what they use: `remnic list` starts without the recall pipeline, the observe rules,
the index or numpy, and `remnic status` (which reads the index) without the pipeline or the observe rules
(each cost every command's start-up before); the packages that export lazily still list and give every
name they export."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from remnic.config import settings_for
from remnic.service import Memory

RULES = ("remnic.recall.pipeline", "remnic.observe.cues", "remnic.observe.extract")
HEAVY = ("numpy", "tantivy", *RULES)


@pytest.mark.parametrize("package", ["remnic.recall", "remnic.index", "remnic.server"])
def test_lazy_packages_list_and_give_every_export(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert name in dir(module), name
        assert getattr(module, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018


def test_list_and_status_start_without_what_they_do_not_use(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        memory.store("The deploy window is Tuesday afternoon")
    script = (
        "import json, sys\n"
        "from remnic.cli import main\n"
        "codes = [main(['list', '--memory-dir', sys.argv[1]])]\n"
        f"listing = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "codes.append(main(['status', '--memory-dir', sys.argv[1]]))\n"
        f"print(json.dumps({{'codes': codes, 'list': listing, 'status': [m for m in {RULES!r} if m in sys.modules]}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"codes": [0, 0], "list": [], "status": []}
