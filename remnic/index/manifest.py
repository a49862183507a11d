"""Index state on disk: where the live build is, and the manifest describing it.

Layout under ``<memory>/.remnic/`` (git-ignored, rebuildable)::

    embeddings.sqlite        content-hash → vector cache (survives rebuilds)
    index/CURRENT            name of the live build directory, replaced atomically
    index/<build>/catalog.sqlite   rows, vectors and the manifest (table ``meta``)
    index/<build>/tantivy/         the BM25 index
    index/<build>/tantivy-passages/  long memories' passages as BM25 documents
    index/<build>/manifest.json    a human-readable copy of the manifest

A rebuild writes a new build directory and then swaps ``CURRENT``, so a reader
in another process never sees a half-built index: it keeps its open build until
it notices the new name, then reopens.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from remnic.fsio import write_atomic
from remnic.repo.journal import unusable_folder

SCHEMA_VERSION = 15  # 3: dates named in the text (catalog, tantivy dated/months); 4: passages of long memories;
# 5: memories waiting for their vectors (catalog table pending_vectors); 6: passages as BM25 documents;
# 7: the vocabulary's word vectors (catalog table vocab); 8: observed sessions as episodes, said order,
# observed facts' context vectors the mean of their window's sentence vectors; 9: a note's file name in its
# BM25 title (text.name_title); 10: dates read by the wider rules (ranges, seasons with a year, "Aug. 2023",
# the writer's own day) and the vectors' width recorded (``dim``); 11: runs of CJK characters indexed
# as overlapping bigrams (text.cjk_bigrams), so a word inside an unspaced sentence has a term
# 12: and their characters (text.cjk_unigrams), so a one-character word has a term
# 13: emoji and other symbols (Unicode So) as terms of their own (text.symbols), in every text field
# 14: ids and values of the original Remnic's files read its way (accented entity ids, raw free text)
# 15: text analysed in its normal form (text.normal_form: NFC, half-width katakana, Turkish İ as I)
"""Bump when the catalog/tantivy layout or the meaning of indexed fields changes."""

CURRENT_FILE = "CURRENT"
CATALOG_FILE = "catalog.sqlite"
TANTIVY_DIR = "tantivy"
MANIFEST_JSON = "manifest.json"
EMBEDDINGS_FILE = "embeddings.sqlite"


@dataclass
class Manifest:
    """What the live index reflects; stored in the catalog so it changes atomically with the rows."""

    schema_version: int = SCHEMA_VERSION
    model_id: str = ""
    fingerprint: str = ""
    """Hash of the settings that change what is indexed (neighbour window, chunking)."""
    commit: str | None = None
    """The git commit whose tree the index reflects; None when unknown (a partial index)."""
    generation: int = 0
    """Bumped by every change, so readers in other processes notice it cheaply."""
    count: int = 0
    pending: str = ""
    """``pid:time`` while a writer is between the tantivy commit and the catalog commit."""
    built_at: str = ""
    updated_at: str = ""
    vectors_pending: int = 0
    """Memories indexed for BM25 whose vectors are still to be computed (a deferred first adoption)."""
    dim: int = 0
    """The vectors' width; 0 when unknown (an index built before it was recorded). A model of another
    width under the same pinned ``embed.modelId`` is a model mismatch, never vectors misread."""

    @classmethod
    def from_meta(cls, meta: Mapping[str, str]) -> Manifest:
        out = cls()
        for f in fields(cls):
            if f.name not in meta:
                continue
            raw = meta[f.name]
            if f.name in ("schema_version", "generation", "count", "vectors_pending", "dim"):
                try:
                    setattr(out, f.name, int(raw))
                except (TypeError, ValueError):
                    setattr(out, f.name, -1)
            elif f.name == "commit":
                out.commit = raw or None
            else:
                setattr(out, f.name, raw or "")
        return out

    def to_meta(self) -> dict[str, str]:
        return {k: ("" if v is None else str(v)) for k, v in asdict(self).items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "schemaVersion": self.schema_version,
            "modelId": self.model_id,
            "fingerprint": self.fingerprint,
            "commit": self.commit,
            "generation": self.generation,
            "count": self.count,
            "builtAt": self.built_at,
            "updatedAt": self.updated_at,
            "vectorsPending": self.vectors_pending,
            "dim": self.dim,
        }


def fingerprint(values: Mapping[str, Any]) -> str:
    blob = json.dumps(dict(values), sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def index_root(state_dir: Path) -> Path:
    return state_dir / "index"


def index_root_problem(root: Path) -> str | None:
    """Why no index can be built at ``root`` (one line naming the path and the cure), else None: something
    else than a folder in its place, a link to nothing (never followed to make a folder outside the
    repository), or a folder where the ``CURRENT`` file belongs. A few stats: checked when there is no
    live build, so a recall that cannot have an index finds out at once, without rebuilding."""
    said = unusable_folder(root, "its search index")
    if said is not None:
        return said
    current = root / CURRENT_FILE
    if current.is_dir() and not current.is_symlink():
        return (
            f"{current} is a folder, not the file naming the live index build; move it out of the index "
            f"(mv {shlex.quote(str(current))} {shlex.quote(str(root.parent / 'index-CURRENT.bak'))}) "
            "and run the command again"
        )
    return None


_BUILD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""What a live build's name may be (``new_build_name`` makes ``build-NNNNNN-hex``): anything else in
``CURRENT`` (bytes that are not UTF-8, a name longer than a file name may be, a path) is a damaged file."""


def _current_text(root: Path) -> tuple[str | None, str | None]:
    """(the build name ``CURRENT`` holds, why it holds none that can be used); (None, None) without one."""
    try:
        raw = (root / CURRENT_FILE).read_bytes()
    except OSError:  # missing, a folder (``index_root_problem`` says so), unreadable: no live build
        return None, None
    try:
        name = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"
    if not name:
        return None, None
    if _BUILD_NAME.fullmatch(name) is None:
        shown = name if len(name) <= 40 else f"{name[:40]}… ({len(name)} characters)"
        return None, f"it holds {shown!r}, not the name of a build folder"
    return name, None


def read_current(root: Path) -> str | None:
    """The live build's directory name, or None when there is no index (or ``CURRENT`` is damaged:
    :func:`current_problem` says how)."""
    return _current_text(root)[0]


def current_problem(root: Path) -> str | None:
    """One line naming a damaged ``CURRENT`` file and the cure, else None (fine, or not there)."""
    why = _current_text(root)[1]
    if why is None:
        return None
    return f"{root / CURRENT_FILE} is damaged ({why})"


def write_current(root: Path, name: str) -> None:
    write_atomic(root / CURRENT_FILE, name + "\n")


def new_build_name(generation: int) -> str:
    return f"build-{generation:06d}-{secrets.token_hex(4)}"


def write_manifest_json(build_dir: Path, manifest: Manifest) -> None:
    """Best effort: the catalog holds the truth, this copy is for people reading the directory."""
    try:
        write_atomic(build_dir / MANIFEST_JSON, json.dumps(manifest.to_dict(), indent=2) + "\n", durable=False)
    except OSError:
        pass
