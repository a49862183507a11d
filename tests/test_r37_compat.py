"""Files and exports the original Remnic wrote, read as the original reads them.

- free text it writes unquoted (``intentGoal: fix issue #570 before launch``, ``yes``, ``0123``,
  ``12:30``, ``null``) is its text, not YAML's reading of it; numbers it reads as numbers stay numbers;
  the file is not rewritten, and remnic's own files read as YAML as before;
- an entity page named with letters beyond ASCII (``person-josé-núñez.md``) has that id over the CLI,
  HTTP and MCP; ids never admit ``/``, ``\\``, ``..`` beside such letters, control characters or a
  leading ``-``/``.``;
- a missing ``confidence`` is the original's 0.8 in its files;
- the summary keys ``created``/``updated`` of an epoch time are its ISO form;
- ``import --namespace`` restores a bundle under that namespace; a Windows record path and a missing or
  foreign manifest are refused, saying so.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import original_remnic as original
import pytest
from conftest import run_cli
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_server_http import Resp, request

from remnic.config import settings_for
from remnic.memfile.model import ID_RE, parse_file
from remnic.server import Api, Authenticator, TokenStore
from remnic.server.http import running_server
from remnic.service.memory import Memory

RAW_KEYS = {
    "intentGoal": "fix issue #570 before launch",
    "intentActionType": "yes",
    "sourceTurnId": "0123",
    "sourceMemoryId": "12:30",
    "artifactType": "null",
}
YAML_FILE = "facts/2026-05-01/fact-1777629600300-yaml.md"
NO_CONFIDENCE = "preferences/2026-05-01/preference-1777629600002-noco.md"
EPOCH_FILE = "facts/2026-05-01/fact-1777629600400-epch.md"
OWN_FILE = "facts/own-yaml.md"
ENTITY = "person-josé-núñez"


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _fm(mid: str, **more: Any) -> dict[str, Any]:
    fm: dict[str, Any] = {
        "id": mid,
        "category": mid.split("-", 1)[0],
        "created": "2026-05-01T10:00:00.000Z",
        "updated": "2026-05-01T10:00:00.000Z",
        "source": "extraction",
        "confidence": 0.9,
        "confidenceTier": "implied",
        "tags": ["ops"],
    }
    fm.update(more)
    return fm


def original_directory(root: Path) -> None:
    yaml_fm = _fm("fact-1777629600300-yaml", accessCount=7, flagged=True, importanceScore=0.7, **RAW_KEYS)
    _write(root, YAML_FILE, original.write(yaml_fm, "The launch checklist lives in the ops wiki."))
    no_conf = {k: v for k, v in _fm("preference-1777629600002-noco").items() if not k.startswith("confidence")}
    _write(root, NO_CONFIDENCE, original.write(no_conf, "The user prefers short stand-ups."))
    epoch = _fm("fact-1777629600400-epch", created=1778740000000, updated=1778740000)
    _write(root, EPOCH_FILE, original.write(epoch, "The billing export runs nightly at two."))
    # remnic's own file (its id is remnic's): plain YAML, as always.
    _write(
        root,
        OWN_FILE,
        "---\nid: mem_0190a1b2c3d4e5f60718\ncategory: fact\nstatus: active\nmood: yes\n"
        "created: 2026-05-01T10:00:00.000Z\nupdated: 2026-05-01T10:00:00.000Z\n---\n\nThe cafe opens at eight.\n",
    )
    entity = (
        "---\ncreated: 2026-03-02T15:04:11.120Z\nupdated: 2026-05-10T08:00:00.000Z\n"
        'synthesis_updated_at: "2026-05-10T08:00:00.000Z"\nsynthesis_version: 1\n---\n\n'
        "# José Núñez\n\n**Type:** person\n\n## Synthesis\n\nJosé runs the payments on-call rotation.\n"
    )
    _write(root, f"entities/{ENTITY}.md", entity)


@dataclass
class Env:
    root: Path
    memory: Memory
    port: int
    url: str
    token: str
    before: dict[str, str]

    def get(self, path: str) -> Resp:
        return request(self.port, "GET", path, token=self.token)


def _digests(root: Path) -> dict[str, str]:
    names = (YAML_FILE, NO_CONFIDENCE, EPOCH_FILE, OWN_FILE, f"entities/{ENTITY}.md")
    return {n: hashlib.sha256((root / n).read_bytes()).hexdigest() for n in names}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    base = tmp_path_factory.mktemp("r37compat")
    root = base / "mem"
    root.mkdir()
    original_directory(root)
    before = _digests(root)
    assert run_cli("init", str(root)).code == 0
    with served(base, root) as (memory, server, token):
        yield Env(root, memory, server.server_address[1], server.url, token, before)


@contextmanager
def served(base: Path, root: Path) -> Iterator[tuple[Memory, Any, str]]:
    """``root`` synced as a user would, then served on 127.0.0.1 with one token (alice's)."""
    synced = run_cli("sync", "run", "--memory-dir", str(root))
    assert synced.code == 0, synced.out + synced.err
    memory = Memory.open(settings=settings_for(root))
    store = TokenStore(base / "secrets" / "tokens.json")
    token, _ = store.generate("alice")
    try:
        with running_server(Api(memory), Authenticator(store)) as server:
            yield memory, server, token
    finally:
        memory.close()


# --- M1: the original's free text is its text ---


def test_free_text_the_original_writes_unquoted_is_read_as_its_text(env: Env) -> None:
    cli = run_cli("get", "fact-1777629600300-yaml", "--json", "--memory-dir", str(env.root))
    assert cli.code == 0, cli.err
    fm = cli.json()["frontmatter"]
    assert {k: fm[k] for k in RAW_KEYS} == RAW_KEYS
    theirs = original.read((env.root / YAML_FILE).read_text())
    assert theirs is not None and {k: theirs[k] for k in RAW_KEYS} == RAW_KEYS
    # What the original reads as numbers and booleans, and remnic's values, stay typed.
    assert (fm["confidence"], fm["accessCount"], fm["importanceScore"], fm["flagged"]) == (0.9, 7, 0.7, True)
    assert fm["tags"] == ["ops"]
    served = env.get("/engram/v1/memories/fact-1777629600300-yaml").json()
    served_fm = served.get("memory", served).get("frontmatter") or served["frontmatter"]
    assert {k: served_fm[k] for k in RAW_KEYS} == RAW_KEYS


def test_remnics_own_files_still_read_as_yaml_and_nothing_was_rewritten(env: Env) -> None:
    own = env.memory.get("mem_0190a1b2c3d4e5f60718")
    assert own.frontmatter["mood"] is True and own.confidence == 0.9
    assert _digests(env.root) == env.before


def test_an_update_keeps_the_raw_lines_and_reads_back_the_same(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    _write(root, YAML_FILE, original.write(_fm("fact-1777629600300-yaml", **RAW_KEYS), "Launch checklist."))
    assert run_cli("init", str(root)).code == 0
    done = run_cli("update", "fact-1777629600300-yaml", "--tags", "ops,launch", "--memory-dir", str(root))
    assert done.code == 0, done.err
    text = (root / YAML_FILE).read_text()
    for key, value in RAW_KEYS.items():
        assert f"\n{key}: {value}\n" in text
    again = parse_file(text, YAML_FILE).frontmatter
    assert {k: again[k] for k in RAW_KEYS} == RAW_KEYS and again["tags"] == ["ops", "launch"]


def test_the_line_reader_for_invalid_yaml_keeps_the_text_too() -> None:
    text = original.write(_fm("fact-1777629600301-colo", intentGoal="ship: the release", intentActionType="no"), "x")
    fm = parse_file(text, "facts/x.md").frontmatter
    assert fm["intentGoal"] == "ship: the release" and fm["intentActionType"] == "no"


# --- M2: an entity page with letters beyond ASCII ---


def test_an_accented_entity_page_has_the_originals_id_everywhere(env: Env) -> None:
    listed = run_cli("list", "--json", "--memory-dir", str(env.root)).json()["memories"]
    assert {m["path"]: m["id"] for m in listed}[f"entities/{ENTITY}.md"] == ENTITY
    got = run_cli("get", ENTITY, "--json", "--memory-dir", str(env.root))
    assert got.code == 0 and got.json()["path"] == f"entities/{ENTITY}.md", got.err
    resp = env.get("/engram/v1/memories/" + quote(ENTITY))
    assert resp.status == 200, resp.raw
    assert ENTITY in resp.raw.decode("utf-8")

    async def via_mcp() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {env.token}"}, timeout=30)
        async with Client(streamable_http_client(env.url + "/mcp", http_client=http)) as client:
            return await client.call_tool("remnic.memory_get", {"memoryId": ENTITY})

    result = asyncio.run(asyncio.wait_for(via_mcp(), timeout=60))
    assert not result.is_error, result
    assert json.loads(result.content[0].text)["memory"]["path"] == f"entities/{ENTITY}.md"


@pytest.mark.parametrize(
    "good", ["person-josé-núñez", "person-jose\u0301", "person-अमित", "fact-1777629600300-yaml", "a:b.c_d"]
)
def test_ids_of_any_script_are_ids(good: str) -> None:
    assert ID_RE.match(good)


@pytest.mark.parametrize(
    "bad", ["josé/x", "josé\\x", "josé..x", "-josé", ".josé", "_josé", "jos\u00e9 x", "jos\u00e9\x00", "jo\u200bsé", ""]
)
def test_unsafe_ids_stay_refused(bad: str, env: Env) -> None:
    assert not ID_RE.match(bad)
    assert env.get("/engram/v1/memories/" + quote(bad, safe="")).status in (400, 404)


# --- L1: a missing confidence ---


def test_a_missing_confidence_is_the_originals_0_8_in_its_files(env: Env) -> None:
    assert env.memory.get("preference-1777629600002-noco").confidence == 0.8
    theirs = original.read((env.root / NO_CONFIDENCE).read_text())
    assert theirs is not None and theirs["confidence"] == 0.8


# --- L4: summary times ---


def test_epoch_times_give_iso_summary_keys(env: Env) -> None:
    listed = env.get("/engram/v1/memories?limit=50").json()
    found = next(m for m in listed["memories"] if m["id"] == "fact-1777629600400-epch")
    assert (found["created"], found["updated"]) == ("2026-05-14T06:26:40.000Z", "2026-05-14T06:26:40.000Z")
    assert found["frontmatter"]["created"] == 1778740000000  # the file's value is kept as written


# --- M3, L2, L3: the original's export bundle ---


def _bundle(tmp: Path, records: list[dict[str, str]], manifest: Any = "default") -> Path:
    out = tmp / "export"
    out.mkdir()
    if manifest == "default":
        manifest = {"format": "openclaw-engram-export", "schemaVersion": 2, "files": []}
    data: dict[str, Any] = {"records": records} if manifest is None else {"manifest": manifest, "records": records}
    (out / "bundle.json").write_text(json.dumps(data, indent=2))
    return out


def _record(path: str, mid: str, text: str) -> dict[str, str]:
    return {"path": path, "content": original.write(_fm(mid), text)}


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    assert run_cli("init", str(root)).code == 0
    return root


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository for the imports that are refused (they write nothing)."""
    root = tmp_path_factory.mktemp("refusing") / "mem"
    assert run_cli("init", str(root)).code == 0
    return root


def test_import_namespace_restores_a_bundle_under_that_namespace(fresh: Path, tmp_path: Path) -> None:
    rec = _record("facts/2026-05-01/fact-1777629600500-team.md", "fact-1777629600500-team", "Team standup is 9:30.")
    bundle = _bundle(tmp_path, [rec, {"path": "state/meta.json", "content": "{}"}])
    done = run_cli("import", str(bundle), "--namespace", "team", "--json", "--memory-dir", str(fresh))
    assert done.code == 0, done.err
    target = fresh / "namespaces/team/facts/2026-05-01/fact-1777629600500-team.md"
    assert target.read_text() == rec["content"]
    team = run_cli("list", "--namespace", "team", "--json", "--memory-dir", str(fresh)).json()
    assert [m["id"] for m in team["memories"]] == ["fact-1777629600500-team"]


def test_import_namespace_refuses_a_record_already_in_a_namespace(refusing: Path, tmp_path: Path) -> None:
    rec = _record("namespaces/research/facts/fact-1777629600501-rsch.md", "fact-1777629600501-rsch", "Research.")
    done = run_cli("import", str(_bundle(tmp_path, [rec])), "--namespace", "team", "--memory-dir", str(refusing))
    assert done.code == 2 and "records[0].path" in done.err and "--namespace" in done.err
    assert not (refusing / "namespaces").exists()


def test_a_windows_record_path_is_refused_naming_it(refusing: Path, tmp_path: Path) -> None:
    rec = _record("facts\\2026-05-01\\fact-1777629600502-win1.md", "fact-1777629600502-win1", "Printers.")
    done = run_cli("import", str(_bundle(tmp_path, [rec])), "--memory-dir", str(refusing))
    assert done.code == 2, done.out
    assert "records[0].path" in done.err and "'\\' as a separator" in done.err


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        (None, "manifest: is missing"),
        ({"format": "something-else", "schemaVersion": 1}, "manifest.format: is 'something-else', expected"),
    ],
)
def test_a_bundle_without_the_originals_manifest_says_so(
    refusing: Path, tmp_path: Path, manifest: Any, said: str
) -> None:
    rec = _record("facts/2026-05-01/fact-1777629600503-nman.md", "fact-1777629600503-nman", "No manifest.")
    done = run_cli("import", str(_bundle(tmp_path, [rec], manifest)), "--memory-dir", str(refusing))
    assert done.code == 2 and said in done.err, done.err
    assert "content: is required" not in done.err
