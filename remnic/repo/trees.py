"""Git trees edited without an index: only the trees along the changed paths are read and rewritten.

A commit through a temporary index costs a read of the whole tree (100k
entries at 100k memories); editing trees directly costs what the touched
directories hold. Trees are read with one ``git cat-file --batch``, their new
ids are computed here (the object format is plain: sorted ``mode name\\0id``
entries), and one ``git mktree --batch`` writes them all; git's own ids are
checked against ours, so a disagreement can never produce a wrong commit.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from remnic.errors import LedgerError

TREE_MODE = "40000"
_TYPES = {"40000": "tree", "160000": "commit"}
_NEEDS_QUOTE = re.compile(rb'[\x00-\x1f"\\\x7f]')


@dataclass(frozen=True)
class Entry:
    mode: str  # as git stores it: 100644, 100755, 120000, 40000, 160000
    oid: str  # hex object id


def object_id(kind: str, data: bytes, algo: str = "sha1") -> str:
    """The id git gives an object of ``kind`` (blob, tree) with these bytes."""
    digest = hashlib.new(algo)
    digest.update(f"{kind} {len(data)}\0".encode())
    digest.update(data)
    return digest.hexdigest()


def blob_id(data: bytes, algo: str = "sha1") -> str:
    return object_id("blob", data, algo)


def _sort_key(item: tuple[bytes, Entry]) -> bytes:
    name, entry = item
    return name + b"/" if entry.mode == TREE_MODE else name


def encode_tree(entries: Mapping[bytes, Entry]) -> bytes:
    """A tree object's bytes: entries in git's order (a tree sorts as if its name ended in '/')."""
    return b"".join(
        entry.mode.encode() + b" " + name + b"\0" + bytes.fromhex(entry.oid)
        for name, entry in sorted(entries.items(), key=_sort_key)
    )


def decode_tree(data: bytes, id_len: int) -> dict[bytes, Entry]:
    out: dict[bytes, Entry] = {}
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode = data[pos:space].decode()
        out[data[space + 1 : nul]] = Entry(mode, data[nul + 1 : nul + 1 + id_len].hex())
        pos = nul + 1 + id_len
    return out


def _quote(name: bytes) -> bytes:
    """A name as ``git mktree`` reads it on a line: C-quoted when it holds a tab, newline, quote or control byte."""
    if _NEEDS_QUOTE.search(name) is None:
        return name
    out = bytearray(b'"')
    for b in name:
        if b in (0x22, 0x5C):
            out += b"\\" + bytes([b])
        elif b < 0x20 or b == 0x7F:
            out += f"\\{b:03o}".encode()
        else:
            out.append(b)
    return bytes(out + b'"')


def _mktree_line(name: bytes, entry: Entry) -> bytes:
    kind = _TYPES.get(entry.mode, "blob")
    return f"{entry.mode} {kind} {entry.oid}\t".encode() + _quote(name) + b"\n"


Runner = Callable[[Sequence[str], bytes], bytes]


class TreeEditor:
    """Builds the root tree of ``base`` with some paths set to new blobs or removed."""

    def __init__(
        self,
        run: Runner,
        algo: str = "sha1",
        known: tuple[str, Mapping[str, Mapping[bytes, Entry]]] | None = None,
    ) -> None:
        self._run = run  # runs ``git <args>`` with stdin bytes, returns stdout bytes
        self.algo = algo
        self.id_len = hashlib.new(algo).digest_size
        self.base_tree: str | None = None  # the root tree of ``base``, learnt while reading it
        # ``base``'s root tree and directories already known (the trees the commit before wrote),
        # not read again
        self._known = known
        self.trees: dict[str, dict[bytes, Entry]] = {}
        """After :meth:`build`: the entries of every directory it rewrote (an emptied one: none)."""

    def _read_trees(self, base: str | None, dirs: Sequence[str]) -> dict[str, dict[bytes, Entry]]:
        """The entries of each directory in ``base`` (missing directories are empty)."""
        if base is None:
            return {d: {} for d in dirs}
        trees: dict[str, dict[bytes, Entry]] = {}
        if self._known is not None:
            self.base_tree = self._known[0]
            trees = {d: dict(self._known[1][d]) for d in dirs if d in self._known[1]}
            dirs = [d for d in dirs if d not in trees]
            if not dirs:
                return trees
        specs = [f"{base}:{d}" if d else f"{base}^{{tree}}" for d in dirs]
        out = self._run(["cat-file", "--batch"], "".join(s + "\n" for s in specs).encode())
        pos = 0
        for d in dirs:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].split()
            pos = nl + 1
            if header[-1] == b"missing":
                trees[d] = {}
                continue
            kind, size = header[1], int(header[2])
            body = out[pos : pos + size]
            pos += size + 1
            trees[d] = decode_tree(body, self.id_len) if kind == b"tree" else {}
            if not d:
                self.base_tree = header[0].decode()
        return trees

    def build(self, base: str | None, changes: Mapping[str, Entry | None]) -> str:
        """The new root tree id; ``changes`` maps a path to its new entry, or None to remove it."""
        dirs: set[str] = {""}
        for path in changes:
            parts = path.split("/")
            dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
        ordered = sorted(dirs, key=lambda d: (-(d.count("/") + 1) if d else 0, d))  # deepest first, root last
        trees = self._read_trees(base, ordered)
        for path, entry in changes.items():
            parent, _, name = path.rpartition("/")
            if entry is None:
                trees[parent].pop(name.encode(), None)
            else:
                trees[parent][name.encode()] = entry
        written: list[tuple[str, bytes]] = []
        ids: dict[str, str] = {}
        for d in ordered:
            entries = trees[d]
            for child, oid in ids.items():  # subtrees rebuilt below this one
                parent, _, name = child.rpartition("/")
                if parent == d:
                    if oid:
                        entries[name.encode()] = Entry(TREE_MODE, oid)
                    else:
                        entries.pop(name.encode(), None)
            self.trees[d] = entries
            if not entries and d:
                ids[d] = ""  # an emptied folder disappears from its parent
                continue
            raw = encode_tree(entries)
            ids[d] = object_id("tree", raw, self.algo)
            written.append((ids[d], b"".join(_mktree_line(n, e) for n, e in entries.items())))
        self._write(written)
        return ids[""]

    def _write(self, trees: list[tuple[str, bytes]]) -> None:
        if not trees:
            return
        out = self._run(["mktree", "--batch"], b"".join(lines + b"\n" for _, lines in trees)).split()
        got = [line.decode() for line in out]
        want = [oid for oid, _ in trees]
        if got != want:
            raise LedgerError(f"git wrote trees {got[:3]}… where {want[:3]}… were expected; nothing was committed")


def run_git(cwd: str, env: Mapping[str, str]) -> Runner:
    """A runner for :class:`TreeEditor` (plain subprocess: binary stdin and stdout)."""

    def run(args: Sequence[str], stdin: bytes) -> bytes:
        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, env=dict(env), check=False)
        if proc.returncode != 0:
            raise LedgerError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout

    return run
