"""Config files as a new user meets them (r36 h3): user-only keys in a cloned project's ./remnic.config.json,
namespace settings checked at load, keys given twice, every problem at once, and clearer messages."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

from remnic.config import USER_ONLY, load_settings
from remnic.errors import ValidationError


def _env(home: Path, **more: str) -> dict[str, str]:
    return {"HOME": str(home), **more}


def _user_config(home: Path, data: object) -> Path:
    path = home / ".config" / "remnic" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def _problems(exc: pytest.ExceptionInfo[ValidationError]) -> dict[str, str]:
    return {p.field: p.message for p in exc.value.problems}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A cloned project: a git work tree that is not a memory repository."""
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


# --- M1: user-only keys in a project's ./remnic.config.json ---

USER_ONLY_VALUES = {
    "server": {"host": "0.0.0.0", "allowedHosts": ["evil.example"]},
    "store": {"scanSecrets": False},
    "embed": {"modelPath": "/tmp/evil.onnx"},
    "recall": {"rerank": "/tmp/evil-reranker"},
}


def test_a_cloned_projects_config_cannot_set_user_only_keys(project: Path, isolated_home: Path) -> None:
    (project / "remnic.config.json").write_text(json.dumps(USER_ONLY_VALUES))  # untracked: a clone brings it alike
    with pytest.raises(ValidationError) as exc:
        load_settings(isolated_home / "mem", cwd=project, env=_env(isolated_home))
    found = _problems(exc)
    wanted = {"server.host", "server.allowedHosts", "store.scanSecrets", "embed.modelPath", "recall.rerank"}
    assert set(found) == wanted and wanted <= USER_ONLY  # every one named at once
    assert all(m.startswith("can only be set in your own config") for m in found.values())
    assert all(str(project) in m for m in found.values())
    assert all(str(project / "remnic.config.json") in (p.path or "") for p in exc.value.problems)
    # a subfolder of the project, and a linked worktree's .git file, count as inside it too
    sub = project / "src"
    sub.mkdir()
    (sub / "remnic.config.json").write_text('{"server": {"host": "0.0.0.0"}}')
    with pytest.raises(ValidationError, match=r"server\.host: can only be set in your own config"):
        load_settings(isolated_home / "mem", cwd=sub, env=_env(isolated_home))
    linked = project.parent / "linked"
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {project}/.git/worktrees/linked\n")
    (linked / "remnic.config.json").write_text('{"store": {"scanSecrets": false}}')
    with pytest.raises(ValidationError, match=r"store\.scanSecrets: can only be set"):
        load_settings(isolated_home / "mem", cwd=linked, env=_env(isolated_home))


def test_what_a_projects_config_may_set_still_applies(project: Path, isolated_home: Path) -> None:
    (project / "remnic.config.json").write_text('{"recall": {"topK": 4}}')
    s = load_settings(isolated_home / "mem", cwd=project, env=_env(isolated_home))
    assert s.recall.top_k == 4 and s.origins["recall.topK"].startswith("./remnic.config.json")


def test_the_users_own_files_may_still_set_user_only_keys(project: Path, tmp_path: Path, isolated_home: Path) -> None:
    _user_config(isolated_home, {"server": {"host": "0.0.0.0"}})
    named = tmp_path / "mine.json"  # outside any repository, named by the user
    named.write_text('{"store": {"scanSecrets": false}}')
    s = load_settings(isolated_home / "mem", cwd=project, env=_env(isolated_home, REMNIC_CONFIG_PATH=str(named)))
    assert s.server.host == "0.0.0.0" and s.store.scan_secrets is False
    # a ./remnic.config.json outside any git work tree is the user's own folder: allowed as before
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "remnic.config.json").write_text('{"server": {"host": "::1"}}')
    assert load_settings(isolated_home / "mem", cwd=plain, env=_env(isolated_home)).server.host == "::1"


def test_serve_says_where_a_non_loopback_host_came_from(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, tmp_path: Path
) -> None:
    import argparse

    from remnic.cli.serve import _host_origin, _warn_if_exposed

    config = _user_config(isolated_home, {"server": {"host": "0.0.0.0"}})
    settings = load_settings(tmp_path / "mem", cwd=tmp_path, env=_env(isolated_home))
    _warn_if_exposed(settings.server.host, _host_origin(argparse.Namespace(host=None), settings))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "binding 0.0.0.0, not loopback" in lines[0]
    assert f"set by server.host in ~/.config/remnic/config.json ({config})" in lines[0]
    _warn_if_exposed("0.0.0.0", _host_origin(argparse.Namespace(host="0.0.0.0"), settings))
    assert "(set by --host)" in capsys.readouterr().err
    _warn_if_exposed("127.0.0.1", "default")
    assert capsys.readouterr().err == ""


# --- M2, M3: namespace settings checked when the config is read ---


@pytest.mark.parametrize("value", ["Bad NS", "../etc", "", "a/b"])
def test_an_invalid_default_namespace_is_refused_at_load_naming_the_key(isolated_home: Path, value: str) -> None:
    path = _user_config(isolated_home, {"namespaces": {"default": value}})
    with pytest.raises(ValidationError) as exc:
        load_settings(isolated_home / "mem", cwd=isolated_home, env=_env(isolated_home))
    (problem,) = exc.value.problems
    assert problem.field == "namespaces.default" and str(path) in (problem.path or "")
    assert "--namespace" not in exc.value.describe()


def test_namespace_policies_are_checked_at_load_with_did_you_mean(isolated_home: Path) -> None:
    policies = {"team": {"readPrincipal": ["alice"], "writePrincipals": "bob"}, "a": 5, "Bad": {}}
    path = _user_config(isolated_home, {"namespaces": {"enabled": True, "policies": policies}})
    with pytest.raises(ValidationError) as exc:
        load_settings(isolated_home / "mem", cwd=isolated_home, env=_env(isolated_home))
    found = _problems(exc)
    assert found["namespaces.policies.team.readPrincipal"] == "unknown key; did you mean readPrincipals?"
    assert found["namespaces.policies.team.writePrincipals"].startswith("must be a list of principal names")
    assert "namespaces.policies.a" in found and "namespaces.policies.Bad" in found
    assert all(str(path) in (p.path or "") for p in exc.value.problems)
    result = run_cli("config", "--memory-dir", str(isolated_home / "mem"), cwd=isolated_home)
    assert result.code == 2 and "did you mean readPrincipals?" in result.err
    doctor = run_cli("doctor", "--json", "--memory-dir", str(isolated_home / "mem"), cwd=isolated_home)
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert checks["config"]["status"] == "fail" and "readPrincipal" in checks["config"]["detail"]


def test_the_server_parses_policies_with_the_config_layers_rule() -> None:
    from remnic.config import NamespaceSettings, namespace_policies
    from remnic.config.rules import NAMESPACE_RE
    from remnic.memfile.schema import NAMESPACE_RE as MEMFILE_NAMESPACE_RE
    from remnic.server.auth import NamespacePolicy

    good = {"team": {"readPrincipals": ["*"], "writePrincipals": ["alice"]}}
    policy = NamespacePolicy(NamespaceSettings(enabled=True, policies=good))
    assert policy.can_write("alice", "team") and not policy.can_write("bob", "team")
    assert namespace_policies(good)[0] == policy.policies
    with pytest.raises(ValidationError, match="invalid namespace policy"):
        NamespacePolicy(NamespaceSettings(enabled=True, policies={"team": {"read": []}}))
    assert NAMESPACE_RE.pattern == MEMFILE_NAMESPACE_RE.pattern  # config keeps its own copy of the rule


# --- M4, M6, M7, L4: the file itself ---


def test_a_key_given_twice_is_refused_naming_it_and_its_lines(isolated_home: Path) -> None:
    path = isolated_home / ".config" / "remnic" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"recall": {"topK": 5},\n "recall": {"budgetChars": 100,\n  "budgetChars": 200}}')
    with pytest.raises(ValidationError) as exc:
        load_settings(isolated_home / "mem", cwd=isolated_home, env=_env(isolated_home))
    lines = {p.field: (p.line, p.message) for p in exc.value.problems}
    assert lines["recall"][0] == 2 and "first on line 1" in lines["recall"][1]
    assert lines["recall.budgetChars"][0] == 3 and "first on line 2" in lines["recall.budgetChars"][1]
    assert f"{path}:2: recall: given twice" in exc.value.describe()


def test_every_problem_of_every_file_is_reported_at_once(project: Path, isolated_home: Path) -> None:
    _user_config(isolated_home, {"recall": {"topK": "five", "budgetChars": -5, "fusion": "bogus"}, "recal": {"x": 1}})
    (project / "remnic.config.json").write_text('{"server": {"host": "0.0.0.0"}, "store": {"scanSecrets": false}}')
    result = run_cli("config", "--json", "--memory-dir", str(isolated_home / "mem"), cwd=project)
    assert result.code == 2
    error = json.loads(result.err)  # an error under --json is on stderr
    fields = [d["field"] for d in error["details"]]
    assert fields == ["recal", "recall.topK", "recall.budgetChars", "recall.fusion", "server.host", "store.scanSecrets"]
    assert error["error"] == "6 problems in the config (each listed below)"
    assert "did you mean recall?" in error["details"][0]["message"]


def test_a_config_path_naming_a_directory_names_the_variable(tmp_path: Path, isolated_home: Path) -> None:
    with pytest.raises(ValidationError) as exc:
        load_settings(tmp_path / "mem", cwd=tmp_path, env=_env(isolated_home, REMNIC_CONFIG_PATH=str(tmp_path)))
    (problem,) = exc.value.problems
    assert problem.field == "REMNIC_CONFIG_PATH" and "point REMNIC_CONFIG_PATH at a JSON config file" in problem.message
    assert "remove or rename" not in problem.message


def test_invalid_json_names_line_and_column(isolated_home: Path) -> None:
    path = isolated_home / ".config" / "remnic" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"recall": {"topK": 5},\n  "store" {}}')
    with pytest.raises(ValidationError) as exc:
        load_settings(isolated_home / "mem", cwd=isolated_home, env=_env(isolated_home))
    assert exc.value.describe() == f"{path}:2: config: invalid JSON at column 11: Expecting ':' delimiter"


# --- L11, L12: values accepted without a word before ---


@pytest.mark.parametrize(
    ("section", "values", "field", "words"),
    [
        ("store", {"extensions": []}, "store.extensions", "must name at least one extension"),
        ("store", {"extensions": [".md", "md"]}, "store.extensions[1]", 'did you mean ".md"?'),
        ("store", {"extensions": ["."]}, "store.extensions[0]", "is not a file extension"),
        ("server", {"host": "not a host!"}, "server.host", "is not an IP address or host name"),
        ("server", {"host": ""}, "server.host", "is not an IP address or host name"),
        ("spaces", {"remote": ""}, "spaces.remote", "must name a git remote"),
    ],
)
def test_values_that_meant_something_else_are_refused(
    isolated_home: Path, section: str, values: dict[str, object], field: str, words: str
) -> None:
    _user_config(isolated_home, {section: values})
    with pytest.raises(ValidationError) as exc:
        load_settings(isolated_home / "mem", cwd=isolated_home, env=_env(isolated_home))
    assert words in _problems(exc)[field]


def test_hosts_and_extensions_that_are_fine_still_load(isolated_home: Path) -> None:
    for host in ("127.0.0.1", "::", "[::1]", "localhost", "box.example.org", "0.0.0.0"):
        _user_config(isolated_home, {"server": {"host": host}, "store": {"extensions": [".md", ".MDX"]}})
        s = load_settings(isolated_home / "mem", cwd=isolated_home, env=_env(isolated_home))
        assert s.server.host == host and s.store.extensions == [".md", ".MDX"]


def test_an_empty_memory_dir_is_refused_not_read_as_the_default(isolated_home: Path) -> None:
    _user_config(isolated_home, {"memoryDir": ""})
    with pytest.raises(ValidationError, match=r"memoryDir: is empty: name a directory"):
        load_settings(cwd=isolated_home, env=_env(isolated_home))


# --- L3: `remnic config` names the files it read ---


def test_config_text_lists_the_files_read(isolated_home: Path, tmp_path: Path) -> None:
    config = _user_config(isolated_home, {"recall": {"topK": 3}})
    out = run_cli("config", "--memory-dir", str(tmp_path / "mem"), cwd=tmp_path).out.splitlines()
    assert out[:2] == ["config files read (lowest precedence first):", f"  ~/.config/remnic/config.json ({config})"]
    assert any(line.startswith("recall.topK = 3    (~/.config") for line in out)
    config.unlink()
    out = run_cli("config", "--memory-dir", str(tmp_path / "mem"), cwd=tmp_path).out.splitlines()
    assert out[:2] == ["config files read (lowest precedence first):", "  none (defaults only)"]


# --- r36 verification: comment keys, the named file read once, a blank --host ---


def test_repeated_comment_keys_still_load(isolated_home: Path) -> None:
    path = isolated_home / ".config" / "remnic" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"_comment": "a", "_comment": "b", "recall": {"_comment": "c", "_comment": "d", "topK": 7}}')
    settings = load_settings(isolated_home / "mem", cwd=isolated_home, env=_env(isolated_home))
    assert settings.recall.top_k == 7
    path.write_text('{"recall": {"topK": 5}, "recall": {"budgetChars": 100}}')  # a real key twice: still refused
    with pytest.raises(ValidationError, match="given twice"):
        load_settings(isolated_home / "mem", cwd=isolated_home, env=_env(isolated_home))


def test_the_file_named_by_remnic_config_path_is_read_once_as_the_users(project: Path, isolated_home: Path) -> None:
    (project / "remnic.config.json").write_text(json.dumps({"server": {"host": "0.0.0.0"}}))
    env = _env(isolated_home, REMNIC_CONFIG_PATH="./remnic.config.json")
    settings = load_settings(isolated_home / "mem", cwd=project, env=env)  # named by the user: allowed
    assert settings.server.host == "0.0.0.0"


def test_a_blank_host_flag_is_refused(isolated_home: Path) -> None:
    res = run_cli("serve", "--host", " ", "--port", "0", "--memory-dir", str(isolated_home / "mem"))
    assert res.code == 2 and "--host: must name an interface" in res.err
