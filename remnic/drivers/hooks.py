"""Git hooks for a memory repository and the agent host hooks' logic.

The hook files themselves live in the top-level ``hooks/`` folder: small POSIX
sh scripts that call ``remnic hooks run <hook>``, so all logic is here.

- ``pre-commit``: validate the *staged* memory files; non-zero (and a message
  naming path, line and field) when one is malformed.
- ``post-merge``, ``post-checkout``, ``post-rewrite``: an incremental index
  update (a sync that neither writes files nor commits).
- Agent hosts (Claude Code, Codex): ``session-start`` prints the pinned memories
  and what recall finds for the repository's context; ``stop`` (after every response)
  hands the transcript's new turns to :meth:`Memory.observe`, whose triggers (turn
  count, time, topic shift) decide when they become memories; ``pre-compact`` and
  ``session-end`` flush the session's buffer; a session idle past
  ``observe.bufferMaxMinutes`` is flushed by the next hook that runs.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import ValidationError

if TYPE_CHECKING:
    from remnic.service.memory import Memory

AGENT_HOSTS = ("claude-code", "codex")
AGENT_EVENTS = ("session-start", "stop", "pre-compact", "session-end")
# The host event each hook is for the buffer: a Stop comes after every response, so the triggers
# decide; a compaction or the session's end flushes (a /clear ends the session as a reset).
_FLUSH_EVENT = {"stop": None, "pre-compact": "compaction", "session-end": "session-end"}


# --- agent hosts ---


def transcript_messages(lines: Iterable[str]) -> list[dict[str, str]]:
    """User and assistant turns of a Claude Code or Codex JSONL transcript, host text and tool
    traffic left out (the rules live in :mod:`remnic.observe.transcripts`); unreadable lines, such
    as a line the host is still writing, are skipped."""
    from remnic.service.observing import parse_transcript  # the pipeline's rules load only when used

    text = "\n".join(line.rstrip("\r\n") for line in lines)
    parsed = parse_transcript(text, "auto", source="transcript", strict=False)
    return [{"role": turn.role, "content": turn.text} for turn in parsed.turns]


def observe_transcript(memory: Memory, payload: Mapping[str, Any], host: str, hook: str = "stop") -> dict[str, Any]:
    """Hand the transcript's new turns to the observation pipeline: after ``stop`` the buffer's
    triggers decide when they become memories; ``pre-compact`` flushes before the host forgets the
    turns and ``session-end`` when the session is over. Then sessions idle past
    ``observe.bufferMaxMinutes`` (ended with no hook: a closed terminal, Codex) are flushed too."""
    transcript = payload.get("transcript_path")
    raw_session = payload.get("session_id")
    # A value of another type is a host (or version) remnic does not understand: an ``error`` the
    # hook's status reports, never a file named after a list's repr.
    if transcript is not None and not isinstance(transcript, str):
        return {"observed": 0, "error": f"transcript_path must be a string (got {type(transcript).__name__})"}
    if raw_session is not None and (isinstance(raw_session, bool) or not isinstance(raw_session, str | int)):
        return {"observed": 0, "error": f"session_id must be a string (got {type(raw_session).__name__})"}
    session = str(raw_session or "").strip()
    if not transcript or not session:
        return {"observed": 0, "detail": "the hook input names no transcript_path/session_id"}
    from remnic.service.observing import hook_deadline, observe_transcript_file

    deadline = hook_deadline(memory)  # this hook's flushes and the idle sweep's share observe.hookBudgetS
    try:
        # Only what the host appended since the last hook is read (from a byte offset, with a cap).
        result, read = observe_transcript_file(
            memory,
            f"{host}:{session}",
            transcript,
            source=f"{host}-hook",
            event=flush_event(hook, payload),
            deadline=deadline,
        )
    except OSError as exc:
        return {"observed": 0, "error": f"cannot read the transcript {transcript}: {exc.strerror or exc}"}
    except ValidationError as exc:
        if not any(p.field == "transcript_path" for p in exc.problems):
            raise
        return {"observed": 0, "error": exc.message}
    summary = result.to_dict()
    out = {"observed": result.buffered, **{k: v for k, v in summary.items() if k != "observations"}}
    out["transcriptBytesRead"] = read.bytes_read
    if read.bytes_left:
        out["transcriptBytesLeft"] = read.bytes_left  # over one run's read limit: the next hook goes on
    if read.skipped_long_line:
        out["skippedLongLine"] = True
    if read.rewritten:
        # Read again from its start: turns already handed over were skipped, the others taken.
        out["warning"] = f"{read.rewritten}; it was read again from its start"
    idle = memory.flush_idle_sessions(source=f"{host}-hook", skip=f"{host}:{session}", deadline=deadline)
    if idle:
        out["idleSessionsFlushed"] = [r.session_key for r in idle]
    if result.buffered:
        sha = memory.commit_state(f"{host} session {session[:40]}", source=f"{host}-hook")
        if sha is not None:
            out["stateCommit"] = sha
    return out


def flush_event(hook: str, payload: Mapping[str, Any]) -> str | None:
    """The buffer event of an agent hook (None: the triggers decide); a SessionEnd for ``/clear`` is a reset."""
    if hook == "session-end" and payload.get("reason") == "clear":
        return "reset"
    return _FLUSH_EVENT.get(hook)


def flush_idle(memory: Memory, host: str) -> list[str]:
    """At a session's start: flush the sessions left idle with turns waiting (their end never came)."""
    from remnic.service.observing import hook_deadline

    return [r.session_key for r in memory.flush_idle_sessions(source=f"{host}-hook", deadline=hook_deadline(memory))]


@dataclass(frozen=True)
class RepoContext:
    """What a session's working directory says about the work: repository, branch, recent work."""

    name: str
    branch: str | None
    subjects: tuple[str, ...]
    changed: tuple[str, ...]
    project: Any = None

    def query(self) -> str:
        """The recall query a new session starts with (``$REMNIC_SESSION_QUERY`` replaces it)."""
        words = [self.name.replace("-", " ").replace("_", " ")]
        if self.branch and self.branch not in ("main", "master", "trunk", "develop"):
            words.append(self.branch.replace("/", " ").replace("-", " ").replace("_", " "))
        words += self.subjects
        words += [Path(f).stem.replace("-", " ").replace("_", " ") for f in self.changed]
        return " ".join(w for w in words if w.strip())[:1000]


def _git(cwd: str, *args: str) -> list[str]:
    """A read-only git command in the user's working directory: never waits on or takes git's
    locks, runs no fsmonitor, gives up after two seconds; no output when anything fails."""
    return [line for line in _git_out(cwd, *args).splitlines() if line.strip()]


def _git_out(cwd: str, *args: str) -> str:
    """:func:`_git`'s output as git wrote it ('' when anything fails)."""
    try:
        proc = subprocess.run(
            ["git", "-C", cwd, "-c", "core.fsmonitor=false", "--no-optional-locks", *args],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout if proc.returncode == 0 else ""


def repo_context(memory: Memory, cwd: str, *, subjects: int = 5, changed: int = 10) -> RepoContext:
    """The repository around ``cwd``: its name and branch (read from its files), its recent commit
    subjects and changed files (git log and status, read-only)."""
    project = memory.project_context(cwd=cwd)
    name = project.name if project is not None and project.name else Path(cwd).name
    logs = _git(cwd, "log", f"-n{max(0, subjects)}", "--no-color", "--format=%s") if subjects > 0 else []
    # -z: the plain output C-quotes a name with non-ASCII characters, a tab or a quote.
    status = _git_out(cwd, "status", "--porcelain", "-z", "--untracked-files=normal")
    files = _status_paths(status)[: max(0, changed)]
    return RepoContext(name, getattr(project, "branch", None), tuple(logs), tuple(files), project)


def _status_paths(out: str) -> list[str]:
    """The changed paths of ``git status --porcelain -z`` (a rename's new name; its old one follows it)."""
    fields = out.split("\0")
    paths: list[str] = []
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if "R" in entry[:2] or "C" in entry[:2]:
            i += 1
    return paths


def _lines(items: Iterable[Any], budget: int, seen: set[str], min_chars: int = 200) -> list[str]:
    """One line per memory, in the order given, within ``budget`` characters (0: no limit).

    A line that does not fit in what is left is cut at a word boundary (as recall trims a hit),
    leaving the lines after it their fair share; with fewer than ``min_chars`` left it is skipped —
    never the first line — and the shorter lines after it still go in. One long rule must not take
    every other pinned memory out of the session, nor itself vanish."""
    entries: list[tuple[str, str, str, str]] = []
    for record in items:
        safety = getattr(record, "safety", "safe")  # recall hits have one; listed records are active
        if record.id in seen or safety == "blocked" or any(e[0] == record.id for e in entries):
            continue
        # Unreviewed text (a pending suggestion …) must not read as a fact to the agent.
        flag = "" if safety == "safe" else "[requires-review: not confirmed] "
        entries.append(
            (record.id, f"- [{record.category}] {flag}", " ".join(record.content.split()), f" ({record.id})")
        )
    sizes = [len(head) + len(text) + len(tail) + 1 for _, head, text, tail in entries]  # +1: the newline
    fair = max(min_chars, budget // max(1, len(entries)))
    after = [0] * (len(entries) + 1)  # what the lines after each one claim: their size, up to a fair share
    for i in range(len(entries) - 1, -1, -1):
        after[i] = after[i + 1] + min(sizes[i], fair)
    out: list[str] = []
    used = 0
    for i, (rid, head, text, tail) in enumerate(entries):
        line = head + text + tail
        left = budget - used
        if budget and len(line) > left:
            if out and left < min_chars:
                continue
            room = min(left, max(min_chars, left - after[i + 1])) - len(head) - len(tail)
            if room < 1:
                continue
            line = head + _cut(text, room) + tail
        out.append(line)
        used += len(line) + 1
        seen.add(rid)
    return out


def _cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary and marked with an ellipsis
    (as recall trims a hit)."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return text[:limit]
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space > len(head) // 2:
        head = head[:space]
    return head.rstrip() + "…"


def session_context(memory: Memory, payload: Mapping[str, Any]) -> str:
    """What a new session starts with: the pinned memories (rules, principles, important preferences,
    within ``hooks.pinnedBudgetChars``) whatever the project, then what recall finds for the
    repository's context — its name, branch, recent commit subjects and changed files (or
    $REMNIC_SESSION_QUERY) — with that project's memories boosted. Without an index yet, the most
    important and most recent memories instead (a session start never waits for a full build)."""
    from remnic.service.browse import newest_first

    hooks = memory.settings.hooks
    cwd = str(payload.get("cwd") or os.getcwd())
    repo = repo_context(memory, cwd, subjects=hooks.git_subjects)
    query = os.environ.get("REMNIC_SESSION_QUERY") or repo.query()
    seen: set[str] = set()
    min_chars = memory.settings.recall.budget_min_chars
    pinned = (
        _lines(memory.pinned_memories(), hooks.pinned_budget_chars, seen, min_chars)
        if hooks.pinned_budget_chars
        else []
    )
    hits: list[Any] | None  # recall's hits, or plain records when there is no usable index
    try:
        hits = (
            list(memory.recall(query, top_k=hooks.session_top_k, project=repo.project, source="session-start"))
            if query.strip() and memory.has_index()
            else None
        )
    except Exception:  # noqa: BLE001 - no usable index or model: the plain fallback below
        hits = None
    if hits is None:
        records = sorted(memory.list(status="active"), key=newest_first)
        records.sort(key=lambda r: -r.importance)  # stable: most important first, newest first within
        hits = records[: hooks.session_top_k]
    recalled = _lines(hits, memory.settings.recall.budget_chars, seen, min_chars)
    if not pinned and not recalled:
        return ""
    where = repo.name + (f" (branch {repo.branch})" if repo.branch else "")
    parts = [f"Memories from remnic ({memory.root}); edit them as files there, or with `remnic store`/`remnic forget`."]
    if pinned:
        parts += ["", "Pinned (rules, principles, key preferences):", *pinned]
    if recalled:
        parts += ["", f"Relevant to {where}:", *recalled]
    return "\n".join(parts)


def session_start_output(memory: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    context = session_context(memory, payload)
    if not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
