"""`remnic review approve|dismiss|flag -c` is --category, as on store, update, list and query."""

from __future__ import annotations

import pytest

from remnic.cli import build_parser


@pytest.mark.parametrize("action", ["approve", "dismiss", "flag"])
def test_review_decisions_take_c_for_category(action: str) -> None:
    parser = build_parser()
    short = parser.parse_args(["review", action, "--all-pending", "-c", "decision"])
    long = parser.parse_args(["review", action, "--all-pending", "--category", "decision"])
    assert short.category == long.category and short.category is not None
