"""A file's versions read back from ``git log``: the parsing behind :meth:`Ledger.history`.

Paths are read from ``-z`` output everywhere: without it git prints a name with non-ASCII
characters, a tab, a quote or a backslash C-quoted (``"facts/caf\\303\\251.md"``), and that text
is not a path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .messages import Version, parse_trailers

GitRun = Callable[..., str]
"""``Ledger.git``: runs git with the given arguments and returns its output."""
GitBytes = Callable[[Sequence[str], bytes], bytes]
"""``Ledger._run_bytes``: runs git with binary standard input and returns its binary output."""

_FORMAT = "%x1e%H%x1f%aI%x1f%an%x1f%s%x1f%(trailers:unfold,only)%x1d"


def literal(*paths: str) -> list[str]:
    """Pathspecs that match exactly ``paths``: git reads ``[``, ``*`` and ``?`` in a pathspec as a
    glob and a leading ``:`` as magic, so ``facts/[draft] idea.md`` also matched ``facts/d idea.md``."""
    return [f":(literal){p}" for p in paths]


def history_at(git: GitRun, path: str, rev: str | None = None) -> list[Version]:
    """Every version of ``path`` (as of commit ``rev``, default HEAD), oldest first, following
    renames back (not copies: see below)."""
    revs = [rev] if rev else []
    out = git(
        "log", "-z", "--follow", "-M", "--name-status", f"--format={_FORMAT}", *revs, "--", *literal(path), strip=False
    )
    versions: list[Version] = []
    for chunk in out.split("\x1e")[1:]:
        head, _, changes = chunk.partition("\x1d")
        sha, date, author, subject, trailers = (head.split("\x1f") + [""] * 5)[:5]
        change, cur, prev = _change(changes, path)
        copied = change == "C"
        if copied:
            # --follow also follows copies (the source is still there); a copy is a new file (sync
            # gives it a fresh id), so its history starts here rather than taking on the original's.
            change, prev = "A", None
        versions.append(Version(0, sha, cur, date, author, subject, change, parse_trailers(trailers), prev))
        if copied:
            break
    versions.reverse()
    for i, v in enumerate(versions, 1):
        v.number = i
    return versions


def _change(changes: str, path: str) -> tuple[str, str, str | None]:
    """(status letter, path after, path before for a rename or copy) from one commit's ``-z`` entries."""
    fields = changes.lstrip("\0\n").split("\0")
    change, cur, prev = "M", path, None
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][:1]
        if status in ("R", "C") and i + 2 < len(fields):
            change, prev, cur = status, fields[i + 1], fields[i + 2]
            i += 3
        elif i + 1 < len(fields):
            change, cur = status, fields[i + 1]
            i += 2
        else:
            break
    return change, cur, prev


def commit_version(git: GitRun, sha: str, path: str, change: str) -> Version:
    """Commit ``sha`` as a version of ``path`` (a merge, which ``git log --follow`` does not list)."""
    head = git("log", "-n", "1", f"--format={_FORMAT}", sha, strip=False).lstrip("\x1e").partition("\x1d")[0]
    sha, date, author, subject, trailers = (head.split("\x1f") + [""] * 5)[:5]
    return Version(0, sha, path, date, author, subject, change, parse_trailers(trailers))


def changed_paths(git: GitRun, sha: str) -> list[tuple[str, str]]:
    """(status letter, path) of each file commit ``sha`` changed, without rename pairing (a move
    git did not pair reads as a deletion and an add)."""
    out = git("show", "-z", "--no-renames", "--name-status", "--format=", sha, strip=False)
    fields = out.lstrip("\0\n").split("\0")
    return [(fields[i][:1], fields[i + 1]) for i in range(0, len(fields) - 1, 2) if fields[i]]


def blob_ids(run: GitBytes, specs: Sequence[str]) -> list[str | None]:
    """The blob id of each ``rev:path`` (None: no such file), by one ``git cat-file --batch-check``."""
    out = run(["cat-file", "--batch-check=%(objectname) %(objecttype)"], "".join(f"{s}\n" for s in specs).encode())
    lines = out.decode("utf-8", "replace").splitlines()
    return [line.split()[0] if line.endswith(" blob") else None for line in lines]


def renamed_to(git: GitRun, sha: str, path: str) -> str | None:
    """Where commit ``sha`` renamed ``path`` to, if it did."""
    fields = git("show", "-z", "-M", "--name-status", "--format=", sha, strip=False).lstrip("\0\n").split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        if fields[i][:1] in ("R", "C"):
            if fields[i][:1] == "R" and fields[i + 1 : i + 2] == [path] and i + 2 < len(fields):
                return fields[i + 2]
            i += 3
        else:
            i += 2
    return None


def paths_of_id(git: GitRun, memory_id: str) -> list[str]:
    """The paths of the newest commit that added or removed the line ``id: <memory_id>``: one, or
    more when that commit moved the id between files (two files swapped by hand)."""
    out = git("log", "-z", "-n", "1", "--format=", "--name-only", "-S", f"id: {memory_id}", "--", "*.md", strip=False)
    return [p for p in (f.strip("\n") for f in out.split("\0")) if p]


def blob_texts(run: GitBytes, specs: Sequence[tuple[str, str]]) -> list[str | None]:
    """The text of each (commit, path), read by one ``git cat-file --batch`` rather than a git
    process per version (None: no such file, or not UTF-8)."""
    texts: list[str | None] = [None] * len(specs)
    # cat-file reads one name a line, so a path with a line break cannot be asked for this way.
    batch = [i for i, (_, path) in enumerate(specs) if "\n" not in path]
    if not batch:
        return texts
    out = run(["cat-file", "--batch"], "".join(f"{specs[i][0]}:{specs[i][1]}\n" for i in batch).encode("utf-8"))
    pos = 0
    for i in batch:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split()
        pos = nl + 1
        if header[-1] == b"missing" or len(header) < 3:
            continue
        size = int(header[2])
        body = out[pos : pos + size]
        pos += size + 1
        if header[1] == b"blob":
            try:
                texts[i] = body.decode("utf-8")
            except UnicodeDecodeError:
                pass
    return texts
