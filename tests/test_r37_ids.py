"""Memory ids beyond ASCII: one spelling per id, nothing invisible in one; entity folders and nulls.

- ids compare in Unicode NFC: an id imported decomposed (``cafe\\u0301-1``) is the memory ``café-1``, a
  second memory whose id differs only in normalisation is refused, and the original's entity page saved
  with a decomposed (macOS) file name is found by the precomposed id its ``entityRef`` names — on the CLI
  and over HTTP; the file keeps its name;
- default-ignorable characters (Hangul fillers, variation selectors, the grapheme joiner, soft hyphen…)
  and a mark that follows no letter are refused in ids;
- a remnic file with an ``id`` in an ``entities/`` folder reads as YAML; a null remnic writes into a file
  with the original's id reads back as null.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import run_cli
from test_r37_compat import served
from test_server_http import request

from remnic.memfile.model import ID_RE, parse_file

NFC = "person-zo\u00eb-ng"
NFD = unicodedata.normalize("NFD", NFC)
ENTITY_PAGE = (
    "---\ncreated: 2026-03-02T15:04:11.120Z\nupdated: 2026-05-10T08:00:00.000Z\n"
    'synthesis_updated_at: "2026-05-10T08:00:00.000Z"\n---\n\n'
    "# Zoë Ng\n\n**Type:** person\n\n## Synthesis\n\nZoë runs the billing on-call rotation.\n"
)
OWN_ENTITY = (
    "---\nid: mem_0190a1b2c3d4e5f60799\ncategory: entity\nstatus: active\nnote: runs deploy #2 on fridays\n"
    "oncall: yes\nexpiresAt: ~\ncreated: 2026-05-01T10:00:00.000Z\nupdated: 2026-05-01T10:00:00.000Z\n---\n\n"
    "Deploy captain.\n"
)


@dataclass
class Env:
    root: Path
    port: int
    token: str


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    base = tmp_path_factory.mktemp("r37ids")
    root = base / "mem"
    (root / "entities").mkdir(parents=True)
    (root / "entities" / f"{NFD}.md").write_text(ENTITY_PAGE, encoding="utf-8")
    (root / "entities" / "own-entity.md").write_text(OWN_ENTITY, encoding="utf-8")
    assert run_cli("init", str(root)).code == 0
    lines = [
        {"id": "caf\u00e9-1", "content": "Precomposed id memory about the alpha cluster."},
        {"id": "fact-1777629600300-nul1", "content": "Null roundtrip with an original-shaped id.", "intentGoal": None},
    ]
    (base / "l.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    imported = run_cli("import", str(base / "l.jsonl"), "--memory-dir", str(root))
    assert imported.code == 0, imported.out + imported.err
    with served(base, root) as (_memory, server, token):
        yield Env(root, server.server_address[1], token)


def _get(env: Env, memory_id: str) -> dict:
    got = run_cli("get", memory_id, "--json", "--memory-dir", str(env.root))
    assert got.code == 0, got.err
    return got.json()


def test_both_spellings_of_an_id_name_one_memory_and_a_second_one_is_refused(env: Env, tmp_path: Path) -> None:
    decomposed = unicodedata.normalize("NFD", "caf\u00e9-1")
    for text in ("person-jos\u00e9-n\u00fa\u00f1ez", "ne\u0323\u0302m", decomposed):
        assert ID_RE.match(text)  # accented ids, precomposed or not, stay admitted
    assert _get(env, decomposed)["id"] == "caf\u00e9-1"
    assert _get(env, "caf\u00e9-1")["content"].startswith("Precomposed")
    line = tmp_path / "dup.jsonl"
    line.write_text(json.dumps({"id": decomposed, "content": "Decomposed id memory about the beta cluster."}) + "\n")
    again = run_cli("import", str(line), "--memory-dir", str(env.root))
    assert again.code != 0
    assert "already exists" in again.err and "NFC" in again.err, again.err
    both = tmp_path / "both.jsonl"
    both.write_text(
        json.dumps({"id": "n\u00e9e-2", "content": "One."})
        + "\n"
        + json.dumps({"id": "ne\u0301e-2", "content": "Two."})
        + "\n"
    )
    twice = run_cli("import", str(both), "--memory-dir", str(env.root))
    assert twice.code != 0 and "used again (first on line 1)" in twice.err, twice.err


def test_an_entity_page_with_a_decomposed_file_name_is_found_by_the_precomposed_id(env: Env) -> None:
    assert _get(env, NFC)["id"] == NFC
    assert _get(env, NFD)["id"] == NFC
    for spelling in (NFC, NFD):
        resp = request(env.port, "GET", f"/remnic/v1/memories/{quote(spelling)}", token=env.token)
        assert resp.status == 200, resp.body
    assert (env.root / "entities" / f"{NFD}.md").exists()  # the file keeps its name
    assert (env.root / "entities" / f"{NFD}.md").read_text(encoding="utf-8") == ENTITY_PAGE


@pytest.mark.parametrize(
    "text",
    [
        "pay\u034fpal",
        "pay\u3164pal",
        "pay\u115fpal",
        "pay\u1160pal",
        "pay\uffa0pal",
        "payp\ufe0fal",
        "pay\u17b4pal",
        "pay\u180bpal",
        "pay\U000e0100pal",
        "pay-\u0301pal",
    ],
)
def test_invisible_characters_are_not_admitted_in_ids(text: str) -> None:
    assert not ID_RE.match(text)
    assert record_id_of(f"entities/person-{text}.md").startswith("mem_p")


def record_id_of(path: str) -> str:
    return parse_file("---\ncreated: 2026-03-02T15:04:11.120Z\n---\n\n# X\n", path).id


def test_remnic_own_entity_memory_reads_as_yaml(env: Env) -> None:
    fm = _get(env, "mem_0190a1b2c3d4e5f60799")["frontmatter"]
    assert fm["note"] == "runs deploy"  # YAML cuts the comment, as in any remnic file
    assert fm["oncall"] is True
    assert fm["expiresAt"] is None


def test_a_null_remnic_writes_into_an_original_id_file_reads_back_as_null(env: Env) -> None:
    fm = _get(env, "fact-1777629600300-nul1")["frontmatter"]
    assert fm.get("intentGoal") is None
    exported = run_cli("export", "--memory-dir", str(env.root))
    assert exported.code == 0, exported.err
    rows = {d["id"]: d for d in map(json.loads, exported.out.splitlines()) if "id" in d}
    assert rows["fact-1777629600300-nul1"].get("intentGoal") is None
