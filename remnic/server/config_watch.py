"""A running server follows its config files: a changed file is read again before the next request.

The server's settings are one :class:`Settings` object shared by the :class:`Memory`, the API and the
HTTP server. When any file :func:`load_settings` reads changes (its path, mtime or size: a few stats
per request), the files are loaded again and the new values are put into that object, so a namespace
policy added to the user's config, a ``recall.topK`` a ``git pull`` brought, a new
``server.writeRateLimit`` apply from the next request on, and the CLI (which compares its settings
with the server's) keeps running its commands here. Settings fixed when the server started (the
address it is bound to, its thread pool, the loaded model, the git set-up) keep their old values
until a restart: the server logs them and ``health`` reports ``configStale``.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from remnic.config import SECTIONS, Settings, load_settings
from remnic.config.load import config_fingerprint
from remnic.config.settings import camel
from remnic.errors import RemnicError

log = logging.getLogger("remnic.server")

RESTART_SECTIONS = frozenset({"embed", "index", "git"})
"""Whole sections read once: the loaded embedding model, the index built with them, the git set-up."""
RESTART_KEYS = frozenset({"server.host", "server.port", "server.maxConnections", "store.gitRetryS"})
"""Single settings read once: the bound address, the connection pool's size, the git ledger's retry."""


def needs_restart(key: str) -> bool:
    """Whether a dotted key (``server.port``) takes effect only when the server starts again."""
    return key in RESTART_KEYS or key.split(".", 1)[0] in RESTART_SECTIONS


def restart_values(settings: Settings) -> dict[str, Any]:
    """The settings only a restart applies (dotted key → value, as JSON gives it back): what a server
    records at start, so a CLI can tell which of its own settings that server does not run with."""
    values = json_safe(settings.to_dict())
    return {
        f"{section}.{key}": value
        for section in SECTIONS
        for key, value in (values.get(section) or {}).items()
        if needs_restart(f"{section}.{key}")
    }


def stale_since(recorded: Any, settings: Settings) -> dict[str, str]:
    """The restart-only keys whose value in ``settings`` differs from :func:`restart_values` a server
    recorded at start → the file that set the new value ("the defaults" when none does)."""
    if not isinstance(recorded, dict):
        return {}
    now = restart_values(settings)
    return {k: settings.origins.get(k, "the defaults") for k in sorted(recorded) if k in now and now[k] != recorded[k]}


def stale_report(stale: dict[str, str]) -> dict[str, Any]:
    """Health's ``configStale`` keys for changed settings that need a restart (key → file that changed it)."""
    out: dict[str, Any] = {"configStale": bool(stale)}
    if stale:
        out["configStaleKeys"] = sorted(stale)
        out["configStaleNote"] = (
            f"{', '.join(sorted(stale))} changed since the server started "
            f"({', '.join(sorted(set(stale.values())))}); they apply after `remnic daemon restart`"
        )
    return out


def changed_keys(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The dotted keys whose values differ between two :meth:`Settings.to_dict` results."""
    out = []
    for section in SECTIONS:
        a, b = old.get(section) or {}, new.get(section) or {}
        out += [f"{section}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return out


class ConfigWatch:
    """Reloads the settings of one server when its config files change (see the module's docstring)."""

    def __init__(self, api: Any, http: Any = None, *, env: Any = None) -> None:
        self.api = api
        self.http = http
        self.settings: Settings = api.settings
        self.env = os.environ if env is None else env
        self.cwd = Path.cwd()  # the server reads its config files from here, as it did at start
        self._lock = threading.Lock()
        self._seen = self._fingerprint()
        self.stale: dict[str, str] = {}
        """Changed settings that need a restart → the file that changed them."""
        self.error: str | None = None
        """Why the config files could not be read again (the old settings stay in use)."""
        self.report()

    def _fingerprint(self) -> tuple[tuple[str, int, int], ...]:
        return config_fingerprint(self.settings.memory_dir, self.cwd, self.env)

    def check(self) -> None:
        """Reload when a config file changed since the last look (cheap when none did)."""
        try:
            seen = self._fingerprint()
        except OSError:
            return
        if seen == self._seen:
            return
        with self._lock:
            if seen == self._seen:
                return
            self.reload()
            self._seen = seen  # after the reload: a request checking meanwhile waits for it on the lock

    def reload(self) -> None:
        current = self.settings
        try:
            fresh = load_settings(str(current.memory_dir), cwd=self.cwd, env=self.env)
        except (RemnicError, OSError) as exc:
            problems = [p.describe() for p in getattr(exc, "problems", None) or []]
            # The error's own text says "each listed below": health has no "below", so list them here.
            self.error = "; ".join(problems) if problems else str(getattr(exc, "message", None) or exc)
            log.error("config changed but cannot be read; keeping the settings in use: %s", self.error)
            self.report()
            return
        self.error = None
        before = current.to_dict()
        wanted = changed_keys(before, fresh.to_dict())
        restart = [k for k in wanted if needs_restart(k)]
        for name in SECTIONS:
            section = getattr(fresh, name)
            keep = {
                f.name: getattr(getattr(current, name), f.name)
                for f in fields(section)
                if needs_restart(f"{name}.{camel(f.name)}")
            }
            setattr(current, name, replace(section, **keep) if keep else section)
        memory_origin = current.origins.get("memoryDir")
        current.origins = {**fresh.origins, **({"memoryDir": memory_origin} if memory_origin else {})}
        current.config_files = fresh.config_files
        current.warnings = fresh.warnings
        from .derived import apply_settings  # the API's modules: not for a CLI that reads restart_values

        apply_settings(self.api, self.http, current)
        applied = [k for k in wanted if k not in restart]
        # Compared with the values kept, so a key changed back to what the server started with drops out.
        self.stale = {key: fresh.origins.get(key, "the defaults") for key in restart}
        if applied:
            log.info("config changed: now using %s", ", ".join(applied))
        if restart:
            log.warning(
                "config changed: %s take effect only after a restart (`remnic daemon restart`)", ", ".join(restart)
            )
        self.report()

    def report(self) -> None:
        """What health says about the settings in use."""
        out = stale_report(self.stale)
        if self.error:
            out["configError"] = self.error
        self.api.config_report = out

    def mismatch(self, settings: Any) -> str:
        """Why a client's settings (a :meth:`Settings.to_dict`) are not this server's, for its fallback note."""
        keys = changed_keys(json_safe(self.settings.to_dict()), settings if isinstance(settings, dict) else {})
        stale = [k for k in keys if k in self.stale]
        if stale:
            return (
                f"the server runs with settings from before its config changed ({', '.join(stale)}: "
                "they need a restart); `remnic daemon restart`"
            )
        if self.error:
            return f"the server cannot read the changed config ({self.error})"
        shown = ", ".join(keys[:5]) + (", …" if len(keys) > 5 else "")
        return f"this command's settings differ from the server's ({shown or 'memoryDir'}: another config file here?)"


def json_safe(value: Any) -> Any:
    """A value as it comes back from JSON (the client's settings arrive that way)."""
    import json

    return json.loads(json.dumps(value, default=str))
