"""A generated notes vault for the adoption benchmark: Obsidian-like notes as people write them.

Lengths follow a long tail (most notes a few sentences, a few of 5,000-20,000 characters
with headings), notes link to each other with ``[[Title]]``, ``[[alias]]`` and
``[[file]]``, and their frontmatter is what other tools and people write: ``status:
accepted``, ``confidence: high``, ``tags: a, b``, ``updated: Jan 5, 2024``, numeric ids,
aliases, Hugo's TOML (``+++``) blocks, notes with no frontmatter at all, and a few blocks
of YAML that really do not parse. Every long note ends with a phrase of its own, so a
benchmark can check that the end of each long note is recallable.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

FOLDERS = ("notes", "projects", "people", "decisions", "journal", "docs/guides", "areas/ops", "inbox")
_WORDS = [
    "release",
    "deploy",
    "staging",
    "database",
    "editor",
    "review",
    "cache",
    "latency",
    "replica",
    "budget",
    "meeting",
    "design",
    "tenant",
    "migration",
    "backup",
    "incident",
    "customer",
    "roadmap",
    "invoice",
    "schema",
    "oncall",
    "runbook",
    "alert",
    "metric",
    "dashboard",
    "contract",
    "vendor",
    "hiring",
    "onboarding",
    "laptop",
    "password",
    "rotation",
    "policy",
    "privacy",
    "audit",
    "report",
    "quarter",
    "revenue",
    "forecast",
    "launch",
    "pricing",
    "churn",
    "feedback",
    "survey",
    "typography",
    "accessibility",
    "mobile",
    "gateway",
    "queue",
    "worker",
    "retry",
    "timeout",
    "container",
    "terraform",
    "rollback",
    "feature",
    "flag",
    "garden",
    "recipe",
    "bicycle",
    "holiday",
    "library",
    "concert",
    "river",
    "mountain",
    "coffee",
    "train",
    "ticket",
    "museum",
    "kitchen",
    "window",
    "paint",
]
_TAIL_WHO = (
    "lighthouse keeper",
    "night baker",
    "harbour pilot",
    "choir director",
    "orchard warden",
    "glass blower",
    "ferry captain",
    "beekeeper",
    "clock mender",
    "bell ringer",
    "kite maker",
    "map engraver",
)
_TAIL_DOES = (
    "repaints",
    "polishes",
    "inspects",
    "relabels",
    "waxes",
    "catalogues",
    "oils",
    "measures",
    "photographs",
    "restores",
)
_TAIL_WHAT = (
    "crimson door",
    "copper weathervane",
    "walnut banister",
    "slate doorstep",
    "brass telescope",
    "linen awning",
    "cedar gate",
    "ivory piano",
    "pewter lantern",
    "marble fountain",
)
_TAIL_WHEN = ("every April", "each solstice", "after the first frost", "on leap days", "before the regatta")


@dataclass
class Note:
    path: str
    text: str
    kind: str
    """short | medium | long | toml | invalid-yaml | bare."""
    tail: str | None = None
    """The phrase near the end of a long note."""


@dataclass
class Vault:
    root: Path
    notes: list[Note] = field(default_factory=list)

    @property
    def long_notes(self) -> list[Note]:
        return [n for n in self.notes if n.tail]

    @property
    def invalid_yaml(self) -> list[str]:
        return [n.path for n in self.notes if n.kind == "invalid-yaml"]


def _sentence(rng: random.Random, lo: int = 7, hi: int = 16) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))).capitalize() + "."


def _paragraph(rng: random.Random, titles: list[str], tags: bool) -> str:
    parts = [_sentence(rng) for _ in range(rng.randint(2, 5))]
    if titles and rng.random() < 0.35:
        parts.insert(rng.randrange(len(parts) + 1), f"See [[{rng.choice(titles)}]].")
    if tags and rng.random() < 0.2:
        parts.append(f"#{rng.choice(_WORDS)}")
    return " ".join(parts)


def _body(rng: random.Random, target: int, titles: list[str], tail: str | None) -> str:
    out: list[str] = []
    size = 0
    section = 0
    end = target - (len(tail) + 60 if tail else 0)
    while size < end or not out:
        if target > 3000 and len(out) % 6 == 0:
            section += 1
            out.append(f"## Section {section}")
        para = _paragraph(rng, titles, tags=True)
        out.append(para)
        size += len(para) + 2
    if tail:
        out.append(f"In the end the {tail}.")
        out.append(_sentence(rng, 5, 8))
    return "\n\n".join(out) + "\n"


def _length(rng: random.Random) -> tuple[str, int]:
    """A note's kind and length in characters: many short, fewer medium, some very long."""
    x = rng.random()
    if x < 0.55:
        return "short", rng.randint(60, 600)
    if x < 0.87:
        return "medium", rng.randint(600, 3000)
    if x < 0.95:
        return "medium", rng.randint(3000, 5000)
    return "long", rng.randint(5000, 20000)


def _yaml_block(rng: random.Random, i: int, title: str, aliases: list[str]) -> str:
    lines: list[str] = []
    r = rng.random()
    if r < 0.08:
        lines.append("status: accepted")
    elif r < 0.12:
        lines.append("status: draft")
    if rng.random() < 0.12:
        lines.append(f"confidence: {rng.choice(['high', 'medium', 'low'])}")
    t = rng.random()
    if t < 0.2:
        lines.append(f"tags: {rng.choice(_WORDS)}, {rng.choice(_WORDS)}")
    elif t < 0.4:
        lines.append(f"tags: [{rng.choice(_WORDS)}, {rng.choice(_WORDS)}]")
    d = rng.random()
    if d < 0.15:
        lines.append(f"updated: {rng.choice(['Jan', 'Mar', 'Jun', 'Sep', 'Nov'])} {rng.randint(1, 28)}, 2024")
    elif d < 0.3:
        lines.append(f"date: 2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
    elif d < 0.35:
        lines.append(f"created: 2022-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T09:30:00+02:00")
    if rng.random() < 0.04:
        lines.append(f"id: {100000 + i}")
    if rng.random() < 0.3:
        lines.append(f"title: {title}")
    if aliases:
        lines.append("aliases: [" + ", ".join(aliases) + "]")
    if rng.random() < 0.05:
        lines.append("category: memory")
    if rng.random() < 0.1:
        lines.append(f'related: "[[{title}]]"')
    return "---\n" + "\n".join(lines) + "\n---\n" if lines else ""


def generate(root: Path, n: int = 2000, seed: int = 18) -> Vault:
    """Write ``n`` notes under ``root`` (created) and describe them."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    vault = Vault(root)
    titles: list[str] = []
    tails: set[str] = set()
    for i in range(n):
        folder = FOLDERS[i % len(FOLDERS)]
        title = f"{rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)} {i}"
        aliases = [f"{rng.choice(_WORDS)}-{i}"] if rng.random() < 0.1 else []
        kind, size = _length(rng)
        tail = None
        if kind == "long":
            while tail is None or tail in tails:
                tail = (
                    f"{rng.choice(_TAIL_WHO)} {rng.choice(_TAIL_DOES)} the {rng.choice(_TAIL_WHAT)} "
                    f"{rng.choice(_TAIL_WHEN)}"
                )
            tails.add(tail)
        body = _body(rng, size, titles[-200:], tail)
        x = rng.random()
        if x < 0.03:
            kind = "toml" if kind != "long" else kind
            head = f'+++\ntitle = "{title}"\ndate = 2023-05-{rng.randint(1, 28):02d}T10:00:00Z\n'
            head += f'tags = ["{rng.choice(_WORDS)}", "docs"]\n\n[params]\nweight = {rng.randint(1, 50)}\n+++\n\n'
        elif x < 0.055 and kind != "long":
            kind = "invalid-yaml"
            head = f"---\ntitle: {title}\ntags: [{rng.choice(_WORDS)}\n---\n"
        elif x < 0.2:
            kind = "bare" if kind != "long" else kind
            head = ""
        else:
            head = _yaml_block(rng, i, title, aliases)
        name = title.lower().replace(" ", "-") + rng.choice([".md", ".md", ".md", ".markdown", ".MD"])
        rel = f"{folder}/{name}"
        text = head + (f"# {title}\n\n" if not head and rng.random() < 0.5 else "") + body
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode("utf-8"))
        vault.notes.append(Note(rel, text, kind, tail))
        titles.append(title)
        titles.extend(aliases)
    return vault
