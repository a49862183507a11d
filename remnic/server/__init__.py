"""The optional local server: an HTTP API and MCP (stdio and HTTP) over the one service layer.

- :mod:`.schema` declares every operation's inputs (HTTP validation and MCP input schemas);
- :mod:`.api` runs operations: validate → namespace check → ``Memory`` → reply;
- :mod:`.auth` holds bearer tokens, principals and the namespace policy;
- :mod:`.limits` the write rate limit and idempotency replay;
- :mod:`.http` the HTTP server, :mod:`.routes` its routing table, :mod:`.bodies` reading request bodies;
  :mod:`.transport` deadlines, the connection cap, single headers and the Host check; :mod:`.mcp` the MCP protocol and stdio loop; :mod:`.outputs` output schemas; :mod:`.compat` the
  original Remnic's request and response shapes;
- :mod:`.daemon` runs ``remnic serve`` in the background; :mod:`.lifecycle` stops it gracefully (and when its
  memory directory goes, which :mod:`.presence` checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from remnic.lazy import lazy_exports

if TYPE_CHECKING:
    from .api import Api, Reply
    from .auth import Authenticator, NamespacePolicy, TokenStore, default_tokens_path
    from .http import RemnicHTTPServer, create_server, running_server, serve_in_thread
    from .mcp import McpServer, McpSession, run_stdio

# Loaded on first use: `remnic daemon status` and `stop` need only :mod:`.daemon`, not the API, the
# recall pipeline and numpy behind it (they answer in a fraction of the time).
_WHERE = {
    **dict.fromkeys(("Api", "Reply"), "api"),
    **dict.fromkeys(("Authenticator", "NamespacePolicy", "TokenStore", "default_tokens_path"), "auth"),
    **dict.fromkeys(("RemnicHTTPServer", "create_server", "running_server", "serve_in_thread"), "http"),
    **dict.fromkeys(("McpServer", "McpSession", "run_stdio"), "mcp"),
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())


__all__ = [
    "Api",
    "Authenticator",
    "McpServer",
    "McpSession",
    "NamespacePolicy",
    "RemnicHTTPServer",
    "Reply",
    "TokenStore",
    "create_server",
    "default_tokens_path",
    "run_stdio",
    "running_server",
    "serve_in_thread",
]
