"""What the API and the HTTP server derive from the settings: one place for start-up and config reload.

:class:`~.api.Api` and :class:`~.http.RemnicHTTPServer` call these when they are built, and
:class:`~.config_watch.ConfigWatch` calls :func:`apply_settings` after a config file changed, so a
setting gives the same operations, namespace policy, limits and Host check whether the server
started with it or read it later. Settings only a restart applies (the bound address, the
connection pool) are not derived here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remnic.config import Settings

from .auth import NamespacePolicy
from .schema import build_operations
from .transport import HostCheck

if TYPE_CHECKING:
    from .api import Api


def apply_api_settings(api: Api, settings: Settings) -> None:
    """Operations (their limits and defaults are settings: store.maxContentChars…), the namespace
    policy, the write rate limit and the idempotency window."""
    api.operations = build_operations(settings.store)
    api.policy = NamespacePolicy(settings.namespaces)
    api.limiter.limit, api.limiter.window_s = settings.server.write_rate_limit, settings.server.write_rate_window_s
    api.idempotency.window_s = settings.server.idempotency_window_s


def apply_http_settings(http: Any, settings: Settings) -> None:
    """The Host check (the address as it was asked to bind, the bound port, server.allowedHosts) and
    the MCP tool names. ``http`` is a bound :class:`~.http.RemnicHTTPServer`."""
    # The name asked for, not the resolved address: a client uses that name in its Host header.
    http.host_check = HostCheck(http.bind_host, http.server_address[1], settings.server.allowed_hosts)
    http.mcp.style = settings.mcp.tool_names


def apply_settings(api: Api, http: Any, settings: Settings) -> None:
    """Everything derived from the settings, again (a config reload); ``http`` may be None."""
    apply_api_settings(api, settings)
    if http is not None:
        apply_http_settings(http, settings)
