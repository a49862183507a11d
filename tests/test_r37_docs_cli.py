"""The docs tell the truth, and the CLI says what it does.

- docs/xray.md's Example blocks are what its commands print on the demo repository;
- `update --status active` on a superseded memory names the successor it changed (alsoChanged);
- a usage error under --json is the documented error object, with details;
- `daemon status --json` of a foreground server has no log file; `serve --json` prints what server.md says;
- the leaf commands users most need show examples that parse;
- README's Development tree and ARCHITECTURE name files that exist.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from remnic.cli import build_parser
from remnic.cli.reference import walk

XRAY_DOC = ROOT / "docs" / "xray.md"
CREATED = re.compile(r"created=\S+")


# --------------------------------------------------------------------------- docs/xray.md's Example


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The repository `make demo` builds (remnic/cli/demo.py's steps up to its X-ray), run in this process."""
    base = tmp_path_factory.mktemp("r37demo")
    root = base / "demo-memory"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(base / "home"))  # no developer's config; module scope runs before isolated_home
        for var in [v for v in os.environ if v.startswith("REMNIC_")]:
            mp.delenv(var)
        with resources.as_file(resources.files("remnic") / "data" / "demo.jsonl") as demo_jsonl:
            assert run_cli("init", str(root), "--memory-dir", str(root)).code == 0
            imported = run_cli("import", str(demo_jsonl), "--memory-dir", str(root))
            assert imported.code == 0, imported.err
        edited = next(iter(sorted((root / "facts").glob("*replica-lag*.md"))))  # the demo's hand edit
        edited.write_text(edited.read_text(encoding="utf-8").replace("200ms", "250ms"), encoding="utf-8")
        assert run_cli("sync", "run", "--memory-dir", str(root)).code == 0
        assert run_cli("query", "when do we cut releases?", "--top-k", "3", "--memory-dir", str(root)).code == 0
        yield root


def _example_section() -> str:
    return XRAY_DOC.read_text(encoding="utf-8").split("\n## Example\n", 1)[1].split("\n## ", 1)[0]


def _page_runs(root: Path) -> list[tuple[str, str]]:
    """Each (block, what its command prints) of the Example section, the command as the page writes it."""
    section = _example_section()
    commands = re.findall(r"`(REMNIC_XRAY_CLOCK=\d+ remnic xray [^`]+)`", section)
    blocks = re.findall(r"```\n(.*?)\n```", section, re.DOTALL)
    assert len(commands) == len(blocks) == 2, (commands, len(blocks))
    out = []
    for command, block in zip(commands, blocks, strict=True):
        clock, _, *argv = shlex.split(command)  # REMNIC_XRAY_CLOCK=N remnic xray ...
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("REMNIC_XRAY_CLOCK", clock.split("=", 1)[1])
            printed = run_cli(*argv, "--memory-dir", str(root))
        assert printed.code == 0, printed.err
        out.append((block, printed.out))
    return out


def test_xray_page_example_is_what_its_command_prints_on_the_demo(demo_root: Path) -> None:
    """`created=` is the import's time, the one thing a run changes; every other byte is the page's."""
    (full, printed), (graph, graph_printed) = _page_runs(demo_root)
    assert CREATED.sub("created=…", full + "\n") == CREATED.sub("created=…", printed)
    assert "served-by=graph" in graph  # a contiguous part of the graph query's output
    assert CREATED.sub("created=…", graph) in CREATED.sub("created=…", graph_printed)


# --------------------------------------------------------------------------- L1: update names what it changed


def test_update_active_on_a_superseded_memory_names_the_successor(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    old = run_cli("store", "Port is 1", "--json", "--memory-dir", str(root)).json()
    new = run_cli("store", "Port is 2", "--supersedes", old["id"], "--json", "--memory-dir", str(root)).json()
    revived = run_cli("update", old["id"], "--status", "active", "--json", "--memory-dir", str(root))
    assert revived.code == 0, revived.err
    assert revived.json()["alsoChanged"] == [{"id": new["id"], "path": new["path"], "change": "supersedes-dropped"}]
    assert (
        "supersedes"
        not in json.loads(run_cli("get", new["id"], "--json", "--memory-dir", str(root)).out)["frontmatter"]
    )
    # The other way: --supersedes marks OTHER superseded, said in the text too.
    said = run_cli("update", new["id"], "--supersedes", old["id"], "--memory-dir", str(root))
    assert said.code == 0, said.err
    assert "also changed in that commit:" in said.out
    assert f"{old['id']} ({old['path']}) superseded by {new['id']}" in said.out
    again = run_cli("update", new["id"], "--supersedes", old["id"], "--json", "--memory-dir", str(root)).json()
    assert again["changed"] is False and again["alsoChanged"] == []


# --------------------------------------------------------------------------- L3: usage errors under --json


def test_a_usage_error_under_json_is_the_documented_error_object(tmp_path: Path) -> None:
    bad = run_cli("store", "x", "--category", "facts", "--json", "--memory-dir", str(tmp_path))
    assert bad.code == 2 and bad.out == ""
    error = json.loads(bad.err)
    assert error["code"] == "usage_error" and not error["error"].startswith("remnic")
    detail = error["details"][0]
    assert detail["field"] == "--category" and "unknown category 'facts'" in detail["message"]
    assert "fact" in detail["options"] and "decision" in detail["options"]
    missing = json.loads(run_cli("versions", "revert", "--json").err)
    assert [d["field"] for d in missing["details"]] == ["ID-OR-PATH", "version"]
    unknown = json.loads(run_cli("list", "--limt", "3", "--json").err)
    assert unknown["details"] == [{"field": "--limt", "message": "unrecognized argument; did you mean --limit?"}]
    command = json.loads(run_cli("lst", "--json").err)["details"][0]
    assert command["field"] == "command" and "list" in command["options"]


# --------------------------------------------------------------------------- L4, L6: serve and daemon status


def test_foreground_status_has_no_log_file_and_serve_json_is_as_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "tokens.json"))
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    serve = ["serve", "--memory-dir", str(root), "--port", "0", "--json", "--token", "rmn_r37_docs_0123456789"]
    proc = subprocess.Popen([sys.executable, "-m", "remnic", *serve], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        status = run_cli("daemon", "status", "--memory-dir", str(root), "--json").json()
        assert status["mode"] == "foreground" and status["logFile"] is None
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    documented = re.search(r"`--json` prints one line first, `\{([^}]*)\}`", (ROOT / "docs" / "server.md").read_text())
    assert documented is not None
    assert sorted(k.strip() for k in documented[1].split(",")) == sorted(info)
    assert info["mcp"] == info["url"] + "/mcp" and info["memoryDir"] == str(root.resolve())


# --------------------------------------------------------------------------- L5: examples in --help

EXAMPLED = [
    "versions list",
    "versions show",
    "versions diff",
    "versions revert",
    "token generate",
    "token revoke",
    "token list",
    "space create",
    "space clone",
    "space pull",
    "space push",
    "import",
    "lcm search",
    "get",
    "forget",
    "timeline",
    "status",
    "review approve",
    "review dismiss",
    "review flag",
    "sync watch",
    "entities list",
    "entities show",
]


def _examples(help_text: str) -> list[list[str]]:
    """Each remnic command of the help's examples block (a `# comment` dropped; each `remnic` of a pipeline)."""
    block = help_text.split("\nexamples:\n", 1)[1]
    out: list[list[str]] = []
    for line in block.splitlines():
        if line.startswith("  remnic "):
            words, segment = shlex.split(line, comments=True), []
            for word in [*words, "|"]:
                if word != "|":
                    segment.append(word)
                    continue
                if segment[:1] == ["remnic"]:
                    out.append(segment[1:])
                segment = []
    return out


def test_the_most_needed_commands_show_examples_that_parse() -> None:
    parser = build_parser()
    commands = {" ".join(words): sub for words, sub, _ in walk(parser)}
    for name in EXAMPLED:
        text = commands[name].format_help()
        assert "\nexamples:\n" in text, f"remnic {name} --help has no examples"
        lines = _examples(text)
        assert lines, name
        assert any(argv[: len(name.split())] == name.split() for argv in lines), (name, lines)
        for argv in lines:
            parser.parse_command_line(argv)  # a usage error exits: the test fails on it
    revert = " ".join(commands["versions revert"].format_help().split())
    assert "A version is v1" in revert and "--force over uncommitted edits" in revert  # what --force does to them


# --------------------------------------------------------------------------- L2: the Development tree


def test_the_development_tree_and_architecture_name_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tree = readme.split("## Development", 1)[1].split("```\nremnic/\n", 1)[1].split("```", 1)[0]
    first_columns = [re.split(r"\s{2,}", line.strip())[0] for line in tree.splitlines() if line.startswith("  ")]
    named = {name for column in first_columns for name in column.split()}
    for name in named:
        assert (ROOT / "remnic" / name).exists(), f"README's tree names remnic/{name}, which does not exist"
    top = {p.name for p in (ROOT / "remnic").glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert top <= named, f"README's tree omits {sorted(top - named)}"
    architecture = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert "`config.py`" not in architecture and "config/settings.py" in architecture
