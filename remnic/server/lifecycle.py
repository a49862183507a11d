"""How the HTTP server stops: gracefully on a signal, and by itself when its memory directory goes.

A stop (SIGTERM from `remnic daemon stop`, SIGHUP when the terminal closes, Ctrl-C) closes the
listening socket first, then lets the requests already taken finish, up to ``DRAIN_GRACE_S``: a
commit under way lands instead of leaving ``.git/index.lock``, a transaction journal or untracked
files of a half-done flush behind. A server whose memory directory was deleted or moved stops too,
so it recreates nothing there (see :mod:`.presence`).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from . import presence

DRAIN_GRACE_S = 8.0
"""How long requests in progress get to finish on a stop: less than `remnic daemon stop`'s 10 s before
SIGKILL, so the stop stays graceful."""
log = logging.getLogger("remnic.server")


class GracefulStop:
    """Mixed into :class:`remnic.server.http.RemnicHTTPServer` (before ``HTTPServer``)."""

    api: Any

    def init_lifecycle(self) -> None:
        self.draining = False
        """Set once a stop began: responses say ``Connection: close``."""
        self.stopped_because: str | None = None
        """Why the server stopped by itself (its memory directory went away), else None."""
        self._in_flight = 0
        self._idle = threading.Condition()

    def started_request(self) -> None:
        with self._idle:
            self._in_flight += 1

    def finished_request(self) -> None:
        with self._idle:
            self._in_flight -= 1
            self._idle.notify_all()

    def shutdown(self) -> None:
        self.draining = True
        super().shutdown()  # type: ignore[misc]

    def drain(self, grace_s: float = DRAIN_GRACE_S) -> int:
        """Wait until no request is in progress, at most ``grace_s``; how many were still running."""
        deadline = time.monotonic() + grace_s
        with self._idle:
            while self._in_flight > 0 and (left := deadline - time.monotonic()) > 0:
                self._idle.wait(left)
            return self._in_flight

    def finish_in_flight(self) -> None:
        """Called once the listening socket is closed: the requests already taken finish (bounded)."""
        if not self._in_flight:
            return
        log.info("stopping: waiting up to %gs for %d request(s) in progress", DRAIN_GRACE_S, self._in_flight)
        cut = self.drain()
        if cut:
            log.warning("stopping with %d request(s) still running after %gs", cut, DRAIN_GRACE_S)

    def check_gone(self) -> bool:
        """Stop (once) when the memory directory was deleted or moved: a server left running would
        recreate parts of it and take turns it can never commit. Restored, it is started again."""
        if self.stopped_because is not None:
            return True
        why = presence.missing(self.api.memory.root)
        if why is None:
            return False
        self.stopped_because = why
        log.error("%s: stopping the server (restore it, then start the server again)", why)
        # shutdown() waits for serve_forever, whose thread this is: ask from another one.
        threading.Thread(target=self.shutdown, name="remnic-stop", daemon=True).start()
        return True
