"""What an operation answers, before a transport (HTTP or MCP) frames it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from remnic.errors import RemnicError
from remnic.render.xray import dumps_json


@dataclass
class Reply:
    status: int
    body: Any
    text: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.text:
            self.text = dumps_json(self.body)


def error_reply(exc: RemnicError, request_id: str | None = None) -> Reply:
    """The ``{error, code, details?}`` body for a service or server error."""
    body = exc.to_dict()
    headers: dict[str, str] = {}
    retry = getattr(exc, "retry_after_s", None)
    if retry is not None:
        headers["Retry-After"] = str(max(1, int(retry + 0.999)))
    allow = getattr(exc, "allow", None)
    if allow:
        headers["Allow"] = ", ".join(allow)
    if exc.http_status >= 500 and request_id:
        body["requestId"] = request_id
    return Reply(exc.http_status, body, headers=headers)


def internal_error(request_id: str) -> Reply:
    return Reply(
        500,
        {
            "error": f"internal error; see the server log for request id {request_id}",
            "code": "internal_error",
            "requestId": request_id,
        },
    )
