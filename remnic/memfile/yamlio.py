"""YAML as remnic reads and writes frontmatter: timestamps stay strings (a rewrite never changes their
spelling), a duplicate key is an error (YAML 1.2; PyYAML would keep the last value silently), and
values are written so that the original Remnic's line-by-line reader reads them back."""

from __future__ import annotations

from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

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
