"""Errors only the server surfaces raise (auth, limits, transport).

They extend :class:`remnic.errors.RemnicError`, so every surface maps them the
same way: ``code`` is the API's machine-readable code (seed 003), ``http_status``
the HTTP status, ``to_dict()`` the ``{error, code, details?}`` body.
"""

from __future__ import annotations

from ..errors import RemnicError, UsageError, ValidationError


class Unauthorized(RemnicError):
    code = "unauthorized"
    http_status = 401


class NamespaceForbidden(RemnicError):
    """The principal may not read (or write) the namespace.

    One message for "no such namespace" and "not yours", so a caller cannot
    probe which namespaces exist.
    """

    code = "namespace_forbidden"
    http_status = 403


class RateLimited(RemnicError):
    code = "write_rate_limited"
    http_status = 429

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class BodyTooLarge(UsageError):
    code = "request_body_too_large"
    http_status = 413


class InvalidJson(UsageError):
    code = "invalid_json"


class InvalidJsonObject(UsageError):
    code = "invalid_json_object"


class RouteNotFound(RemnicError):
    code = "not_found"
    http_status = 404


class MethodNotAllowed(RemnicError):
    code = "method_not_allowed"
    http_status = 405

    def __init__(self, message: str, *, allow: list[str]) -> None:
        super().__init__(message)
        self.allow = allow


class LengthRequired(UsageError):
    code = "length_required"
    http_status = 411


class ForbiddenOrigin(RemnicError):
    """A browser page from another origin (DNS rebinding, CSRF) tried to call the local server."""

    code = "forbidden_origin"
    http_status = 403


class IdempotencyConflict(ValidationError):
    code = "idempotency_conflict"
    http_status = 409
