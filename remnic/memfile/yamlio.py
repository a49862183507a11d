"""YAML as remnic reads and writes frontmatter: timestamps stay strings (a rewrite never changes their
spelling), a duplicate key is an error (YAML 1.2; PyYAML would keep the last value silently), and
values are written so that the original Remnic's line-by-line reader reads them back."""

from __future__ import annotations

import re
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler
from yaml.constructor import ConstructorError

from .astral import astral_chars, stand_ins, swap

# --- YAML: keep timestamps as strings so a rewrite never changes their spelling ---

# libyaml's C loader/emitter when present: byte-identical output, ~10x faster on large repos.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class DuplicateKey(yaml.MarkedYAMLError):
    """A mapping names the same key twice: ``key``, and ``first_line`` (0-based) where it first appears."""

    def __init__(self, key: str, first_line: int, mark: Any) -> None:
        super().__init__(problem="duplicate key", problem_mark=mark)
        self.key, self.first_line = key, first_line


MAX_INT_DIGITS = 4300
"""Python's own limit for turning an int into text: a longer one could be loaded but never written,
indexed or printed (``ValueError``), so a file holding one is malformed, not a crash."""
HUGE_INT = f"an integer has more than {MAX_INT_DIGITS:,} digits"
_INT_CEILING = 10**MAX_INT_DIGITS


class HugeInt(ConstructorError):
    """An integer value too long to handle: its ``problem_mark`` is where it is written."""


def top_key_at(fm_text: str, line: int) -> str | None:
    """The top-level key whose value holds (0-based) ``line`` of a YAML mapping: the last unindented
    ``key:`` at or above it."""
    for row in reversed(fm_text.splitlines()[: line + 1]):
        m = re.match(r"""(?:"([^"\n]+)"|'([^'\n]+)'|([^\s#\-?:,\[\]{}][^:\n]*?))[ \t]*:(?:\s|$)""", row)
        if m:
            key = next(g for g in m.groups() if g)
            return key if len(key) <= 80 else None
    return None


class HugeTomlInt(ValueError):
    """A too-long integer in TOML frontmatter, under ``key`` (None: tomllib refused it unnamed)."""

    def __init__(self, key: str | None) -> None:
        super().__init__(HUGE_INT)
        self.key = key


def check_toml_int(value: object, key: str | None) -> None:
    if isinstance(value, int) and abs(value) >= _INT_CEILING:
        raise HugeTomlInt(key)


def huge_toml_int(fm_text: str, key: str | None) -> tuple[str, int]:
    """Where TOML frontmatter writes a too-long integer: (its key, or "frontmatter", and its 0-based line),
    found by ``key`` when known, else by the run of digits (tomllib's own error names neither)."""
    rows = fm_text.splitlines()
    for row, text in enumerate(rows):
        at = re.match(r"\s*([\w.\"'-]+?)\s*=", text)
        if (at and at.group(1).strip("\"'") == key) or (
            key is None and any(len(m.group()) > MAX_INT_DIGITS for m in re.finditer(r"[\d_]+", text))
        ):
            name = at.group(1).strip("\"'") if at else None
            return (name if name and len(name) <= 80 else "frontmatter"), row
    return key or "frontmatter", 0


def _int(loader: Any, node: yaml.ScalarNode) -> int:
    # Checked on the text first: a sexagesimal 1:2:3:… of thousands of parts costs quadratic time to add up.
    if len(str(node.value).replace("_", "")) > MAX_INT_DIGITS + 3:  # a sign, 0x
        raise HugeInt(None, None, HUGE_INT, node.start_mark)
    try:
        value = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    except ValueError:
        raise HugeInt(None, None, HUGE_INT, node.start_mark) from None
    if abs(value) >= _INT_CEILING:  # 0x + 3,600 hex digits is as long once written in decimal
        raise HugeInt(None, None, HUGE_INT, node.start_mark)
    return int(value)


class Loader(_SafeLoader):  # type: ignore[misc, valid-type]
    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        # Checked on the first visit, before merge keys (``<<: *base``) are flattened into the node:
        # a key that overrides a merged one is YAML's way to override, not a duplicate.
        checked: set[int] = self.__dict__.setdefault("_remnic_checked", set())
        if id(node) not in checked:
            checked.add(id(node))
            # Keys compared as loaded, not as spelled: `1`/`01`, `yes`/`true`, `~`/`null` are one dict key.
            seen: dict[Any, int] = {}
            for key_node, _value in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                ident = self.construct_object(key_node)
                if ident in seen:
                    raise DuplicateKey(str(key_node.value), seen[ident], key_node.start_mark)
                seen[ident] = key_node.start_mark.line
        super().flatten_mapping(node)


class _Dumper(_SafeDumper):  # type: ignore[misc, valid-type]
    pass


def _without_timestamps(cls: type) -> None:
    cls.yaml_implicit_resolvers = {  # type: ignore[attr-defined]
        ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


_without_timestamps(Loader)
_without_timestamps(_Dumper)
Loader.add_constructor("tag:yaml.org,2002:int", _int)

JSON_QUOTED = ("forgottenReason",)
"""Keys the original Remnic writes JSON-quoted and un-JSONs on read."""


class Quoted(str):
    """A string written double-quoted (YAML's double-quoted escapes are JSON's for ordinary text)."""


def _represent_list(dumper: Any, data: list) -> yaml.Node:
    # Short scalar lists (tags, links) read best inline; strings double-quoted, as the original writes
    # them (its reader strips double quotes only): tags: ["ops", "release"]
    if data and all(isinstance(x, (str, int, float, bool)) and len(str(x)) < 60 for x in data):
        items = [
            dumper.represent_scalar("tag:yaml.org,2002:str", x, style='"')
            if isinstance(x, str)
            else dumper.represent_data(x)
            for x in data
        ]
        return yaml.SequenceNode("tag:yaml.org,2002:seq", items, flow_style=True)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=not data)


def _represent_str(dumper: Any, data: str) -> yaml.Node:
    # One line per value (the original reads frontmatter line by line): newlines as \n escapes.
    style = '"' if "\n" in data or "\r" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _represent_quoted(dumper: Any, data: Quoted) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style='"')


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(Quoted, _represent_quoted)


class _Handler(YAMLHandler):
    def load(self, fm: str, **kwargs: object) -> Any:
        return yaml.load(fm, Loader=Loader)

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        prepared = {k: Quoted(v) if k in JSON_QUOTED and isinstance(v, str) else v for k, v in metadata.items()}
        astral = astral_chars(prepared)
        if astral:  # see stand_ins
            stand_in = stand_ins(astral, prepared)
            prepared = swap(prepared, str.maketrans(stand_in), Quoted)
        dumped = yaml.dump(
            prepared,
            Dumper=_Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=1 << 30,
        ).strip()
        return dumped.translate({ord(v): k for k, v in stand_in.items()}) if astral else dumped


HANDLER = _Handler()
