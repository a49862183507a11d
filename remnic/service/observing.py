"""Observation through the service: transcripts and messages become memories (see :mod:`remnic.observe`)."""

from __future__ import annotations

from remnic.observe.transcripts import parse_transcript

__all__ = ["parse_transcript"]
