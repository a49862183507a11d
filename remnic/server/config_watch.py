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

from .auth import NamespacePolicy
from .schema import build_operations

log = logging.getLogger("remnic.server")

RESTART_SECTIONS = frozenset({"embed", "index", "git"})
"""Whole sections read once: the loaded embedding model, the index built with them, the git set-up."""
RESTART_KEYS = frozenset({"server.host", "server.port", "server.maxConnections", "store.gitRetryS"})
"""Single settings read once: the bound address, the connection pool's size, the git ledger's retry."""


def needs_restart(key: str) -> bool:
    """Whether a dotted key (``server.port``) takes effect only when the server starts again."""
    return key in RESTART_KEYS or key.split(".", 1)[0] in RESTART_SECTIONS


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
        self._apply(current)
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

    def _apply(self, settings: Settings) -> None:
        """What the API and the HTTP server derived from the settings when they started."""
        api = self.api
        api.operations = build_operations(settings.store)
        api.policy = NamespacePolicy(settings.namespaces)
        api.limiter.limit, api.limiter.window_s = settings.server.write_rate_limit, settings.server.write_rate_window_s
        api.idempotency.window_s = settings.server.idempotency_window_s
        http = self.http
        if http is not None:
            from .transport import HostCheck

            http.host_check = HostCheck(http.server_address[0], http.server_address[1], settings.server.allowed_hosts)
            http.mcp.style = settings.mcp.tool_names

    def report(self) -> None:
        """What health says about the settings in use."""
        out: dict[str, Any] = {"configStale": bool(self.stale)}
        if self.stale:
            out["configStaleKeys"] = sorted(self.stale)
            out["configStaleNote"] = (
                f"{', '.join(sorted(self.stale))} changed since the server started "
                f"({', '.join(sorted(set(self.stale.values())))}); they apply after `remnic daemon restart`"
            )
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
