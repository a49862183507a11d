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

from remnic.errors import ValidationError

from .settings import SECTIONS, ServerSettings, camel, did_you_mean, json_text, snake

UNMAPPED_KEY = "_remnicOriginal"
"""Where ``remnic config migrate`` keeps the original's keys remnic does not read (keys starting
with ``_`` are ignored by the loader), so a migrated file loses nothing."""


class Skip:
    """A converter's answer when the value sets nothing (``recallMmrEnabled: true``)."""


SKIP = Skip()
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


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


@dataclass
class Translated:
    """A config file in remnic's nested form, with what the translation noticed."""

    nested: dict[str, Any] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    """Dotted setting → the original's spelling that set it (absent when remnic's own was used)."""
    warnings: list[str] = field(default_factory=list)
    unmapped: dict[str, Any] = field(default_factory=dict)
    """The original's keys remnic does not read, as they were (for ``config migrate``)."""
    kept: dict[str, Any] = field(default_factory=dict)
    """The original's keys read but setting nothing here (``recallMmrEnabled: true``, a ``recallMmrLambda``
    that ``recallMmrEnabled: false`` overrules), as they were: ``config migrate`` keeps them too."""
    mmr: dict[str, tuple[Any, str]] = field(default_factory=dict)
    """``recallMmrEnabled`` and ``recallMmrLambda`` as the original's layers left them: (value, origin)."""

    @property
    def uses_original_spellings(self) -> bool:
        return bool(self.names or self.unmapped or self.kept)

    def put(self, dotted: str, value: Any, name: str | None) -> None:
        if dotted == "memoryDir":
            self.nested["memoryDir"] = value
        else:
            section, key = dotted.split(".", 1)
            if not key.startswith(("_", "$")):  # a comment or schema link stays as written; the loader skips it
                key = camel(snake(key))
            dotted = f"{section}.{key}"
            self.nested.setdefault(section, {})[key] = value
        if name is None:
            self.names.pop(dotted, None)
        else:
            self.names[dotted] = name

    def ignore(self, name: str, value: Any, origin: str) -> None:
        self.unmapped[name] = value
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
    try:
        return alias.convert(value)
    except ValueError as exc:  # the converter's own words, naming what the key takes
        raise ValidationError.single(name, str(exc), path=origin) from None
    except TypeError as exc:
        raise ValidationError.single(name, f"cannot be read as {alias.target}: {exc}", path=origin) from None


def _flat_block(out: Translated, block: Mapping[str, Any], origin: str, *, top_level: bool = False) -> None:
    for name, value in _flatten(block):
        if name.startswith(("_", "$")):
            continue
        if name == "memoryDir":
            out.put("memoryDir", value, None)
            continue
        alias = FLAT.get(name)
        if alias is None:
            if not is_original_key(name):
                raise _unknown_key(name, origin, top_level=top_level)
            out.ignore(name, value, origin)
            continue
        converted = _convert(name, alias, value, origin)
        if name in (MMR_ENABLED, MMR_LAMBDA):
            out.mmr[name] = (value, origin)  # the two settle each other once every layer is read
            if name == MMR_LAMBDA:
                out.put(alias.target, converted, name)
        elif not isinstance(converted, Skip):
            out.put(alias.target, converted, name)


def _settle_mmr(out: Translated) -> None:
    """The original turns MMR off with ``recallMmrEnabled: false`` whatever ``recallMmrLambda`` says (the
    lambda matters only when MMR is on): remnic's MMR off is ``recall.mmrLambda`` 1.0."""
    enabled = out.mmr.get(MMR_ENABLED)
    if enabled is None:
        return
    value, origin = enabled
    if _bool(value) is True:
        out.kept[MMR_ENABLED] = value  # sets nothing: MMR runs at whatever recall.mmrLambda is
        return
    out.put("recall.mmrLambda", 1.0, MMR_ENABLED)
    if MMR_LAMBDA in out.mmr:
        lam, lam_origin = out.mmr[MMR_LAMBDA]
        out.kept[MMR_LAMBDA] = lam
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
            out.put(alias.target, _convert(f"server.{key}", alias, value, origin), f"server.{key}")
        else:
            out.ignore(f"server.{key}", value, origin)


def _looks_like_a_section(key: str) -> bool:
    """A top-level object named almost like one of remnic's sections is a typo, not the original's key."""
    return bool(difflib.get_close_matches(camel(snake(key)), _SECTION_NAMES, n=1, cutoff=0.75))


def translate(data: Mapping[str, Any], origin: str) -> Translated:
    """One config file's settings in remnic's nested form.

    Precedence inside a file, lowest first: the original's flat top-level keys, its
    ``engram`` block, its ``remnic`` block, then remnic's own sections.
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
                raise ValidationError.single(key, "must be an object of settings", path=origin)
            ours.append((key, value))
        elif key in BLOCKS:
            if not isinstance(value, Mapping):
                raise ValidationError.single(key, "must be an object (the original Remnic's settings)", path=origin)
        elif (
            isinstance(value, Mapping) and not any(k.startswith(key + ".") for k in FLAT) and _looks_like_a_section(key)
        ):
            raise ValidationError.single(
                key, "unknown config section" + did_you_mean(key, _TOP_LEVEL), path=origin, options=_TOP_LEVEL
            )
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
        out.kept[MMR_ENABLED] = off  # overruled by remnic's own key, but kept by a migration
        out.warnings.append(
            f"{origin}: recall.mmrLambda ({json_text(lam)}) in the recall section wins over {MMR_ENABLED}: false, "
            "so MMR is on unless it is 1.0"
        )
    return out


def migrated(data: Mapping[str, Any], origin: str) -> tuple[dict[str, Any], Translated]:
    """(remnic's nested form of a config file, the translation) for ``remnic config migrate``: every
    setting under its section, and the original's unread keys kept under ``_remnicOriginal``."""
    translated = translate(data, origin)
    nested = dict(translated.nested)
    if translated.unmapped or translated.kept:
        nested[UNMAPPED_KEY] = {**translated.kept, **translated.unmapped}
    return nested, translated
