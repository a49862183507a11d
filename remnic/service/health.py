"""Health checks for `remnic doctor` and `remnic status`: the environment, the repo, every file, the index."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from remnic.config import DURABLE_DIR, MARKER_FILE, STATE_DIR, StoreSettings
from remnic.config.paths import SINGLE_FILES, ignored_copy, single_file
from remnic.errors import FieldProblem
from remnic.memfile.model import MemoryRecord
from remnic.memfile.paths import README_LIKE, README_NAMES, glob_match
from remnic.observe.buffer import waiting_sessions
from remnic.observe.ledger import verdict_stats
from remnic.repo import journal, pullmark
from remnic.repo.files import FILE_NOT_FOLDER, SYMLINKED_FOLDER, MemoryStore, ScanResult
from remnic.repo.ledger import Ledger
from remnic.repo.remote import CONFLICT_LOG, remotes

from .health_records import current_values_check, duplicate_ids_check, foreign_check, one_sided_check, stranded_check
from .health_repo import head_check, identity_check, large_files_check
from .health_state import capped, embedding_cache_check, state_parts_check, torn_buffers_check
from .lcm import archive_check

HEALTHY_INDEX = ("ok", "behind")
"""Index states that need nothing done: ``behind`` is caught up from git by the next recall."""


def check_files(files: MemoryStore, store: StoreSettings) -> tuple[list[MemoryRecord], list[FieldProblem]]:
    """Every memory file checked by the one rule sync, writes and the pre-commit hook share."""
    scan = files.scan()
    return scan.records, [p for exc in scan.problems for p in exc.problems]


def _uncommitted_memories(ledger: Ledger, files: MemoryStore, scan: ScanResult | None = None) -> list[str]:
    """Memory files with uncommitted changes that `remnic sync run` would commit (not the malformed or
    empty ones it leaves as they are; other files are the user's)."""
    return _working_tree(ledger, files, scan)[0]


def _working_tree(ledger: Ledger, files: MemoryStore, scan: ScanResult | None) -> tuple[list[str], list[str]]:
    """(changed memory files sync would commit, changed ones it holds back: malformed or with no text)."""
    return _working_tree_links(ledger, files, scan)[:2]


def _working_tree_links(
    ledger: Ledger, files: MemoryStore, scan: ScanResult | None
) -> tuple[list[str], list[str], list[str]]:
    """:func:`_working_tree`, and the changed symbolic links in the memory folders (not memories)."""
    held = {e.path for e in scan.problems} | set(scan.empty) if scan is not None else set()
    links = set(scan.links) if scan is not None else set()  # not memories: the user's, like any other file
    changed = {q for _, p, orig in ledger.status_porcelain() for q in (p, orig) if q and files.paths.is_memory(q)}
    # A path git's own index lags on (index.lock was held) shows as changed, yet the file is what HEAD
    # records: the writes check reports it, and there is nothing for sync to commit.
    in_step = {p for p in ledger.index_repair_pending() if p in changed and _same_as_head(ledger, files, p)}
    changed -= in_step
    return sorted(changed - links - held), sorted((changed - links) & held), sorted(changed & links)


def _same_as_head(ledger: Ledger, files: MemoryStore, path: str) -> bool:
    try:
        return (files.root / path).read_bytes() == ledger.committed_bytes(path)
    except OSError:
        return ledger.committed_bytes(path) is None


def _malformed(scan: ScanResult) -> list[str]:
    """Malformed files: still memories to the index until the next sync drops them (conflict markers
    mid-merge, a hand edit that broke the YAML) — the memory-files check names them, not the index's."""
    return [e.path for e in scan.problems]


def index_mismatch(
    on_disk: Collection[str],
    indexed: Collection[str] | None,
    uncommitted: Collection[str],
    empty: Collection[str] = (),
) -> dict[str, Any] | None:
    """How the memories an index reflecting HEAD holds differ from the memory files on disk; None when they
    agree (or there is no index to compare). ``gone``: indexed memories whose file is gone or no longer a
    memory (a recall could return them); ``missing``: memory files the index lacks, beyond the uncommitted
    ones a recall indexes first. Files with no text yet or malformed (``empty``) may be either."""
    if indexed is None:
        return None
    held, disk = set(indexed), set(on_disk)
    gone, missing = sorted(held - disk - set(empty)), sorted(disk - held - set(uncommitted))
    if not gone and not missing:
        return None
    out: dict[str, Any] = {"indexed": len(held), "memoryFiles": len(disk), "gone": gone, "missing": missing}
    out["detail"] = mismatch_line(out)
    return out


def mismatch_line(mismatch: Mapping[str, Any]) -> str:
    """One line saying how the index and the files differ, and what repairs it."""
    parts = []
    for key, what in (("gone", "indexed with no memory file"), ("missing", "memory file(s) not indexed")):
        if mismatch[key]:
            shown = ", ".join(mismatch[key][:3]) + (", …" if len(mismatch[key]) > 3 else "")
            parts.append(f"{len(mismatch[key])} {what} ({shown})")
    return (
        f"{mismatch['indexed']} memories indexed, {mismatch['memoryFiles']} memory files: "
        + "; ".join(parts)
        + "; `remnic reindex` rebuilds the index from the files"
    )


def skipped_files(files: MemoryStore) -> list[dict[str, str]]:
    """Files that are not memories, each with why (outside the memory folders, README-like, attachment)."""
    out = [{"path": path, "reason": reason} for path, reason in files.skipped()]
    listed = {s["path"] for s in out}
    out += [{"path": p, "reason": README_LIKE} for p in adopted_readmes(files) if p not in listed]
    return sorted(out, key=lambda s: s["path"])


def adopted_readmes(files: MemoryStore) -> list[str]:
    """Top-level README-like notes a ``store.include`` pattern names (``--adopt '**'`` over a vault) that
    are left out for want of ``store.readmeFiles``: the vault's own README, not the one ``remnic init``
    lays down (that one is the repository's, and is never a memory)."""
    paths = files.paths
    if paths.readme_files or not paths.include:
        return []
    try:
        names = sorted(os.listdir(files.root))
    except OSError:
        return []
    ours = _template_readmes()
    out = []
    for name in names:
        if name.rsplit(".", 1)[0].lower() not in README_NAMES or not paths.is_markdown(name):
            continue
        if not any(glob_match(p, name) for p in paths.include) or any(glob_match(p, name) for p in paths.exclude):
            continue
        try:
            if not (files.root / name).is_file() or (files.root / name).read_bytes() == ours.get(name):
                continue
        except OSError:
            continue
        out.append(name)
    return out


def _template_readmes() -> dict[str, bytes]:
    from .memory import template_dir  # the service's own module: imported late, it imports this one

    try:
        return {p.name: p.read_bytes() for p in template_dir().iterdir() if p.is_file()}
    except OSError:
        return {}


_BLOCKED = (SYMLINKED_FOLDER, FILE_NOT_FOLDER)
"""Skipped entries that are memory folders remnic cannot use: a warning, not just a note."""


def _binary_advice(root: Path, paths: list[str]) -> str:
    """Malformed files that are binary (an image or a PDF named .md) are no notes to fix: say how to leave them out."""
    from .adopt import binary_files

    found = binary_files(root, paths)
    if not found:
        return ""
    return (
        f"; {len(found)} of them hold binary data ({', '.join(found[:3])}{', …' if len(found) > 3 else ''}): "
        f'not notes, leave them out with store.exclude, e.g. {{"store": {{"exclude": ["{found[0]}"]}}}}'
    )


def unwritable(root: Path) -> str | None:
    """Why remnic cannot write in the memory directory (its state folder cannot be written), else None."""
    state = root / STATE_DIR
    where = state if state.is_dir() else root
    if os.access(where, os.W_OK):
        return None
    try:
        read_only_fs = bool(os.statvfs(where).f_flag & os.ST_RDONLY)
    except OSError:
        read_only_fs = False
    cause = "a read-only file system" if read_only_fs else "no write permission for this user"
    return f"memory directory {root} is not writable ({cause} at {where})"


REBUILT_BY_RECALL = ("missing", "corrupt", "stale", "schema-mismatch", "model-mismatch")
"""Index states the next recall repairs with a whole rebuild (``remnic reindex`` does it at once)."""
MODEL_ERROR = "model-error"
"""The configured embedding model cannot be read or loaded: no rebuild cures it, so none is promised."""
UNUSABLE = "unusable"
"""No index can be built where it belongs (``remnic.index.state.UNUSABLE``: not imported, so status and
doctor load no index code until they open the index)."""
FAILED_INDEX = (MODEL_ERROR, UNUSABLE)
"""Index states that are a failure (status exits 1, doctor FAILs): recall scans the files until a person
acts (fixes the model setting, or moves aside what sits where ``.remnic/index`` belongs)."""


_MODEL_STEP = "the index is left as it is and recall searches the files until the setting is fixed"


def index_health_of(root: Path, index_health: dict[str, Any]) -> dict[str, Any]:
    """``index_health`` with its next step for a state the next recall rebuilds, and an index that could
    not be opened because the directory is read-only called that: opening the index takes a lock file,
    so there it fails whatever state the index is in."""
    state = index_health.get("state")
    why = unwritable(root) if state == "corrupt" else None
    if state in REBUILT_BY_RECALL and why is None:
        detail = index_health.get("detail") or ""
        step = f"the next recall {'builds' if state == 'missing' else 'rebuilds'} it, or run `remnic reindex` now"
        return {**index_health, "detail": f"{detail}: {step}" if detail else step}
    if state == MODEL_ERROR:
        return {**index_health, "detail": f"{index_health.get('detail') or ''}; {_MODEL_STEP}"}
    if why is None:
        return index_health
    return {
        **index_health,
        "state": "unwritable",
        "detail": f"not checked: {why}, so the index's lock file cannot be made (the index itself may be fine; "
        f"queries search the files instead){_was(index_health)}",
    }


def _was(index_health: dict[str, Any]) -> str:
    """What the index said before it was found unwritable (nothing when it said nothing). tantivy's lock failure
    ends with its empty Option printed the Rust way (". None"): not part of what a person reads."""
    detail = str(index_health.get("detail") or "").removesuffix(". None").removesuffix(" None")
    return f"; was: {detail}" if detail else ""


def _skipped_check(skipped: list[dict[str, str]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for s in skipped:
        counts[s["reason"]] = counts.get(s["reason"], 0) + 1
    detail = (
        "none: every markdown file is a memory"
        if not skipped
        else f"{len(skipped)} file(s) are not memories and are left alone: "
        + "; ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
    )
    blocked = [s["path"] for s in skipped if s["reason"] in _BLOCKED]
    if blocked:
        detail += f"; {len(blocked)} memory folder(s) unusable ({', '.join(blocked[:3])}): store refuses to write there"
    return {
        "name": "skipped-files",
        "status": "warn" if blocked else "ok",
        "detail": detail,
        **capped([f"{s['path']}: {s['reason']}" for s in skipped]),
    }


def status(
    root: Path,
    files: MemoryStore,
    ledger: Ledger,
    store: StoreSettings,
    index_health: dict[str, Any],
    indexed: Collection[str] | None = None,
) -> dict[str, Any]:
    scan = files.scan()
    index_health = index_health_of(root, index_health)
    records, problems = scan.records, [p for exc in scan.problems for p in exc.problems]
    counts: dict[str, dict[str, int]] = {"category": {}, "status": {}, "namespace": {}}
    for r in records:
        for key, value in (("category", r.category), ("status", r.status), ("namespace", r.namespace)):
            counts[key][value] = counts[key].get(value, 0) + 1
    uncommitted, held = _working_tree(ledger, files, scan)
    # Only an index reflecting HEAD must agree with the files (one behind catches up at the next recall).
    mismatch = (
        index_mismatch([r.path for r in records], indexed, uncommitted, [*scan.empty, *_malformed(scan)])
        if index_health.get("state") == "ok"
        else None
    )
    return {
        "memoryDir": str(root),
        "head": ledger.head(),
        "inProgress": ledger.in_progress(),
        "memories": len(records),
        "malformed": sorted({p.path for p in problems if p.path}),
        "empty": sorted(scan.empty),
        "skipped": skipped_files(files),
        "uncommitted": uncommitted,
        "uncommittedHeld": held,
        "counts": counts,
        "index": {**index_health, "mismatch": mismatch} if mismatch else index_health,
    }


def system_checks() -> list[dict[str, Any]]:
    """The python and git checks: all doctor can say when there is no repository to open."""
    python = "ok" if sys.version_info >= (3, 11) else "fail"
    out = [{"name": "python", "status": python, "detail": f"Python {platform.python_version()} ({sys.executable})"}]
    try:
        version = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout.strip()
        out.append({"name": "git", "status": "ok", "detail": version})
    except (OSError, subprocess.CalledProcessError) as exc:
        out.append({"name": "git", "status": "fail", "detail": f"git not runnable: {exc}"})
    out.append(user_files_check())
    return out


def user_files_check() -> dict[str, Any]:
    """Which tokens.json and spaces.json are read (one file each, unlike config.json); a warning when a
    copy under ~/.config is ignored for the one in $XDG_CONFIG_HOME."""
    ignored = [w for w in (ignored_copy(name) for name in SINGLE_FILES) if w]
    if ignored:
        return {"name": "user-files", "status": "warn", "detail": "; ".join(ignored)}
    used = [(name, single_file(name)) for name in SINGLE_FILES]
    detail = ", ".join(f"{name} {path}" + ("" if path.exists() else " (none yet)") for name, path in used)
    return {"name": "user-files", "status": "ok", "detail": f"read from {detail}"}


def checks(
    root: Path,
    origin: str,
    files: MemoryStore,
    ledger: Ledger,
    store: StoreSettings,
    index_health: dict[str, Any],
    indexed: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """Checks with status ok|warn|fail and a detail line each."""
    out: list[dict[str, Any]] = []

    def add(name: str, status: str, detail: str, **more: Any) -> None:
        out.append({"name": name, "status": status, "detail": detail, **more})

    out += system_checks()
    index_health = index_health_of(root, index_health)
    read_only = unwritable(root)
    if read_only is None:
        add("memory-dir", "ok", f"{root} (from {origin})")
    else:
        add("memory-dir", "warn", f"{root} (from {origin}); {read_only}: reads work, every write is refused")
    out.append(state_parts_check(root, root / DURABLE_DIR))
    has_marker = (root / MARKER_FILE).is_file()
    add(
        "marker",
        "ok" if has_marker else "warn",
        "memory repo marker present"
        if has_marker
        else f"no {MARKER_FILE}: directory discovery from a subfolder will not find this repo (run `remnic init`)",
    )
    ignored = ledger.is_ignored(f"{STATE_DIR}/index")
    add(
        "gitignore",
        "ok" if ignored else "warn",
        f"{STATE_DIR}/ is git-ignored"
        if ignored
        else f"{STATE_DIR}/ is not git-ignored: rebuildable state and audit logs could be committed",
    )
    out += [head_check(ledger), identity_check(ledger)]
    scan = files.scan()
    records, problems = scan.records, [p for exc in scan.problems for p in exc.problems]
    bad_files = {p.path for p in problems}
    if problems:
        add(
            "memory-files",
            "fail",
            f"{len(bad_files)} malformed of {len(records) + len(bad_files)} files "
            "(left untouched and out of the index until fixed)"
            + _binary_advice(files.root, sorted(p for p in bad_files if p)),
            problems=[p.describe() for p in problems],
        )
    else:
        add("memory-files", "ok", f"{len(records)} memory file{'' if len(records) == 1 else 's'}, none malformed")
    out.append(
        large_files_check(
            root, [*(r.path for r in records), *sorted(p for p in bad_files if p)], store.max_content_chars
        )
    )
    if scan.empty:
        add(
            "empty-files",
            "warn",
            f"{len(scan.empty)} memory file(s) have no text yet (an empty body and no title or description): "
            "write their text, or delete them; until then sync leaves them as they are",
            problems=sorted(scan.empty),
        )
    out.append(duplicate_ids_check(records))
    out.append(_skipped_check(skipped_files(files)))
    out += [foreign_check(records), stranded_check(records), one_sided_check(records), current_values_check(records)]
    pending, held, links = _working_tree_links(ledger, files, scan)
    tree = [f"{len(pending)} uncommitted change(s) ({_tree_advice(ledger)})"] if pending else []
    if held:
        tree.append(f"{len(held)} uncommitted change(s) sync leaves until fixed (malformed, or no text)")
    if links and tree:  # git counts them too; the skipped-files check names each
        tree.append(f"{len(links)} changed symbolic link(s), not memories (see skipped-files)")
    add(
        "working-tree",
        "warn" if tree else "ok",
        "; ".join(tree) or "clean",
        **(capped([*pending, *held]) if tree else {}),
    )
    stuck = stuck_marker(ledger)
    if stuck is not None:
        add("pull-marker", "fail", f"sync and writes are paused: {stuck}")
    state = index_health.get("state", "unknown")
    detail = f": {index_health['detail']}" if index_health.get("detail") else ""
    mismatch = (
        index_mismatch([r.path for r in records], indexed, pending, [*scan.empty, *_malformed(scan)])
        if state == "ok"
        else None
    )
    if mismatch:
        lines = [f"{p}: indexed, no memory file" for p in mismatch["gone"]]
        lines += [f"{p}: memory file, not indexed" for p in mismatch["missing"]]
        add("index", "warn", f"{state}{detail}; but {mismatch['detail']}", index=index_health, problems=lines)
    elif state == MODEL_ERROR:  # the embedding-model check says why: not twice
        said = "the configured embedding model cannot be used (see the embedding-model check)"
        add("index", "warn", f"{state}: {said}; {_MODEL_STEP}", index=index_health)
    else:
        verdict = "ok" if state in HEALTHY_INDEX else "fail" if state == UNUSABLE else "warn"
        add("index", verdict, f"{state}{detail}", index=index_health)
    from remnic.index.manifest import EMBEDDINGS_FILE

    cache = embedding_cache_check(root / STATE_DIR / EMBEDDINGS_FILE)
    out += [cache] if cache is not None else []
    waiting = int(index_health.get("vectorsPending") or 0)
    if waiting:
        add(
            "vectors",
            "warn",
            f"{waiting} memories are searchable by BM25 but their vectors are not computed yet "
            "(run `remnic sync run`: it embeds them, with a progress bar)",
        )
    torn = torn_buffers_check(root / DURABLE_DIR)
    out += [torn] if torn is not None else []
    interrupted = list(journal.pending(root / STATE_DIR))
    lagging = ledger.index_repair_pending()
    astray = [p for p in _index_astray(ledger, files) if p not in lagging]
    if interrupted or lagging:
        add(
            "writes",
            "warn",
            f"{len(interrupted)} interrupted write(s) to finish or undo, git's index behind HEAD for "
            f"{len(lagging)} path(s){_index_lock_cause(ledger) if lagging else ''}; "
            "the next write or `remnic sync run` repairs both",
        )
    elif astray and ledger.in_progress() is None:
        add(
            "writes",
            "warn",
            f"no interrupted writes; but git's index differs from HEAD for {len(astray)} memory file(s) whose "
            "file is what HEAD has, so a `git commit` now would record that difference (a deletion, or an old "
            "version): `git reset -q -- PATH` puts each in step",
            problems=astray,
        )
    elif astray and (underway := ledger.in_progress()) is not None:
        # A merge's result staged in git's index (a pull killed before it brought it over): not to be reset.
        detail = f"no interrupted writes; git's index holds {underway.removesuffix(' is in progress')}'s result"
        add("writes", "ok", f"{detail} for {len(astray)} memory file(s): the `merge` line says how to finish it")
    else:
        add("writes", "ok", "no interrupted writes; git's index in step with HEAD")
    from .consolidate import last_run  # consolidation's rules load only for doctor, not every start-up

    last = last_run(root / STATE_DIR)
    add(
        "observations",
        "ok",
        _observations_line(verdict_stats(root), verdict_stats(root, since=time.time() - 86400), last),
    )
    out.append(archive_check(root))
    return out


_ASTRAY_CHECKED = 200  # paths compared byte for byte at most (each is a `git cat-file`)


def _tree_advice(ledger: Ledger) -> str:
    """What to do with uncommitted memory files: not `remnic sync run` while it is paused or would commit a
    merge's files as hand edits."""
    underway = ledger.in_progress()
    stuck = stuck_marker(ledger) if underway is not None else None
    if stuck is not None:
        return stuck
    if underway == "a pull's merge was cut short":
        return (
            "git was killed in a pull's merge: what it wrote is part of that merge, not hand edits; `remnic space "
            "pull` puts that back and merges again, and keeps a file edited since as it is (it refuses, naming it)"
        )
    if underway is not None:
        return f"{underway}, so sync is paused: `remnic space pull` finishes a merge"
    if (Path(ledger.repo.git_dir) / CONFLICT_LOG).is_file():
        return "run `remnic space pull`: it commits the conflict copies a pull left, then `remnic sync run` the rest"
    return "run `remnic sync run`"


def stuck_marker(ledger: Ledger) -> str | None:
    """What to do about a pull's marker ``remnic space pull`` cannot clear (see :func:`pullmark.stuck_advice`)."""
    git_dir = Path(ledger.repo.git_dir)
    if not (git_dir / pullmark.PULL_MARKER).is_file():
        return None
    cut = pullmark.cut_merge(git_dir, ledger.head, ledger.root, ledger.parents)
    if cut is None:
        return None
    marker = git_dir / pullmark.PULL_MARKER
    return pullmark.stuck_advice(cut, marker, ledger.root, has_remote=bool(remotes(ledger)))


def _index_astray(ledger: Ledger, files: MemoryStore) -> list[str]:
    """Memory files whose entry in git's index differs from HEAD's while the file on disk is HEAD's: git's
    index left behind a commit (not a change staged by hand, which the file on disk holds too)."""
    staged = sorted({p for xy, p, _ in ledger.status_porcelain() if xy[0] in "DM" and files.paths.is_memory(p)})
    return [p for p in staged[:_ASTRAY_CHECKED] if _same_as_head(ledger, files, p)]


def _index_lock_cause(ledger: Ledger) -> str:
    """Why git's index lags, when a leftover ``.git/index.lock`` is the likely cause (else "")."""
    lock = Path(ledger.repo.git_dir) / "index.lock"
    try:
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return ""
    return (
        f" (likely cause: {lock} is still there, {age:.0f} s old: a git command still running, or one that "
        "was killed and left it; remove it once no git command runs)"
    )


def buffers_check(durable_dir: Path, buffer_max_minutes: float) -> dict[str, Any]:
    """Turns acknowledged into session buffers and not persisted yet: normal for a session under way,
    worth a warning once they wait longer than ``observe.bufferMaxMinutes`` or a flush was interrupted."""
    waiting = waiting_sessions(durable_dir)
    if not waiting:
        return {"name": "buffers", "status": "ok", "detail": "no observed turns waiting in a session buffer"}
    now = time.time()
    stale = [w for w in waiting if w.interrupted or (w.oldest is not None and now - w.oldest > buffer_max_minutes * 60)]
    oldest = min((w.oldest for w in waiting if w.oldest is not None), default=None)
    age = f", the oldest received {(now - oldest) / 60:.0f} min ago" if oldest is not None else ""
    interrupted = sum(w.interrupted for w in waiting)
    detail = (
        f"{sum(w.turns for w in waiting)} observed turn(s) wait in {len(waiting)} session buffer(s){age}"
        + (f"; {interrupted} flush(es) interrupted" if interrupted else "")
        + (
            ": the next hook of any session, a running `remnic serve` or `remnic sync watch`, or "
            "`remnic observe - --session-key KEY --flush` persists them"
            if stale
            else ""
        )
    )
    problems = [f"{w.session_key} ({w.namespace}): {w.turns} turn(s)" for w in stale]
    return {"name": "buffers", "status": "warn" if stale else "ok", "detail": detail, "problems": problems}


def _observations_line(stats: dict[str, Any], today: dict[str, Any], last: dict[str, Any] | None) -> str:
    """The observations check: the judge's throughput and verdicts, from the verdict ledger, and the last
    consolidation pass (``last``: what :func:`remnic.service.consolidate.last_run` read)."""
    consolidated = (
        f"consolidation last ran {last['at']} (merged {last.get('merged', 0)})"
        if last
        else "consolidation has not run yet"
    )
    if not stats["total"]:
        return "no observations yet (`remnic observe`, POST /observe or the agent hooks feed them)"
    throughput = (
        f"; {stats['flushTurns']} turns in {stats['flushes']} flush(es) at {stats['turnsPerSecond']} turns/s"
        if stats.get("turnsPerSecond")
        else ""
    )
    return (
        f"{stats['total']} verdicts since {stats['firstTs']} ({stats['accept']} accepted, {stats['reject']} rejected, "
        f"{stats['defer']} deferred), {today['total']} in the last 24 h; last observedAt {stats['lastObservedAt']}"
        f"{throughput}; {consolidated}"
    )
