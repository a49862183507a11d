"""JSON Schema building blocks shared by the output schemas of :mod:`.outputs` and :mod:`.outputs_agents`."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]


def obj(required: dict[str, JSON], optional: dict[str, JSON] | None = None, description: str = "") -> JSON:
    out: JSON = {"type": "object", "properties": {**required, **(optional or {})}, "required": list(required)}
    if description:
        out["description"] = description
    return out


STRING: JSON = {"type": "string"}
NULLABLE_STRING: JSON = {"anyOf": [{"type": "string"}, {"type": "null"}]}  # one type per branch: portable
INTEGER: JSON = {"type": "integer", "minimum": 0}
NUMBER: JSON = {"type": "number"}
BOOLEAN: JSON = {"type": "boolean"}
WARNINGS: JSON = {
    "type": "array",
    "description": (
        "request fields accepted for Remnic compatibility that had no effect, and caveats of a write that is "
        "done (field gitIndex: git's own index lags behind the commit until the next write or sync)"
    ),
    "items": obj({"field": STRING, "message": STRING}),
}
