"""Provenance and safety of a recalled memory, from the frontmatter the recall already loaded (pure).

- ``stale``: ``invalidAt`` (or ``validUntil``/``expiresAt``) is in the past, ``validAt`` is
  still in the future, or the memory is superseded (``status: superseded`` / ``supersededBy``)
  or archived.
- ``correctionState``: ``forgotten`` (status), ``superseded``, ``disputed`` (``disputed: true``,
  a ``disputed`` tag, or ``verificationState``/``reviewState``/``correctionState: disputed``),
  ``correction`` (category correction or ``supersedes`` set), else ``none``.
- ``safety``: ``blocked`` for quarantined/rejected/forgotten memories and for
  ``do-not-use-outside-this-context`` memories recalled outside their namespace;
  ``requires-review`` for pending_review, disputed, stale or low-confidence ones; else ``safe``.
- ``userContextScopes``: explicit ``userContextScopes``/``contextScopes`` metadata, plus the
  scope tags ``work``, ``personal``, ``private``, ``repo``, ``team``, ``project`` and
  ``do-not-use-outside-this-context``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from remnic.memfile.model import parse_time
from remnic.memfile.values import confidence_of

SCOPE_TAGS = ("work", "personal", "private", "repo", "team", "project", "do-not-use-outside-this-context")
RESTRICTED_SCOPE = "do-not-use-outside-this-context"
DISPUTED_KEYS = ("verificationState", "reviewState", "correctionState")
LOW_CONFIDENCE = 0.5
"""Below this confidence a memory is shown as requires-review."""


@dataclass
class Safety:
    stale: bool = False
    correction_state: str = "none"
    safety: str = "safe"
    reasons: list[str] = field(default_factory=list)

    @property
    def safe_to_use(self) -> bool:
        return self.safety == "safe"


def tags_of(fm: Mapping[str, Any]) -> list[str]:
    tags = fm.get("tags") or []
    return [str(t) for t in tags] if isinstance(tags, list) else [str(tags)]


def is_disputed(fm: Mapping[str, Any]) -> bool:
    if not fm:
        return False
    if fm.get("disputed") is True:
        return True
    if any(str(fm.get(k) or "").lower() == "disputed" for k in DISPUTED_KEYS):
        return True
    return "disputed" in (t.lower() for t in tags_of(fm))


def context_scopes(fm: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("userContextScopes", "contextScopes"):
        value = fm.get(key)
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            out += [str(v) for v in value if str(v)]
    lowered = {t.lower() for t in tags_of(fm)}
    out += [t for t in SCOPE_TAGS if t in lowered]
    return list(dict.fromkeys(out))


def is_stale(fm: Mapping[str, Any], status: str, now_s: float) -> tuple[bool, list[str]]:
    reasons: list[str] = []
    for key in ("invalidAt", "validUntil", "expiresAt"):
        t = parse_time(fm.get(key))
        if t is not None and t <= now_s:
            reasons.append(f"{key} passed")
    t = parse_time(fm.get("validAt"))
    if t is not None and t > now_s:
        reasons.append("validAt in the future")
    if status in ("superseded", "archived"):
        reasons.append(f"status={status}")
    elif fm.get("supersededBy"):
        reasons.append("supersededBy set")
    return bool(reasons), reasons


def current_at(fm: Mapping[str, Any], status: str, at: float | None) -> bool:
    """A superseded memory that was still current at ``at`` (an as-of recall's time): its validity
    ended (``invalidAt``, else ``supersededAt``) after then. Unknown end: not current."""
    if at is None or status not in ("superseded", "active") or (status == "active" and not fm.get("supersededBy")):
        return False
    end = parse_time(fm.get("invalidAt"))
    end = end if end is not None else parse_time(fm.get("supersededAt"))
    return end is not None and end > at


def as_of_view(fm: Mapping[str, Any], status: str, at: float | None) -> tuple[Mapping[str, Any], str]:
    """(frontmatter, status) as they stood at ``at``: a memory superseded later was active then."""
    if not current_at(fm, status, at):
        return fm, status
    return {k: v for k, v in fm.items() if k not in ("supersededBy", "supersededAt")}, "active"


def correction_state(fm: Mapping[str, Any], status: str, category: str) -> str:
    if status == "forgotten":
        return "forgotten"
    if status == "superseded" or fm.get("supersededBy"):
        return "superseded"
    if is_disputed(fm):
        return "disputed"
    if category == "correction" or fm.get("supersedes"):
        return "correction"
    return "none"


def assess(
    fm: Mapping[str, Any],
    *,
    status: str,
    category: str,
    namespace: str,
    recall_namespace: str | None,
    now_s: float,
    as_of: float | None = None,
) -> Safety:
    """Stale / correction / safety verdict for one memory; with ``as_of`` (an as-of recall) judged at
    that time, as the memory stood then."""
    if as_of is not None:
        fm, status = as_of_view(fm, status, as_of)
        now_s = as_of
    stale, stale_reasons = is_stale(fm, status, now_s)
    state = correction_state(fm, status, category)
    blocked: list[str] = []
    review: list[str] = []
    if status in ("quarantined", "rejected", "forgotten"):
        blocked.append(f"status={status}")
    elif status == "pending_review":
        review.append("status=pending_review")
    elif status not in ("active",):
        review.append(f"status={status}")
    scopes = context_scopes(fm)
    if RESTRICTED_SCOPE in scopes and recall_namespace is not None and recall_namespace != namespace:
        blocked.append(f"{RESTRICTED_SCOPE} (namespace {namespace})")
    if state == "disputed":
        review.append("disputed")
    if stale:
        review.append("stale=true")
    confidence = confidence_of(fm)  # the one reading (words, percentages, default) get and the index use
    if confidence < LOW_CONFIDENCE:
        review.append(f"confidence<{LOW_CONFIDENCE}")
    if blocked:
        return Safety(stale, state, "blocked", blocked + review)
    if review:
        return Safety(stale, state, "requires-review", review)
    return Safety(stale, state, "safe", [])


def needs_review(fm: Mapping[str, Any], status: str) -> bool:
    """What the review-context tier shows (flagged) instead of serving as an answer."""
    return status == "pending_review" or is_disputed(fm)
