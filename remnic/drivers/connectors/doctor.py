"""``connectors doctor``: is remnic installed in the host's config, and do its hooks work.

Each handler is fired as the host fires it, with ``$REMNIC_HOOK_STATUS`` naming a file where
``remnic hooks run`` writes how the run went (``{"ok": …, "error": …}``): the scripts never fail
a session, so their exit code says nothing, and a status is read rather than guessed from log text.

A check is ``ok``, ``fail`` or ``warn`` (``status``; ``ok`` is False only for a failure): a warning
is what remnic cannot verify (whether Codex trusts a handler it cannot hash), never a failure.
Stop, PreCompact and SessionEnd are fired on a sample transcript against a throwaway memory
repository, so "fires" means their observe path works and the user's repository is left as it was.
With ``fire_hooks=False`` no handler runs: the fire checks are left out of ``checks`` and named in
``skipped`` (``fired`` False), so a re-check of the config never reports them as passed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remnic.errors import UsageError

from .codextrust import Trust, codex_trust
from .config import read_config
from .hosts import EVENTS, Host, Ours, matcher_covers, ours
from .merge import installed, session_matcher


def _check(name: str, ok: bool, detail: str, *, warn: bool = False) -> dict[str, Any]:
    status = "fail" if not ok else "warn" if warn else "ok"
    return {"name": name, "ok": ok, "status": status, "detail": detail}


def codex_hooks_enabled(codex_home: Path) -> tuple[bool, str]:
    """Whether Codex's config turns hooks off (``[features] hooks = false``, or the older ``codex_hooks``)."""
    config = codex_home / "config.toml"
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return True, f"{config} does not exist: hooks are on by default"
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return False, f"cannot read {config}: {exc}"
    raw = data.get("features")
    features: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for key in ("hooks", "codex_hooks"):
        if features.get(key) is False:
            return False, f"{config} sets [features] {key} = false: Codex runs no hooks"
    return True, f"{config} does not turn hooks off"


def claude_hooks_enabled(settings: Mapping[str, Any], path: Path) -> tuple[bool, str]:
    """Whether Claude Code's settings turn every hook off (``"disableAllHooks": true``)."""
    if settings.get("disableAllHooks") is True:
        return False, f'{path} sets "disableAllHooks": true: Claude Code runs no hooks'
    return True, f"{path} does not turn hooks off"


def hooks_enabled(h: Host, path: Path, settings: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the host runs hooks at all, by the config beside ``path``."""
    return codex_hooks_enabled(path.parent) if h.id == "codex" else claude_hooks_enabled(settings, path)


def fire(command: str, payload: Mapping[str, Any], *, cwd: str, timeout: float = 60) -> dict[str, Any]:
    """Run a hook command the way the host does (``sh -c``, the payload as JSON on stdin): its exit
    code, stdout, what remnic logged, and the status it reported (None: remnic never reported)."""
    with tempfile.TemporaryDirectory(prefix="remnic-doctor-") as tmp:
        log, status = Path(tmp) / "hook.log", Path(tmp) / "status.json"
        env = {**os.environ, "REMNIC_HOOK_LOG": str(log), "REMNIC_HOOK_STATUS": str(status)}
        try:
            proc = subprocess.run(
                ["sh", "-c", command],
                input=json.dumps(payload),
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=cwd,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {"code": -1, "out": "", "log": f"did not finish within {timeout:g}s", "status": None}
        logged = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        try:
            reported = json.loads(status.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            reported = None
        return {"code": proc.returncode, "out": proc.stdout, "log": logged, "status": reported}


def doctor(h: Host, path: Path, *, cwd: str, fire_hooks: bool = True) -> dict[str, Any]:
    """Is remnic installed in the host's config, and do its hooks run: the memory repository they name
    exists, the host runs hooks, and each command fired with a sample payload exits 0 and reports
    a successful run (session start: valid output too). ``fire_hooks=False``: every check but the
    firing ones, which ``skipped`` names."""
    checks: list[dict[str, Any]] = []
    skipped: list[str] = []  # the fire checks not run (fire_hooks=False): never reported as passed
    data: dict[str, Any] = {}
    try:
        config = read_config(path)
        data = config.data
        detail = f"{path} is valid JSON" if config.exists else f"{path} does not exist"
        checks.append(_check("config file", config.exists, detail))
    except UsageError as exc:
        checks.append(_check("config file", False, exc.message))
    events = installed(data, h)
    for event, command in events.items():
        checks.append(_check(f"{event} hook", command is not None, command or f"no remnic hook for {event} in {path}"))
    enabled, detail = hooks_enabled(h, path, data)
    checks.append(_check(f"{h.id} hooks enabled", enabled, detail))
    handlers: dict[str, Ours] = {}
    for event, command in events.items():
        handler = ours({"type": "command", "command": command}) if command is not None else None
        if handler is not None:
            handlers[event] = handler
    if "SessionStart" in handlers:
        checks.append(_matcher_check(h, data))
    if h.id == "codex" and enabled:  # trust matters only where Codex runs hooks at all
        checks += [_trust_check(t) for t in codex_trust(data, h, path)]
    checks += _memory_dirs(list(handlers.values()))
    with tempfile.TemporaryDirectory(prefix="remnic-doctor-sample-") as scratch:
        sample: Sample | None = None
        for event, handler in handlers.items():
            if handler.python is not None:
                checks.append(_check(f"{event} python", os.access(handler.python, os.X_OK), handler.python))
            checks.append(_check(f"{event} script", os.access(handler.script, os.X_OK), handler.script))
            if not fire_hooks:
                skipped.append(f"{event} fires")
                continue
            if event == "SessionStart" or not _usable(handler):
                # A repository the hooks lost: fired on it as it is, the hook itself says what is wrong.
                payload = {"session_id": "remnic-doctor", "cwd": cwd, "hook_event_name": event}
                payload.update({"source": "startup"} if event == "SessionStart" else {})
                checks.append(_fired(event, fire(handler.command, payload, cwd=cwd)))
                continue
            sample = sample or Sample.make(Path(scratch))
            checks.append(_fired_on_sample(event, handler, h.id, sample, cwd))
    if fire_hooks:
        checks += _project_modules(h, handlers)
    elif handlers:
        skipped.append("project modules ignored")
    return {
        "host": h.id,
        "configPath": str(path),
        "checks": checks,
        "healthy": all(c["ok"] for c in checks),
        "warnings": [c["name"] for c in checks if c["status"] == "warn"],
        "fired": fire_hooks,
        "skipped": skipped,
    }


SAMPLE_TURNS = 2
_SAMPLE = ("We deploy the billing service on Tuesdays.", "Noted: billing deploys go out on Tuesdays.")


@dataclass(frozen=True)
class Sample:
    """A throwaway memory repository to observe host transcripts of :data:`SAMPLE_TURNS` turns into;
    ``problem`` when it could not be made."""

    repo: Path
    problem: str | None = None

    @classmethod
    def make(cls, folder: Path) -> Sample:
        from remnic.errors import RemnicError
        from remnic.service.memory import Memory

        repo = folder / "memory"
        try:
            Memory.init(repo).close()
        except (RemnicError, OSError) as exc:
            detail = exc.describe() if isinstance(exc, RemnicError) else str(exc)
            return cls(repo, f"cannot make a throwaway memory repository to fire it in: {detail}")
        return cls(repo)

    def transcript(self, host: str, hook: str) -> Path:
        """The sample as ``host`` writes it, for one hook: its own session and turn ids (turns with the
        ids of another session's would be taken for a fork's copies of them, and skipped)."""
        path = self.repo.parent / f"{hook}.jsonl"
        lines = _sample_lines(host, f"remnic-doctor-{hook}")
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return path


def _sample_lines(host: str, session: str) -> list[dict[str, Any]]:
    """The sample conversation as the host writes its transcript (a Codex rollout, a Claude Code session)."""
    lines: list[dict[str, Any]] = []
    for i, (role, text) in enumerate(zip(("user", "assistant"), _SAMPLE, strict=True)):
        stamp = f"2026-01-01T00:00:0{i}.000Z"
        if host == "codex":
            kind = "input_text" if role == "user" else "output_text"
            message = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
            lines.append({"timestamp": stamp, "type": "response_item", "payload": {**message, "id": f"{session}-{i}"}})
        else:
            message = {"role": role, "content": [{"type": "text", "text": text}]}
            line = {"type": role, "uuid": f"{session}-{i}", "timestamp": stamp, "sessionId": session}
            lines.append({**line, "message": message})
    return lines


_TRUST_HOW = "run `codex`, then /hooks, and trust remnic's hooks"


def _trust_check(t: Trust) -> dict[str, Any]:
    """Codex runs a hook of the user's hooks.json only while its trust matches the handler."""
    name = f"{t.event} trusted by Codex"
    if t.status == "trusted":
        return _check(name, True, t.detail)
    if t.status == "unknown":
        return _check(name, True, f"cannot verify that Codex trusts it ({t.detail}); {_TRUST_HOW} if not", warn=True)
    return _check(name, False, f"Codex skips it, silently: {t.detail}; {_TRUST_HOW}")


# A json.py that leaves a mark when imported: a hook run in the session's folder must not import it.
_DECOY = (
    "import os\n"
    "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'imported'), 'w').close()\n"
    "raise ImportError('a decoy json.py of remnic connectors doctor was imported')\n"
)


def _project_modules(h: Host, handlers: Mapping[str, Ours]) -> list[dict[str, Any]]:
    """Fire one handler of each hooks folder in a folder holding a json.py, as a session in a
    project with one: the host runs hooks there, and Python must not import the project's files."""
    folders: dict[str, tuple[str, Ours]] = {}
    for event, handler in sorted(handlers.items(), key=lambda e: e[0] == "SessionStart"):  # the cheapest first
        folders.setdefault(os.path.dirname(os.path.dirname(handler.script)), (event, handler))
    checks = []
    for folder, (event, handler) in folders.items():
        with tempfile.TemporaryDirectory(prefix="remnic-doctor-project-") as project:
            (Path(project) / "json.py").write_text(_DECOY, encoding="utf-8")
            payload = {"session_id": "remnic-doctor", "cwd": project, "hook_event_name": event}
            fire(handler.command, payload, cwd=project)
            imported = (Path(project) / "imported").exists()
        checks.append(
            _check(
                "project modules ignored",
                not imported,
                f"the hooks in {folder} import Python files from the session's folder (a project's json.py "
                f"runs, its uuid.py stops remnic): an older remnic's; run `remnic connectors install {h.id}`"
                if imported
                else f"a json.py in the session's folder is not imported ({folder})",
            )
        )
    return checks


def _matcher_check(h: Host, data: Mapping[str, Any]) -> dict[str, Any]:
    """Whether remnic's SessionStart group runs on every session source remnic relies on."""
    _, matcher = session_matcher(data)
    if matcher_covers(matcher, h.session_matcher):
        return _check("SessionStart matcher", True, "every session start" if matcher is None else repr(matcher))
    missing = [s for s in h.session_matcher.split("|") if not matcher_covers(matcher, s)]
    return _check(
        "SessionStart matcher",
        False,
        f"remnic's SessionStart group has the matcher {json.dumps(matcher)}: sessions started by "
        f"{', '.join(missing)} get no memories; run `remnic connectors install {h.id}` to widen it to "
        f"{h.session_matcher!r}",
    )


def _memory_dirs(handlers: list[Ours]) -> list[dict[str, Any]]:
    """One check per memory repository the hooks name (``REMNIC_MEMORY_DIR``): it must exist, a git repository."""
    checks = []
    for where in dict.fromkeys(o.memory_dir for o in handlers if o.memory_dir):
        root = Path(where)
        if not root.is_dir():
            ok, detail = False, f"{root} does not exist (the hooks name it in REMNIC_MEMORY_DIR)"
        elif not (root / ".git").exists():
            ok, detail = False, f"{root} is not a git repository (the hooks name it in REMNIC_MEMORY_DIR)"
        else:
            ok, detail = True, str(root)
        if not ok:
            detail += f"; run `remnic init {shlex.quote(str(root))}` or install again with the right --memory-dir"
        checks.append(_check("memory repository", ok, detail))
    return checks


def _usable(handler: Ours) -> bool:
    """Whether the memory repository a handler names (if any) is there: a git repository."""
    return handler.memory_dir is None or (Path(handler.memory_dir) / ".git").exists()


def _fired_on_sample(event: str, handler: Ours, host: str, sample: Sample, cwd: str) -> dict[str, Any]:
    """Fire an observing handler as the host does, on a sample transcript, against a throwaway memory
    repository (its command with ``REMNIC_MEMORY_DIR`` pointed there): it must take the sample's turns
    and, PreCompact and SessionEnd, flush them. The user's repository gets no memory, commit or state."""
    name = f"{event} fires"
    if sample.problem:
        return _check(name, False, sample.problem)
    hook = EVENTS[event]
    transcript = sample.transcript(host, hook)
    payload = {"session_id": f"remnic-doctor-{hook}", "transcript_path": str(transcript), "cwd": cwd}
    payload.update(hook_event_name=event, **({"reason": "other"} if event == "SessionEnd" else {}))
    env = {**handler.env, "REMNIC_MEMORY_DIR": str(sample.repo)}
    command = " ".join([*(f"{k}={shlex.quote(v)}" for k, v in env.items()), shlex.quote(handler.script)])
    run = fire(command, payload, cwd=cwd)
    checked = _fired(event, run)
    if not checked["ok"]:
        return checked
    line = next((x for x in reversed(run["log"].splitlines()) if x.startswith(f"remnic {hook}: {{")), "")
    try:
        result = json.loads(line.split(": ", 1)[1])
    except (IndexError, ValueError):
        result = None
    if not isinstance(result, dict):
        return _check(name, False, f"ran but logged no observe result for the sample transcript: {line[:200]!r}")
    observed, flushes = result.get("observed"), result.get("flushes") or []
    where = f"a sample transcript of {SAMPLE_TURNS} turns in a throwaway repository"
    if observed != SAMPLE_TURNS:
        return _check(name, False, f"ran but observed {observed} of {where}: {line[:200]}")
    if event != "Stop" and not any(isinstance(f, dict) and f.get("commit") for f in flushes):
        return _check(name, False, f"ran and took {where} but flushed nothing: {line[:200]}")
    done = f"ran; observed {where}" + ("" if event == "Stop" else ", and flushed them")
    return _check(name, True, f"{done} ({line[:160]})")


def _fired(event: str, run: Mapping[str, Any]) -> dict[str, Any]:
    name = f"{event} fires"
    code, out, log, status = run["code"], run["out"], run["log"].strip(), run["status"]
    if code != 0:
        return _check(name, False, f"exit {code}: {log[-300:]}")
    if not isinstance(status, dict):
        hint = f" (log: {log.splitlines()[-1][:200]})" if log else ""
        return _check(name, False, f"exited 0 but remnic reported no run (is REMNIC_PYTHON or remnic on PATH?){hint}")
    if not status.get("ok"):
        return _check(name, False, str(status.get("error") or "remnic reported a failure")[:300])
    if event == "SessionStart":
        if not out.strip():
            count = status.get("activeMemories")
            if isinstance(count, int) and count > 0:
                why = f"none of the {count} active memories in {status.get('memoryDir')} is pinned or recalled here"
                return _check(name, True, f"ran; injected nothing ({why})")
            return _check(name, True, f"ran; nothing to inject (no memories yet in {status.get('memoryDir')})")
        try:
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            return _check(name, False, f"printed something that is not the host's hook JSON: {out[:200]!r}")
        return _check(name, True, f"ran; injects {len(context)} characters of memories")
    line = next((x for x in reversed(log.splitlines()) if x.startswith(f"remnic {EVENTS[event]}:")), "")
    return _check(name, True, "ran; " + (line or f"remnic {EVENTS[event]}: ok")[:200])
