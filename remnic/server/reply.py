"""What an operation answers, before a transport (HTTP or MCP) frames it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
