"""The CLI as users drive it: every command's --help/--json, exit codes, discovery, config."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, run_cli, run_remnic, snapshot_tree

from remnic.cli import build_parser, run
from remnic.service.memory import Memory


def all_commands() -> list[list[str]]:
    """Every command path in the parser, e.g. ['versions', 'diff']."""
    out: list[list[str]] = []

    def walk(parser, prefix: list[str]) -> None:
        for action in parser._actions:  # argparse has no public API for this
            if action.__class__.__name__ == "_SubParsersAction":
                for name, sub in action.choices.items():
                    out.append(prefix + [name])
                    walk(sub, prefix + [name])

    walk(build_parser(), [])
    return out


def test_every_command_has_help_and_json() -> None:
    commands = all_commands()
    names = {" ".join(c) for c in commands}
    for required in (
        "init",
        "store",
        "get",
        "list",
        "import",
        "forget",
        "timeline",
        "status",
        "doctor",
        "config",
        "versions list",
        "versions show",
        "versions diff",
        "versions revert",
    ):
        assert required in names, required
    # One parser for every command's --help (`run` takes a built one, as a server keeps): building it is
    # most of a --help's cost, and each --help reads it without changing it.
    parser = build_parser()
    for command in commands:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
            run([*command, "--help"], parser)
        assert exited.value.code in (0, None), command
        assert "--json" in out.getvalue(), command
    assert run_cli(*commands[-1], "--help").out == out.getvalue()  # as a fresh parser prints it


def test_store_get_list_json_round_trip(memory: Memory) -> None:
    d = str(memory.root)
    stored = run_cli(
        "store",
        "Ana prefers tabs over spaces",
        "--category",
        "preference",
        "--tags",
        "style,editor",
        "--importance",
        "0.8",
        "--memory-dir",
        d,
        "--json",
    )
    assert stored.code == 0, stored.err
    data = stored.json()
    assert data["category"] == "preference" and data["frontmatter"]["tags"] == ["style", "editor"]
    got = run_cli("--json", "get", data["id"], "--memory-dir", d)
    assert got.json()["content"] == "Ana prefers tabs over spaces"
    listed = run_cli("list", "--tag", "style", "--json", "--memory-dir", d).json()
    assert listed["count"] == 1 and listed["memories"][0]["id"] == data["id"]
    assert run_cli("list", "--category", "decision", "--json", "--memory-dir", d).json()["count"] == 0
    text = run_cli("get", data["id"], "--memory-dir", d).out
    assert data["id"] in text and "Ana prefers tabs" in text


def test_store_from_stdin_and_dry_run(memory: Memory) -> None:
    d = str(memory.root)
    result = run_remnic("store", "-", "--category", "fact", "--memory-dir", d, "--json", stdin="Read from stdin\n")
    assert result.code == 0, result.err
    assert result.json()["content"] == "Read from stdin"
    before = snapshot_tree(memory.root)
    dry = run_cli("store", "Not written", "--dry-run", "--memory-dir", d)
    assert dry.code == 0 and "would write facts/not-written.md" in dry.out
    assert snapshot_tree(memory.root) == before


def test_store_dash_with_stdin_closed_is_a_usage_error(memory: Memory) -> None:
    # `remnic store - <&-` gives the process no stdin at all (sys.stdin is None): it crashed
    before = snapshot_tree(memory.root)
    shell = f'"{sys.executable}" -m remnic store - --memory-dir "{memory.root}" <&-'
    result = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "no text on standard input" in result.stderr and "Traceback" not in result.stderr
    assert snapshot_tree(memory.root) == before


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["store", "x", "--category", "musing"], "valid options: fact"),
        (["store", "x", "--confidence", "high"], "--confidence must be a number"),
        (["store", "x", "--importance", "7"], "--importance must be from 0 to 1"),
        (["store", "key AKIAABCDEFGHIJKLMNOP"], "secret"),
        (["store", "x", "--namespace", "../up"], "namespace"),
        (["list", "--status", "deleted"], "valid options: active"),
        (["versions", "list", "../../etc/passwd"], "not a path inside"),
        (["store", ""], "error: TEXT: must not be empty"),
        (["observe", "--session-key", "", "/dev/null"], "error: --session-key: must be"),
    ],
)
def test_usage_errors_exit_2_and_change_nothing(memory: Memory, args: list[str], fragment: str) -> None:
    before = snapshot_tree(memory.root)
    result = run_cli(*args, "--memory-dir", str(memory.root))
    assert result.code == 2, result
    assert fragment in result.err
    assert snapshot_tree(memory.root) == before


def test_a_validation_error_names_the_flag_and_its_json_keeps_the_field(memory: Memory) -> None:
    result = run_cli("store", "", "--json", "--memory-dir", str(memory.root))
    assert result.code == 2
    assert json.loads(result.err)["details"] == [{"field": "content", "message": "must not be empty", "flag": "TEXT"}]


def test_runtime_errors_exit_1_with_json_error(memory: Memory) -> None:
    result = run_cli("get", "mem_nope", "--memory-dir", str(memory.root), "--json")
    assert result.code == 1
    assert json.loads(result.err)["code"] == "not_found"


def test_import_cli_reports_bad_lines_and_writes_nothing(memory: Memory, tmp_path: Path) -> None:
    jsonl = tmp_path / "batch.jsonl"
    lines = [json.dumps({"content": f"fact {i}", "category": "fact"}) for i in range(5)]
    lines.insert(2, "{not json")
    lines.insert(4, "")
    lines.append(json.dumps({"content": "bad", "category": "musing"}))
    jsonl.write_text("\n".join(lines) + "\n")
    before, head = snapshot_tree(memory.root), memory.ledger.head()
    result = run_cli("import", str(jsonl), "--memory-dir", str(memory.root))
    assert result.code == 2
    assert f"{jsonl}:3" in result.err and "invalid JSON" in result.err
    assert f"{jsonl}:8" in result.err and "unknown category 'musing'" in result.err
    assert snapshot_tree(memory.root) == before and memory.ledger.head() == head
    jsonl.write_text("\n".join(json.dumps({"content": f"fact {i}", "tags": ["t"]}) for i in range(5)) + "\n")
    ok = run_cli("import", str(jsonl), "--memory-dir", str(memory.root), "--json")
    assert ok.code == 0 and ok.json()["imported"] == 5
    assert int(git(memory.root, "rev-list", "--count", f"{head}..HEAD")) == 1


def test_versions_cli(memory: Memory) -> None:
    d = str(memory.root)
    rec = memory.store("Lunch is at noon", category="fact").record
    path = memory.root / rec.path
    path.write_text(path.read_text().replace("noon", "1pm"))
    git(memory.root, "commit", "-qam", "later lunch")
    listed = run_cli("versions", "list", rec.path, "--memory-dir", d, "--json").json()
    assert [v["label"] for v in listed["versions"]] == ["v1", "v2"]
    diff = run_cli("versions", "diff", rec.id, "v1", "v2", "--memory-dir", d)
    assert "-Lunch is at noon" in diff.out and "+Lunch is at 1pm" in diff.out
    shown = run_cli("versions", "show", rec.id, "v1", "--memory-dir", d)
    assert "Lunch is at noon" in shown.out
    bad = run_cli("versions", "show", rec.id, "v9", "--memory-dir", d)
    assert bad.code == 2 and "valid versions: v1..v2" in bad.err
    reverted = run_cli("versions", "revert", rec.id, "v1", "--memory-dir", d)
    assert reverted.code == 0
    assert "Lunch is at noon" in path.read_text()
    timeline = run_cli("timeline", rec.id, "--memory-dir", d, "--json").json()
    assert [e["operation"] for e in timeline["events"]] == ["store", "git-commit", "revert"]


def test_versions_of_a_path_the_file_was_moved_from_follow_it_to_where_it_went(memory: Memory) -> None:
    d = str(memory.root)
    rec = memory.store("Lunch is at noon", category="fact").record
    git(memory.root, "mv", rec.path, "facts/lunch.md")
    git(memory.root, "commit", "-qm", "a shorter name")
    for path in (rec.path, "facts/lunch.md"):
        listed = run_cli("versions", "list", path, "--memory-dir", d, "--json").json()["versions"]
        assert [(v["path"], v["deleted"]) for v in listed] == [(rec.path, False), ("facts/lunch.md", False)]
    assert "(deleted)" not in run_cli("versions", "list", rec.path, "--memory-dir", d).out


def test_versions_of_a_deleted_file_name_the_deletion_instead_of_a_git_error(memory: Memory) -> None:
    d = str(memory.root)
    rec = memory.store("Bob Smith leads payments", category="relationship").record
    (memory.root / rec.path).unlink()
    assert run_cli("sync", "run", "--memory-dir", d).code == 0  # v2 is the deletion
    listed = run_cli("versions", "list", rec.path, "--memory-dir", d, "--json").json()
    assert [v["deleted"] for v in listed["versions"]] == [False, True]
    assert "(deleted)" in run_cli("versions", "list", rec.path, "--memory-dir", d).out.splitlines()[2]

    shown = run_cli("versions", "show", rec.path, "v2", "--memory-dir", d)
    assert shown.code == 0 and shown.err == ""
    assert "deleted in this version" in shown.out and f"`remnic versions show {rec.path} v1`" in shown.out
    as_json = run_cli("versions", "show", rec.path, "v2", "--memory-dir", d, "--json").json()
    assert (as_json["deleted"], as_json["content"], as_json["before"]) == (True, "", "v1")
    assert run_cli("versions", "show", rec.path, "v1", "--memory-dir", d, "--json").json()["deleted"] is False

    diff = run_cli("versions", "diff", rec.path, "v1", "v2", "--memory-dir", d)
    assert diff.code == 0 and "(deleted)" not in diff.out.splitlines()[0] and "deleted)" in diff.out.splitlines()[1]
    hunk = diff.out.splitlines()[3:]  # past the ---/+++ labels and the @@ line
    assert hunk and all(line.startswith("-") for line in hunk) and "-Bob Smith leads payments" in hunk

    head = git(memory.root, "rev-parse", "HEAD")
    refused = run_cli("versions", "revert", rec.path, "v2", "--memory-dir", d)
    assert refused.code == 2 and "v2" in refused.err and "deletion" in refused.err
    assert f"`remnic versions revert {rec.path} v1`" in refused.err and "git show" not in refused.err
    assert git(memory.root, "rev-parse", "HEAD") == head and not (memory.root / rec.path).exists()
    restored = run_cli("versions", "revert", rec.path, "v1", "--memory-dir", d)
    assert restored.code == 0 and "Bob Smith leads payments" in (memory.root / rec.path).read_text()


def test_forget_status_doctor(memory: Memory) -> None:
    d = str(memory.root)
    rec = memory.store("Temporary note", category="fact").record
    assert run_cli("forget", rec.id, "--reason", "obsolete", "--memory-dir", d).code == 0
    status = run_cli("status", "--memory-dir", d, "--json").json()
    assert status["counts"]["status"] == {"forgotten": 1}
    (memory.root / "facts" / "bad.md").write_text("---\nstatus: [gone\n---\nx\n")
    doctor = run_cli("doctor", "--memory-dir", d, "--json")
    assert doctor.code == 1
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert checks["memory-files"]["status"] == "fail"
    assert "facts/bad.md:2" in checks["memory-files"]["problems"][0]
    assert checks["python"]["status"] == "ok" and checks["git"]["status"] == "ok"


# --- discovery and config ---


def test_discovery_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> None:
    from remnic.config import load_settings

    repo = tmp_path / "repo"
    Memory.init(repo, settings=load_settings(repo))
    sub = repo / "facts"
    other = tmp_path / "other"
    other.mkdir()
    # nearest ancestor memory repo
    s = load_settings(cwd=sub, env={"HOME": str(isolated_home)})
    assert s.memory_dir == repo and "nearest memory repo" in s.origins["memoryDir"]
    # env beats discovery
    s = load_settings(cwd=sub, env={"HOME": str(isolated_home), "REMNIC_MEMORY_DIR": str(other)})
    assert s.memory_dir == other and s.origins["memoryDir"] == "env REMNIC_MEMORY_DIR"
    # flag beats env
    s = load_settings(str(repo), cwd=other, env={"HOME": str(isolated_home), "REMNIC_MEMORY_DIR": str(other)})
    assert s.memory_dir == repo and s.origins["memoryDir"] == "--memory-dir"
    # config file memoryDir when nothing else applies
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"memoryDir": str(repo), "recall": {"topK": 7}}))
    s = load_settings(cwd=other, env={"HOME": str(isolated_home), "REMNIC_CONFIG_PATH": str(cfg)})
    assert s.memory_dir == repo and "REMNIC_CONFIG_PATH" in s.origins["memoryDir"]
    assert s.recall.top_k == 7 and "REMNIC_CONFIG_PATH" in s.origins["recall.topK"]
    # the default
    s = load_settings(cwd=other, env={"HOME": str(isolated_home)})
    assert s.memory_dir == isolated_home / ".remnic" / "memory" and s.origins["memoryDir"] == "default"


def test_config_layers_and_origins(tmp_path: Path, isolated_home: Path) -> None:
    from remnic.config import load_settings

    repo = tmp_path / "repo"
    Memory.init(repo, settings=load_settings(repo))
    (isolated_home / ".config" / "remnic").mkdir(parents=True)
    (isolated_home / ".config" / "remnic" / "config.json").write_text(json.dumps({"recall": {"topK": 3, "rrfK": 10}}))
    (repo / "remnic.config.json").write_text(json.dumps({"recall": {"top_k": 5}}))
    s = load_settings(cwd=repo / "facts", env={"HOME": str(isolated_home)})
    assert s.recall.top_k == 5 and "memory repo" in s.origins["recall.topK"]
    assert s.recall.rrf_k == 10 and "~/.config" in s.origins["recall.rrfK"]
    assert "recall.mmrLambda" not in s.origins
    result = run_cli("config", "--json", cwd=repo)
    assert result.json()["origins"]["recall.topK"].startswith("./remnic.config.json")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"recall": {"topK": "ten"}}', 'recall.topK: expected an integer, got "ten"'),
        ('{"recall": {"topK": true}}', "recall.topK: expected an integer, got true"),
        ('{"recall": {"topK": null}}', "recall.topK: expected an integer, got null"),
        ('{"recall": {"dates": "yes"}}', 'recall.dates: expected a boolean (true or false), got "yes"'),
        ('{"recall": {"fusion": 3}}', "recall.fusion: expected a string, got 3"),
        ('{"recall": {"fusion": "rff"}}', 'recall.fusion: unknown value "rff" (valid options: rrf, score)'),
        ('{"store": {"include": "notes/**"}}', 'store.include: expected an array, got "notes/**"'),
        ('{"embed": {"threads": false}}', "embed.threads: expected an integer or null, got false"),
        ('{"embed": {"threads": "4"}}', 'embed.threads: expected an integer or null, got "4"'),
        ('{"recal": {}}', "recal: unknown config section; did you mean recall?"),
        ('{"recall": {"topKay": 1}}', "recall.topKay: unknown setting; did you mean topK? (valid options: topK"),
        ('{"recall": ', "invalid JSON"),
    ],
)
def test_bad_config_is_a_clear_usage_error(tmp_path: Path, content: str, fragment: str) -> None:
    cfg = tmp_path / "remnic.config.json"
    cfg.write_text(content)
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2
    assert fragment in result.err and "remnic.config.json" in result.err


def test_config_defaults_are_documented() -> None:
    rows = run_cli("config", "--defaults", "--json").json()
    assert len(rows) > 20
    assert all(r["doc"] for r in rows), [r["key"] for r in rows if not r["doc"]]


def test_init_and_open_from_subdirectory_with_python_m(tmp_path: Path) -> None:
    repo = tmp_path / "my memories"
    assert run_remnic("init", str(repo)).code == 0
    stored = run_remnic("store", "Found from a subfolder", "--json", cwd=repo / "decisions")
    assert stored.code == 0, stored.err
    assert stored.json()["path"] == "facts/found-from-a-subfolder.md"
    proc = subprocess.run([sys.executable, "-m", "remnic", "--version"], capture_output=True, text=True)
    assert proc.stdout.startswith("remnic ")


def test_open_missing_memory_dir_explains(tmp_path: Path) -> None:
    result = run_cli("list", "--memory-dir", str(tmp_path / "nope"))
    assert result.code == 2 and "remnic init" in result.err  # a bad --memory-dir is a bad flag


def test_every_default_passes_the_value_rules_and_every_rule_names_a_setting() -> None:
    from remnic.config import AT_LEAST_ONE, CHOICES, RANGES, USER_ONLY, _check_value, describe_settings

    rows = describe_settings()
    keys = {r["key"] for r in rows}
    for row in rows:
        if row["default"] is not None:
            _check_value(row["key"], row["default"], "defaults")
    assert (AT_LEAST_ONE | set(CHOICES) | set(RANGES) | USER_ONLY) <= keys


@pytest.mark.parametrize(
    ("setting", "fragment"),
    [
        ({"recall": {"fusion": "rff"}}, "valid options: rrf, score"),
        ({"recall": {"mmrLambda": 7}}, "must be from 0 to 1"),
        ({"recall": {"queryAspectWeight": 1.5}}, "recall.queryAspectWeight: must be from 0 to 1"),
        ({"recall": {"replyAlpha": 2}}, "must be from 0 to 1"),
        ({"recall": {"candidates": -3}}, "must be at least 1"),
        ({"recall": {"topK": 0}}, "recall.topK: must be at least 1"),
        ({"recall": {"minSimilarity": 7}}, "recall.minSimilarity: must be from 0 to 1, got 7"),
        ({"recall": {"minSimilarity": -0.5}}, "recall.minSimilarity: must be from 0 to 1, got -0.5"),
        ({"recall": {"queryExpansionMinSimilarity": 4}}, "recall.queryExpansionMinSimilarity: must be from 0 to 1"),
        ({"recall": {"passageBm25Blend": 3}}, "recall.passageBm25Blend: must be from 0 to 1, got 3"),
        ({"recall": {"confidenceFloor": 2}}, "recall.confidenceFloor: must be from 0 to 1"),
        ({"observe": {"topicSimilarityFloor": 1.5}}, "observe.topicSimilarityFloor: must be from 0 to 1, got 1.5"),
        ({"observe": {"duplicateSimilarityFloor": 2}}, "observe.duplicateSimilarityFloor: must be from 0 to 1"),
        ({"recall": {"mmrLambda": 1e999}}, "recall.mmrLambda: must be a finite number, got Infinity"),
    ],
)
def test_out_of_range_config_values_are_refused(tmp_path: Path, setting: dict, fragment: str) -> None:
    (tmp_path / "remnic.config.json").write_text(json.dumps(setting))
    result = run_cli("config", cwd=tmp_path)
    assert result.code == 2 and fragment in result.err and "remnic.config.json" in result.err


def test_every_similarity_share_and_floor_setting_is_bounded_by_one() -> None:
    """A cosine, a share of a score or a floor on one past 1 (or below 0) is a mistake, never a tuning."""
    from remnic.config import _check_value, describe_settings
    from remnic.errors import ValidationError

    fractions = [
        r["key"]
        for r in describe_settings()
        if isinstance(r["default"], float)
        and r["key"].endswith(("Similarity", "Floor", "Overlap", "Ratio", "Confidence", "Alpha", "Lambda", "Blend"))
    ]
    assert {"recall.minSimilarity", "recall.queryExpansionMinSimilarity", "recall.passageBm25Blend"} <= set(fractions)
    for key in fractions:
        _check_value(key, 1.0, "test")
        for bad in (1.01, -0.01):
            with pytest.raises(ValidationError, match="must be from 0 to 1"):
                _check_value(key, bad, "test")


def test_shared_repo_config_cannot_weaken_safety(tmp_path: Path, isolated_home: Path) -> None:
    from remnic.config import load_settings

    repo = tmp_path / "repo"
    Memory.init(repo, settings=load_settings(repo))
    (repo / "remnic.config.json").write_text(
        json.dumps({"namespaces": {"enabled": False}, "server": {"host": "0.0.0.0"}})
    )
    result = run_cli("status", "--memory-dir", str(repo))
    assert result.code == 2 and "can only be set in your own config" in result.err
    (repo / "remnic.config.json").write_text("{}")
    (isolated_home / ".config" / "remnic").mkdir(parents=True)
    (isolated_home / ".config" / "remnic" / "config.json").write_text(json.dumps({"server": {"host": "0.0.0.0"}}))
    assert load_settings(repo, env={"HOME": str(isolated_home)}).server.host == "0.0.0.0"


def test_doctor_reports_a_broken_config_and_keeps_checking(memory: Memory) -> None:
    (memory.root / "remnic.config.json").write_text("{bad")
    result = run_cli("doctor", "--memory-dir", str(memory.root), "--json")
    checks = {c["name"]: c for c in result.json()["checks"]}
    assert result.code == 1 and checks["config"]["status"] == "fail" and "invalid JSON" in checks["config"]["detail"]
    assert checks["memory-files"]["status"] == "ok" and checks["git"]["status"] == "ok"


def test_memory_dir_in_config_expands_tilde_first(tmp_path: Path, isolated_home: Path) -> None:
    from remnic.config import load_settings

    cfg = isolated_home / ".config" / "remnic"
    cfg.mkdir(parents=True)
    (cfg / "config.json").write_text(json.dumps({"memoryDir": "~/mem"}))
    assert load_settings(cwd=tmp_path, env={"HOME": str(isolated_home)}).memory_dir == isolated_home / "mem"
    (cfg / "config.json").write_text(json.dumps({"memoryDir": "relative/mem"}))
    assert load_settings(cwd=tmp_path, env={"HOME": str(isolated_home)}).memory_dir == cfg / "relative" / "mem"


def test_configuration_doc_is_current() -> None:
    from remnic.config import settings_markdown

    doc = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
    assert doc.read_text(encoding="utf-8") == settings_markdown(), "run `make docs` and review the diff"


def test_an_optional_positional_may_follow_options() -> None:
    """argparse alone leaves `DIR` over in `space clone URL --name N DIR` ("unrecognized arguments")."""
    parser = build_parser()
    clone = parser.parse_command_line(["space", "clone", "/src", "--name", "team", "/dst"])
    assert (clone.url, clone.name, clone.dir) == ("/src", "team", "/dst")
    diff = parser.parse_command_line(["versions", "diff", "ID", "--json", "OLD", "NEW"])
    assert (diff.target, diff.old, diff.new, diff.json) == ("ID", "OLD", "NEW", True)
    with pytest.raises(SystemExit) as exited:
        parser.parse_command_line(["space", "clone", "/src", "--name", "team", "/dst", "/more"])
    assert exited.value.code == 2
    with pytest.raises(SystemExit):
        parser.parse_command_line(["space", "clone", "/src", "--name", "team", "--bogus"])
