"""The original Remnic's config spellings, read as aliases of remnic's settings.

The original (TypeScript, once called "engram") keeps one flat namespace of keys
(``recallBudgetChars``, ``namespacesEnabled``, …), at the top level of its config
file or inside a ``remnic`` (or ``engram``) block, beside a ``server`` block for its
standalone server. remnic reads such a file as it is: a flat key with a
counterpart here sets that setting (``remnic config`` names the spelling used),
and the original's keys without one are warnings, never errors. A key that is
neither remnic's nor one of the original's (``remnic/data/original-config-keys.txt``)
is a typo, and an error, as an unknown key inside one of remnic's sections is.

:func:`translate` turns any of those shapes into remnic's nested form (what the
loader applies, and what ``remnic config migrate`` writes). Pure: no file access but the
packaged list of the original's keys.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any

from remnic.errors import FieldProblem, ValidationError

from .settings import SECTIONS, ServerSettings, camel, did_you_mean, json_text, snake

UNMAPPED_KEY = "_remnicOriginal"
"""Where ``remnic config migrate`` keeps the original's keys remnic does not read (keys starting
with ``_`` are ignored by the loader), so a migrated file loses nothing."""


class Skip:
    """A converter's answer when the value sets nothing (``recallMmrEnabled: true``)."""


SKIP = Skip()
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def truthy(value: Any) -> Any:
    """A boolean as the original reads it (``"yes"``, ``"off"``…); any other value as it is."""
    return _bool(value)


def _bool(value: Any) -> Any:
    # The original accepts these strings for booleans; anything else is left for the type check.
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return value


def _number(value: Any) -> Any:
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() else number
    return value


def _ms_to_s(value: Any) -> Any:
    value = _number(value)
    return value / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) else value


MMR_ENABLED = "recallMmrEnabled"
MMR_LAMBDA = "recallMmrLambda"


def _mmr_enabled(value: Any) -> Any:
    # MMR is off in remnic when its lambda is 1.0 (pure relevance); "on" keeps whatever lambda is set.
    read = _bool(value)
    if not isinstance(read, bool):  # a typo here would otherwise leave MMR as it was, silently
        raise ValueError(f"expected a boolean (true or false), got {json_text(value)}")
    return 1.0 if read is False else SKIP


def _policies(value: Any) -> Any:
    """The original's policy array ``[{name, readPrincipals, writePrincipals}]`` or map
    ``{ns: {read, write}}`` as remnic's map ``{ns: {readPrincipals, writePrincipals}}``."""
    out: dict[str, Any] = {}
    if isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                out[item["name"]] = {
                    "readPrincipals": list(item.get("readPrincipals") or []),
                    "writePrincipals": list(item.get("writePrincipals") or []),
                }
        return out
    if isinstance(value, Mapping):
        for name, rule in value.items():
            if isinstance(rule, Mapping):
                out[str(name)] = {
                    "readPrincipals": list(rule.get("readPrincipals", rule.get("read")) or []),
                    "writePrincipals": list(rule.get("writePrincipals", rule.get("write")) or []),
                }
        return out
    return value


@dataclass(frozen=True)
class Alias:
    """One of the original's keys and the remnic setting it sets."""

    target: str
    convert: Callable[[Any], Any] | None = None
    note: str = ""


FLAT: dict[str, Alias] = {
    "recallBudgetChars": Alias("recall.budgetChars", _number),
    MMR_LAMBDA: Alias("recall.mmrLambda", _number),
    "recallMmrTopN": Alias("recall.mmrPool", _number),
    MMR_ENABLED: Alias("recall.mmrLambda", _mmr_enabled, "false sets recall.mmrLambda to 1.0 (MMR off)"),
    "recallDirectAnswerEnabled": Alias("recall.directAnswer", _bool),
    "recallDirectAnswerTokenOverlapFloor": Alias("recall.directAnswerMinOverlap", _number),
    "recallDirectAnswerImportanceFloor": Alias("recall.directAnswerMinImportance", _number),
    "qmdMaxResults": Alias("recall.topK", _number),
    "graphRecallEnabled": Alias("recall.graph", _bool),
    "maxGraphTraversalSteps": Alias("recall.graphMaxHops", _number),
    "graphTraversalConfidenceFloor": Alias("recall.graphMinConfidence", _number),
    "graphRecallMaxSeedNodes": Alias("recall.graphSeeds", _number),
    "graphRecallMaxExpandedNodes": Alias("recall.graphMaxNodes", _number),
    "temporalBoostRecentDays": Alias("recall.recentScanWindowDays", _number),
    "temporalBoostScore": Alias("recall.recentScanPrior", _number),
    "namespacesEnabled": Alias("namespaces.enabled", _bool),
    "defaultNamespace": Alias("namespaces.default"),
    "namespacePolicies": Alias("namespaces.policies", _policies),
    "hotMemoriesCacheEnabled": Alias("store.scanMemo", _bool),
    "procedural.enabled": Alias("recall.procedural", _bool),
    "procedural.recallMaxProcedures": Alias("recall.proceduralMax", _number),
    "agentAccessHttp.host": Alias("server.host"),
    "agentAccessHttp.port": Alias("server.port", _number),
    "agentAccessHttp.maxBodyBytes": Alias("server.maxBodyBytes", _number),
    "agentAccessHttp.writeRateLimitMaxRequests": Alias("server.writeRateLimit", _number),
    "agentAccessHttp.writeRateLimitWindowMs": Alias("server.writeRateWindowS", _ms_to_s, "milliseconds → seconds"),
}
"""Flat keys (and keys of its nested option objects, dotted) of the original with a counterpart here."""

SERVER: dict[str, Alias] = {
    "writeRateLimitMaxRequests": Alias("server.writeRateLimit", _number),
    "writeRateLimitWindowMs": Alias("server.writeRateWindowS", _ms_to_s, "milliseconds → seconds"),
}
"""Keys of the original's standalone ``server`` block spelled differently from remnic's ``server`` section."""

WHY_NOT: dict[str, str] = {
    "recallDirectAnswerAmbiguityMargin": "a ratio there; remnic's recall.directAnswerMargin is an absolute score lead",
    "recencyWeight": "a different scale; remnic's is recall.weightRecency",
    "reinforcementRecallBoostEnabled": "set recall.reinforcementWeight to 0 to turn the boost off",
    "reinforcementRecallBoostWeight": "a different formula; remnic's is recall.reinforcementWeight",
    "reinforcementRecallBoostMax": "a different formula; remnic's is recall.reinforcementCap",
    "authToken": "remnic keeps hashed tokens: run `remnic token generate`",
    "agentAccessHttp.authToken": "remnic keeps hashed tokens: run `remnic token generate`",
    "principal": "remnic names the principal per token (stdio MCP: server.stdioPrincipal)",
    "agentAccessHttp.principal": "remnic names the principal per token (stdio MCP: server.stdioPrincipal)",
    "agentAccessHttp.enabled": "remnic's server runs when started (`remnic serve`)",
}
"""Why a known key of the original is not applied (others get a generic note)."""

ORIGINAL_SERVER_KEYS = {
    "authToken",
    "principal",
    "adminConsoleEnabled",
    "adminConsolePublicDir",
    "adminConsolePrefillToken",
    "adminConsoleMemoryReviewEnabled",
    "readinessOverride",
    "readinessDegradedAfterAttempts",
    "trustPrincipalHeader",
}
BLOCKS = ("engram", "remnic")
"""The original's config blocks, lowest precedence first (``remnic`` wins, as in the original)."""
_SECTION_NAMES = [camel(s) for s in SECTIONS]
_TOP_LEVEL = ["memoryDir", *_SECTION_NAMES]
_OUR_SERVER_KEYS = {camel(f.name) for f in fields(ServerSettings)}
ORIGINAL_KEYS_FILE = "original-config-keys.txt"


@functools.cache
def original_keys() -> frozenset[str]:
    """Every top-level key of the original Remnic's config schema (its plugin manifest lists them all
    and refuses any other), from ``remnic/data/``."""
    text = (resources.files("remnic") / "data" / ORIGINAL_KEYS_FILE).read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def is_original_key(name: str) -> bool:
    """Whether ``name`` (``agentAccessHttp.port`` for a key of one of its objects) is the original's."""
    top = name.split(".", 1)[0]
    return name in FLAT or name in WHY_NOT or top in original_keys() or top in ORIGINAL_SERVER_KEYS


def _unknown_key(name: str, origin: str, *, top_level: bool) -> ValidationError:
    """A key that is neither remnic's nor the original's: a typo, named with the nearest valid key."""
    if top_level:
        message = "unknown config key: neither a section of remnic's settings nor one of the original Remnic's keys"
        hint = did_you_mean(name, _TOP_LEVEL) or did_you_mean(name, [*FLAT, *sorted(original_keys())])
        return ValidationError.single(name, message + hint, path=origin, options=_TOP_LEVEL)
    message = "unknown key: not one of the original Remnic's config keys"
    return ValidationError.single(name, message + did_you_mean(name, [*FLAT, *sorted(original_keys())]), path=origin)


@dataclass(frozen=True)
class Aside:
    """One of the original's keys that sets nothing here, as it was: where in the file, its name, its value."""

    where: str
    """``top level``, ``remnic block``, ``engram block`` or ``server block``."""
    name: str
    value: Any


def _where(origin: str) -> str:
    # _flat_block's origin names a block as "<file> (remnic block)"; the file itself is the top level.
    for block in BLOCKS:
        if origin.endswith(f"({block} block)"):
            return f"{block} block"
    return "top level"


@dataclass
class Translated:
    """A config file in remnic's nested form, with what the translation noticed."""

    nested: dict[str, Any] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    """Dotted setting → the original's spelling that set it (absent when remnic's own was used)."""
    warnings: list[str] = field(default_factory=list)
    unmapped: list[Aside] = field(default_factory=list)
    """The original's keys remnic does not read (and comment keys of its blocks), as they were (for
    ``config migrate``)."""
    kept: list[Aside] = field(default_factory=list)
    """The original's keys read but setting nothing here (``recallMmrEnabled: true``, a ``recallMmrLambda``
    that ``recallMmrEnabled: false`` overrules, a key a later block or remnic's own section overrules), as
    they were: ``config migrate`` keeps them too. The same key may be here more than once, from two places."""
    mmr: dict[str, tuple[Any, str]] = field(default_factory=dict)
    """``recallMmrEnabled`` and ``recallMmrLambda`` as the original's layers left them: (value, origin)."""
    setters: dict[str, Aside] = field(default_factory=dict)
    """Dotted setting → the original's key that set it, as written (what is kept if something overrules it)."""
    problems: list[FieldProblem] = field(default_factory=list)
    """What is wrong with the file's keys (unknown ones, values the original's converters refuse): all of them,
    so one look at ``remnic config`` names every problem; :func:`translate` raises them unless told to collect."""

    @property
    def uses_original_spellings(self) -> bool:
        return bool(self.names or self.unmapped or self.kept)

    def put(self, dotted: str, value: Any, name: str | None, raw: Aside | None = None) -> None:
        """Set ``dotted``; ``raw``: the original's key (where and as written) that sets it. A value one of
        the original's keys set before is overruled, so it is kept for ``config migrate``."""
        if dotted == "memoryDir":
            self.nested["memoryDir"] = value
        else:
            section, key = dotted.split(".", 1)
            if not key.startswith(("_", "$")):  # a comment or schema link stays as written; the loader skips it
                key = camel(snake(key))
            dotted = f"{section}.{key}"
            self.nested.setdefault(section, {})[key] = value
        overruled = self.setters.pop(dotted, None)
        if overruled is not None:
            self.kept.append(overruled)
        if raw is not None:
            self.setters[dotted] = raw
        if name is None:
            self.names.pop(dotted, None)
        else:
            self.names[dotted] = name

    def ignore(self, name: str, value: Any, origin: str, where: str | None = None) -> None:
        self.unmapped.append(Aside(where or _where(origin), name, value))
        why = WHY_NOT.get(name) or WHY_NOT.get(name.rsplit(".", 1)[-1]) or "remnic has no counterpart"
        self.warnings.append(f"{origin}: {name} is not read ({why})")


def _flatten(block: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"agentAccessHttp": {"port": 1}}`` → ``[("agentAccessHttp.port", 1)]`` for objects the aliases know."""
    out: list[tuple[str, Any]] = []
    for key, value in block.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and any(k.startswith(name + ".") for k in FLAT):
            out += _flatten(value, name + ".")
        else:
            out.append((name, value))
    return out


def _convert(name: str, alias: Alias, value: Any, origin: str) -> Any:
    if alias.convert is None:
        return value
    named = f"{name} ({alias.target})"  # as the loader names a bad value one of the original's keys set
    try:
        return alias.convert(value)
    except ValueError as exc:  # the converter's own words, naming what the key takes
        raise ValidationError.single(named, str(exc), path=origin) from None
    except TypeError as exc:
        raise ValidationError.single(named, f"cannot be read as {alias.target}: {exc}", path=origin) from None


def _flat_block(out: Translated, block: Mapping[str, Any], origin: str, *, top_level: bool = False) -> None:
    where = _where(origin)
    for name, value in _flatten(block):
        if name.startswith(("_", "$")):
            if not top_level:  # a block's comment: a migrated file keeps it aside (the top level's stay put)
                out.unmapped.append(Aside(where, name, value))
            continue
        if name == "memoryDir":
            out.put("memoryDir", value, None, Aside(where, name, value))
            continue
        alias = FLAT.get(name)
        if alias is None:
            if not is_original_key(name):
                out.problems += _unknown_key(name, origin, top_level=top_level).problems
            else:
                out.ignore(name, value, origin)
            continue
        try:
            converted = _convert(name, alias, value, origin)
        except ValidationError as exc:
            out.problems += exc.problems
            continue
        raw = Aside(where, name, value)
        if name == MMR_ENABLED:
            earlier = out.setters.pop(MMR_ENABLED, None)
            if earlier is not None:  # a block above overrules it
                out.kept.append(earlier)
            out.setters[MMR_ENABLED] = raw  # not a setting's name: settled with the lambda below
            out.mmr[name] = (value, origin)
        elif name == MMR_LAMBDA:
            out.mmr[name] = (value, origin)
            out.put(alias.target, converted, name, raw)
        elif not isinstance(converted, Skip):
            out.put(alias.target, converted, name, raw)


def _settle_mmr(out: Translated) -> None:
    """The original turns MMR off with ``recallMmrEnabled: false`` whatever ``recallMmrLambda`` says (the
    lambda matters only when MMR is on): remnic's MMR off is ``recall.mmrLambda`` 1.0."""
    enabled = out.mmr.get(MMR_ENABLED)
    raw = out.setters.pop(MMR_ENABLED, None)
    if enabled is None or raw is None:
        return
    value, origin = enabled
    if _bool(value) is True:
        out.kept.append(raw)  # sets nothing: MMR runs at whatever recall.mmrLambda is
        return
    out.put("recall.mmrLambda", 1.0, MMR_ENABLED, raw)  # the lambda it overrules is kept by put
    if MMR_LAMBDA in out.mmr:
        lam, lam_origin = out.mmr[MMR_LAMBDA]
        where = "" if lam_origin == origin else f" in {lam_origin}"
        out.warnings.append(
            f"{origin}: {MMR_ENABLED} is false, so recall.mmrLambda is 1.0 (MMR off) and "
            f"{MMR_LAMBDA} ({json_text(lam)}){where} is not used, as in the original"
        )


def _server_block(out: Translated, block: Mapping[str, Any], origin: str) -> None:
    for key, value in block.items():
        if camel(snake(key)) in _OUR_SERVER_KEYS or (key not in SERVER and key not in ORIGINAL_SERVER_KEYS):
            out.put(f"server.{key}", value, None)  # remnic's own (or a typo, which the loader names)
        elif key in SERVER:
            alias = SERVER[key]
            try:
                converted = _convert(f"server.{key}", alias, value, origin)
            except ValidationError as exc:
                out.problems += exc.problems
                continue
            out.put(alias.target, converted, f"server.{key}", Aside("server block", f"server.{key}", value))
        else:
            out.ignore(f"server.{key}", value, origin, "server block")


def _looks_like_a_section(key: str) -> bool:
    """A top-level object named almost like one of remnic's sections is a typo, not the original's key."""
    return bool(difflib.get_close_matches(camel(snake(key)), _SECTION_NAMES, n=1, cutoff=0.75))


def translate(data: Mapping[str, Any], origin: str, *, collect: bool = False) -> Translated:
    """One config file's settings in remnic's nested form.

    Precedence inside a file, lowest first: the original's flat top-level keys, its
    ``engram`` block, its ``remnic`` block, then remnic's own sections. A key that is wrong is
    left out and named in ``problems``: raised together at the end, or with ``collect`` left
    for the caller (the loader adds the problems of every file before saying any).
    """
    out = Translated()
    flat: dict[str, Any] = {}
    ours: list[tuple[str, Any]] = []
    for key, value in data.items():
        if key.startswith(("_", "$")):
            continue
        if key == "memoryDir" or snake(key) == "memory_dir":
            ours.append(("memoryDir", value))
        elif snake(key) in SECTIONS:
            if not isinstance(value, Mapping):
                out.problems.append(FieldProblem(key, "must be an object of settings", path=origin))
                continue
            ours.append((key, value))
        elif key in BLOCKS:
            if not isinstance(value, Mapping):
                message = "must be an object (the original Remnic's settings)"
                out.problems.append(FieldProblem(key, message, path=origin))
        elif (
            isinstance(value, Mapping) and not any(k.startswith(key + ".") for k in FLAT) and _looks_like_a_section(key)
        ):
            message = "unknown config section" + did_you_mean(key, _TOP_LEVEL)
            out.problems.append(FieldProblem(key, message, path=origin, options=_TOP_LEVEL))
        else:
            flat[key] = value
    _flat_block(out, flat, origin, top_level=True)
    for block in BLOCKS:
        if isinstance(data.get(block), Mapping):
            _flat_block(out, data[block], f"{origin} ({block} block)")
    _settle_mmr(out)
    for key, value in ours:
        if key == "memoryDir":
            out.put("memoryDir", value, None)
        elif snake(key) == "server":
            _server_block(out, value, origin)
        else:
            for name, setting in value.items():
                out.put(f"{camel(snake(key))}.{name}", setting, None)
    lam = out.nested.get("recall", {}).get("mmrLambda")
    off = out.mmr.get(MMR_ENABLED, (None,))[0]
    if _bool(off) is False and "recall.mmrLambda" not in out.names and lam != 1.0:
        out.warnings.append(
            f"{origin}: recall.mmrLambda ({json_text(lam)}) in the recall section wins over {MMR_ENABLED}: false, "
            "so MMR is on unless it is 1.0"
        )
    if out.problems and not collect:
        raise problems_error(out.problems)
    return out


def problems_error(problems: list[FieldProblem]) -> ValidationError:
    """One error naming every problem found in config files (one problem: its own words)."""
    if len(problems) == 1:
        return ValidationError(problems[0].describe(), problems=problems)
    return ValidationError(f"{len(problems)} problems in the config (each listed below)", problems=problems)


@dataclass
class Migration:
    """A config file as ``remnic config migrate`` writes it, and what it did."""

    nested: dict[str, Any]
    translated: Translated
    kept: list[str]
    """Keys under ``_remnicOriginal`` of the original's keys that set nothing here (as in the file)."""
    not_read: list[str]
    """Keys under ``_remnicOriginal`` of the original's keys remnic does not read."""


def migrated(data: Mapping[str, Any], origin: str) -> Migration:
    """A config file for ``remnic config migrate``: every setting under its section, its top-level
    comment and schema keys (``_about``, ``$schema``) as they are, and the original's keys that set
    nothing here kept under ``_remnicOriginal`` with what an earlier migration put there. A file
    already migrated comes back unchanged."""
    translated = translate(data, origin)
    nested = {k: v for k, v in data.items() if k.startswith(("_", "$")) and k != UNMAPPED_KEY}
    nested.update(translated.nested)
    earlier = data.get(UNMAPPED_KEY)
    aside: dict[str, Any]
    if isinstance(earlier, Mapping):
        aside = dict(earlier)
    else:  # not an object: still the user's, kept whole
        aside = {} if earlier is None else {f"{UNMAPPED_KEY} (earlier)": earlier}
    kept = [_set_aside(aside, entry) for entry in translated.kept]
    not_read = [_set_aside(aside, entry) for entry in translated.unmapped]
    if aside or UNMAPPED_KEY in data:
        nested[UNMAPPED_KEY] = aside
    return Migration(nested, translated, sorted(set(kept)), sorted(set(not_read)))


def _set_aside(aside: dict[str, Any], entry: Aside) -> str:
    """Keep ``entry`` under its own name; when that name holds another value (the same key in two places
    of the file, or from an earlier migration), under its name and where it came from, so both are kept."""
    candidates = [entry.name, f"{entry.name} ({entry.where})"]
    candidates += [f"{entry.name} ({entry.where} {n})" for n in range(2, len(aside) + 3)]
    for key in candidates:
        if key not in aside or aside[key] == entry.value:
            aside[key] = entry.value
            return key
    raise AssertionError("unreachable: one more candidate than keys")
