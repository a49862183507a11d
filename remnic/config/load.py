"""Loading settings: which config files, in which order, and where each value came from.

Values are layered, lowest precedence first:

1. the defaults (:mod:`.settings`),
2. ``~/.config/engram/config.json``, then ``~/.config/remnic/config.json`` (the user's config;
   with ``$XDG_CONFIG_HOME`` set, its ``engram/`` and ``remnic/config.json`` are read after each),
3. ``<memory dir>/remnic.config.json`` (versioned with the memories),
4. ``./engram.config.json``, then ``./remnic.config.json`` (the current directory),
5. the file named by ``REMNIC_CONFIG_PATH`` (or the original's ``ENGRAM_CONFIG_PATH``),
6. explicit overrides (command-line flags, API arguments).

A file inside a memory repository (3., and 4. or 5. when they lie in one) is shared: ``git pull``
brings it, so a user-only setting in it (:data:`.settings.USER_ONLY`) is refused (one of
:data:`.settings.USER_ONLY_IGNORED` is ignored with a warning). So is one in a
``./`` file (4.) inside any git work tree, tracked or not: a project someone cloned brings it just
the same. The user's own files (2., and 5. outside a memory repository: a file the user named) may
set them. Every problem of every file is reported at once, each naming its file and key.

Config files use camelCase keys (``recall.topK``) as Remnic does; snake_case is
accepted too, and so are the original Remnic's flat keys and file shapes (see
:mod:`.aliases`). ``remnic config`` prints every value with its origin.

The memory directory is found like git finds a repository: ``--memory-dir``,
then ``REMNIC_MEMORY_DIR`` (or ``ENGRAM_MEMORY_DIR``), then the nearest ancestor
of the current directory holding a ``.remnic-memory`` marker, then the active space
(``remnic space switch``, :mod:`.spaces`), then ``memoryDir`` from a config file, then
``~/.remnic/memory``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from remnic.errors import FieldProblem, UsageError, ValidationError

from .aliases import MMR_ENABLED, MMR_LAMBDA, Translated, problems_error, translate, truthy
from .jsonfile import read_config_file
from .paths import user_config_files
from .rules import value_problems
from .settings import (
    CHOICES,
    MARKER_FILE,
    REPO_CONFIG_FILE,
    SECTIONS,
    USER_ONLY,
    USER_ONLY_IGNORED,
    Settings,
    _check_value,
    camel,
    did_you_mean,
    json_text,
    snake,
)
from .spaces import active_space

ENV_PAIRS = {
    "config": ("REMNIC_CONFIG_PATH", "ENGRAM_CONFIG_PATH"),
    "memory": ("REMNIC_MEMORY_DIR", "ENGRAM_MEMORY_DIR"),
}
"""Environment variables, remnic's first: the original Remnic's ENGRAM_ twin applies when the first is unset."""
SPACES_FILE = "spaces.json"
_HOME_VAR = re.compile(r"\$\{HOME\}|\$HOME(?![A-Za-z0-9_])")


_JSON_TYPES = {
    bool: "a boolean (true or false)",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
}


def _check_type(key: str, value: Any, default: Any, path: str, annotation: Any = "") -> Any:
    """``value`` checked against the default's type (a None default: the field's annotation, ``int | None``
    or ``str | None``); a mismatch is named in JSON's words, as the file spells it (``expected an
    integer, got true``)."""
    want: type = type(default)
    if default is None:
        want = int if str(annotation).startswith("int") else str
        ok = value is None or (isinstance(value, want) and not isinstance(value, bool))
    elif isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, dict):
        ok = isinstance(value, dict)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        expected = _JSON_TYPES.get(want, want.__name__) + (" or null" if default is None else "")
        raise ValidationError.single(
            key, f"expected {expected}, got {json_text(value)}", path=path, options=CHOICES.get(key)
        )
    if isinstance(value, list) and str(annotation).startswith("list[str]"):
        # Every list setting holds names or patterns: a number in one fails deep inside a scan.
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise ValidationError.single(f"{key}[{i}]", f"expected a string, got {json_text(item)}", path=path)
    return value


_OWN_CONFIG = (
    "can only be set in your own config (~/.config/remnic/config.json, or a file outside the memory "
    "repository named by REMNIC_CONFIG_PATH)"
)
_SHARED_RULE = (
    f"{_OWN_CONFIG}, not in a config file inside a memory repository, which `git pull` brings to everyone who clones it"
)


def _cloned_rule(work_tree: Path) -> str:
    """Why a user-only setting is refused in a ``./`` config file inside a git work tree (a project's)."""
    return (
        f"{_OWN_CONFIG}, not in a config file of the current directory inside a git repository ({work_tree}), "
        "which a clone or `git pull` brings from whoever committed it"
    )


def _apply(
    settings: Settings,
    data: Mapping[str, Any],
    origin: str,
    problems: list[FieldProblem],
    *,
    shared: str | None = None,
    names: Mapping[str, str] | None = None,
) -> Settings:
    """Set each nested ``{section: {key: value}}`` value, checked; each value refused is left as it was and
    added to ``problems``. ``shared``: why user-only settings are refused in this file (None: they are not);
    ``names`` gives the original Remnic's spelling of settings it set, recorded in their origin."""
    for raw_section, values in data.items():
        section = snake(raw_section)
        if section == "memory_dir" or raw_section.startswith(("_", "$")):
            continue
        if section not in SECTIONS:
            options = ["memoryDir", *(camel(s) for s in SECTIONS)]
            message = "unknown config section" + did_you_mean(raw_section, options)
            problems.append(FieldProblem(raw_section, message, path=origin, options=options))
            continue
        if not isinstance(values, dict):
            problems.append(FieldProblem(raw_section, "must be an object of settings", path=origin))
            continue
        current = getattr(settings, section)
        known = {f.name: f for f in fields(current)}
        updates = {}
        for raw_key, value in values.items():
            if raw_key.startswith(("_", "$")):
                continue  # comments and schema links, as at the top level
            key = snake(raw_key)
            if key not in known:
                options = [camel(k) for k in known]
                message = "unknown setting" + did_you_mean(camel(key), options)
                problems.append(FieldProblem(f"{raw_section}.{raw_key}", message, path=origin, options=options))
                continue
            dotted = f"{section}.{camel(key)}"
            if shared and dotted in USER_ONLY:
                problems.append(FieldProblem(dotted, shared, path=origin))
                continue
            if shared and dotted in USER_ONLY_IGNORED:
                settings.warnings.append(f"{origin}: {dotted} {json_text(value)} ignored: it {shared}")
                continue
            if dotted == "git.splitIndex" and isinstance(value, bool):
                value = json.dumps(value)  # documented as true/false: the JSON boolean means the same
            name = (names or {}).get(dotted)
            try:
                checked = _check_type(dotted, value, getattr(type(current)(), key), origin, known[key].type)
                if value is not None:
                    _check_value(dotted, value, origin)  # as written: the message quotes the file
            except ValidationError as exc:
                problems += _as_spelled(exc.problems, name, dotted)
                continue
            found = value_problems(dotted, checked, origin)
            if found:
                problems += _as_spelled(found, name, dotted)
                continue
            updates[key] = checked
            settings.origins[dotted] = f"{origin}, as {name}" if name else origin
        setattr(settings, section, replace(current, **updates))
    return settings


def _as_spelled(problems: list[FieldProblem], name: str | None, dotted: str) -> list[FieldProblem]:
    """The problems with a value the original's key set, naming the key as the file spells it
    (``graphRecallEnabled (recall.graph)``): remnic's name alone is nowhere in that file."""
    if not name:
        return problems
    return [replace(p, field=f"{name} ({dotted})") if p.field == dotted else p for p in problems]


def find_memory_repo(start: Path) -> Path | None:
    """The nearest ancestor of ``start`` (inclusive) that holds the memory-repo marker."""
    for directory in (start, *start.parents):
        if (directory / MARKER_FILE).is_file():
            return directory
    return None


def env_value(env: Mapping[str, str], which: str) -> tuple[str, str] | None:
    """(variable name, value) of the first of remnic's and the original's variables that is set."""
    for name in ENV_PAIRS[which]:
        if env.get(name):
            return name, env[name]
    return None


def expand_home(value: str, env: Mapping[str, str]) -> Path:
    """``~``, ``$HOME`` and ``${HOME}`` expanded (the spellings the original Remnic accepts)."""
    home = env.get("HOME") or str(Path.home())
    value = _HOME_VAR.sub(lambda _m: home, value)
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    return Path(value).expanduser()


def git_work_tree(directory: Path) -> Path | None:
    """The nearest ancestor of ``directory`` (inclusive) holding a ``.git`` (a folder, or the file of a linked
    worktree or submodule): the work tree whose clones bring the files under it. No git process is run."""
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def in_memory_repo(path: Path, root: Path) -> bool:
    """Whether a config file lies inside the memory directory in use or any other memory repository:
    a file `git pull` can bring, shared by everyone who clones it (so never trusted with user-only settings)."""
    path = path.resolve()
    return path.is_relative_to(root.resolve()) or find_memory_repo(path.parent) is not None


def _config_candidates(cwd: Path, env: Mapping[str, str]) -> list[tuple[Path, str]]:
    """Global config files, lowest precedence first, with their origin labels."""
    found = [
        *user_config_files("config.json", "engram", env),
        *user_config_files("config.json", "remnic", env),
        (cwd / "engram.config.json", "./engram.config.json"),
        (cwd / REPO_CONFIG_FILE, f"./{REPO_CONFIG_FILE}"),
    ]
    named = env_value(env, "config")
    if named:
        chosen = _named_path(named[1], cwd, env)
        # The file the user named is read once, as theirs, not also as the current directory's.
        found = [(path, label) for path, label in found if not _same_file(path, chosen)]
        found.append((chosen, named[0]))
    return found


def config_fingerprint(memory_dir: Path, cwd: Path, env: Mapping[str, str]) -> tuple[tuple[str, int, int], ...]:
    """(path, mtime_ns, size) of every file :func:`load_settings` would read for ``memory_dir`` from ``cwd``
    (-1, -1 for one that does not exist): a long-running process compares it to notice a changed config
    with a few stats, without parsing anything."""
    paths = [path for path, _label in _config_candidates(cwd, env)] + [memory_dir / REPO_CONFIG_FILE]
    out = []
    for path in paths:
        try:
            st = path.stat()
            out.append((str(path), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(path), -1, -1))
    return tuple(out)


def _named_path(value: str, cwd: Path, env: Mapping[str, str]) -> Path:
    """The config file ``REMNIC_CONFIG_PATH`` names; a relative one from the current directory."""
    path = expand_home(value, env)
    return path if path.is_absolute() else cwd / path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


@dataclass
class ConfigFile:
    """One config file read and translated to remnic's nested form."""

    path: Path
    label: str
    data: dict[str, Any]
    translated: Translated
    home: bool = False
    """One of the user's own files under ~/.config: never shared, wherever the memory directory is."""
    here: bool = False
    """Found in the current directory (``./remnic.config.json``): the user did not name it."""


def read_config_files(cwd: Path, env: Mapping[str, str]) -> list[ConfigFile]:
    """The user's and the current directory's config files that exist, lowest precedence first."""
    problems: list[FieldProblem] = []
    files = _read_config_files(cwd, env, problems)
    if problems:
        raise problems_error(problems)
    return files


def _read_config_files(cwd: Path, env: Mapping[str, str], problems: list[FieldProblem]) -> list[ConfigFile]:
    """:func:`read_config_files`, adding what is wrong with each file to ``problems``; a file that cannot
    be read is left out, the keys wrong in one that can are (:func:`.aliases.translate`)."""
    files = []
    named = env_value(env, "config")
    for path, label in _config_candidates(cwd, env):
        if named and label == named[0] and path.is_dir():
            message = f"{named[1]} is a directory: point {named[0]} at a JSON config file (e.g. {path / 'config.json'})"
            problems.append(FieldProblem(named[0], message))
            continue
        if not path.exists():
            continue
        full = f"{label} ({path})"
        try:
            data = read_config_file(path)
        except ValidationError as exc:
            problems += exc.problems
            continue
        translated = translate(data, full, collect=True)
        problems += translated.problems
        where = translated.nested.get("memoryDir")
        if where is not None and not isinstance(where, str):
            problems.append(FieldProblem("memoryDir", f"expected a string, got {json_text(where)}", path=full))
            translated.nested.pop("memoryDir")
        elif isinstance(where, str) and not where.strip():
            # Not read as "the default": an empty value is a setting left half-written.
            message = "is empty: name a directory, or leave memoryDir out for the default (~/.remnic/memory)"
            problems.append(FieldProblem("memoryDir", message, path=full))
            translated.nested.pop("memoryDir")
        files.append(
            ConfigFile(
                path.resolve(),
                full,
                data,
                translated,
                home=label.startswith(("~", "$XDG")),
                here=label.startswith("./"),
            )
        )
    if named and not _named_path(named[1], cwd, env).exists():
        problems.append(FieldProblem(named[0], f"no config file at {named[1]}"))
    return files


def _current_dir(memory_dir: str | os.PathLike[str] | None) -> Path:
    """The working directory; when it was deleted under the shell, an absolute memory directory stands
    in for it (config files are then found from there), else an error saying what to do."""
    try:
        return Path.cwd()
    except FileNotFoundError:
        if memory_dir is not None and Path(memory_dir).expanduser().is_absolute():
            return Path(memory_dir).expanduser()
        raise UsageError(
            "the current directory no longer exists (deleted or moved); cd to an existing directory "
            "or give an absolute --memory-dir"
        ) from None


def load_settings(
    memory_dir: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    use_config_files: bool = True,
) -> Settings:
    """Resolve the memory directory and layer every config source over the defaults.

    ``use_config_files=False`` resolves the directory and keeps the defaults: what
    ``remnic doctor`` falls back to when a config file itself is broken.
    """
    env = os.environ if env is None else env
    cwd = (cwd or _current_dir(memory_dir)).resolve()
    home = Path(env.get("HOME") or Path.home())
    problems: list[FieldProblem] = []
    files = _read_config_files(cwd, env, problems) if use_config_files else []
    root, origin = _memory_dir(memory_dir, cwd, env, home, files)

    settings = Settings(memory_dir=root)
    settings.origins["memoryDir"] = origin
    repo_cfg = root / REPO_CONFIG_FILE
    shared_path = repo_cfg.resolve() if use_config_files and repo_cfg.exists() else None
    layers = list(files)
    # A candidate that failed to read is not in ``files``, but its problems are already said: not twice.
    if (
        shared_path is not None
        and all(f.path != shared_path for f in files)
        and not any(_same_file(repo_cfg, path) for path, _label in _config_candidates(cwd, env))
    ):
        label = f"memory repo ({repo_cfg})"
        try:
            data = read_config_file(repo_cfg)
        except ValidationError as exc:
            problems += exc.problems
        else:
            translated = translate(data, label, collect=True)
            problems += translated.problems
            at = sum(1 for f in layers if f.home)
            layers.insert(at, ConfigFile(shared_path, label, data, translated))
    mmr: dict[str, tuple[Any, str]] = {}
    for layer in layers:
        nested = {k: v for k, v in layer.translated.nested.items() if k != "memoryDir"}
        shared = _shared_rule(layer, cwd, root, shared_path)
        _apply(settings, nested, layer.label, problems, shared=shared, names=layer.translated.names)
        settings.config_files.append(layer.label)
        settings.warnings += layer.translated.warnings
        _settle_mmr_across(settings, layer, mmr)
    if problems:
        raise problems_error(problems)
    if overrides:
        for dotted, value in overrides.items():
            section, key = dotted.split(".", 1)
            _apply(settings, {section: {key: value}}, "override", problems)
        if problems:
            raise problems_error(problems)
    return settings


def _shared_rule(layer: ConfigFile, cwd: Path, root: Path, shared_path: Path | None) -> str | None:
    """Why user-only settings are refused in ``layer`` (None: it is the user's own). A file in the memory
    repository is shared with everyone who clones it; one found in the current directory inside any git
    work tree came with the project (the folder it was found in, or the file a link there points to)."""
    if layer.home:
        return None
    if layer.path == shared_path or in_memory_repo(layer.path, root):
        return _SHARED_RULE
    if layer.here:
        work_tree = git_work_tree(cwd) or git_work_tree(layer.path.parent)
        if work_tree is not None:
            return _cloned_rule(work_tree)
    return None


def _settle_mmr_across(settings: Settings, layer: ConfigFile, mmr: dict[str, tuple[Any, str]]) -> None:
    """The original's ``recallMmrEnabled: false`` wins over its ``recallMmrLambda`` in another config file
    too, as it does inside one (:func:`.aliases.translate` settles those): MMR stays off (1.0), and a
    warning names the lambda not used. ``mmr``: the latest ``recallMmrEnabled`` and ``recallMmrLambda``
    of the layers before, (value, file)."""
    here = layer.translated.mmr
    set_by = layer.translated.names.get("recall.mmrLambda")
    enabled = mmr.get(MMR_ENABLED)
    if set_by == MMR_LAMBDA and MMR_ENABLED not in here and enabled is not None and truthy(enabled[0]) is False:
        settings.recall = replace(settings.recall, mmr_lambda=1.0)
        settings.origins["recall.mmrLambda"] = f"{enabled[1]}, as {MMR_ENABLED}"
        settings.warnings.append(_mmr_off_warning(enabled[1], here[MMR_LAMBDA][0], layer.label))
    elif set_by == MMR_ENABLED and MMR_LAMBDA not in here and MMR_LAMBDA in mmr:
        lam, where = mmr.pop(MMR_LAMBDA)  # said once, not again for another file that turns MMR off
        settings.warnings.append(_mmr_off_warning(layer.label, lam, where))
    for name in (MMR_ENABLED, MMR_LAMBDA):
        if name in here:
            mmr[name] = (here[name][0], layer.label)


def _mmr_off_warning(enabled_in: str, lam: Any, lam_in: str) -> str:
    return (
        f"{enabled_in}: {MMR_ENABLED} is false, so recall.mmrLambda is 1.0 (MMR off) and "
        f"{MMR_LAMBDA} ({json_text(lam)}) in {lam_in} is not used, as in the original"
    )


def _memory_dir(
    memory_dir: str | os.PathLike[str] | None,
    cwd: Path,
    env: Mapping[str, str],
    home: Path,
    files: list[ConfigFile],
) -> tuple[Path, str]:
    named = env_value(env, "memory")
    if memory_dir is not None:
        root, origin = Path(memory_dir).expanduser(), "--memory-dir"
    elif named:
        root, origin = expand_home(named[1], env), f"env {named[0]}"
    elif (found := find_memory_repo(cwd)) is not None:
        root, origin = found, f"nearest memory repo above {cwd}"
    elif (space := active_space(env)) is not None:
        root, origin = space.path, f"active space {space.name} ({SPACES_FILE})"
    else:
        root, origin = home / ".remnic" / "memory", "default"
        for layer in reversed(files):
            value = layer.translated.nested.get("memoryDir")
            if value:
                root = expand_home(str(value), env)  # "~" first, then relative to the file
                root = root if root.is_absolute() else layer.path.parent / root
                origin = layer.label
                break
    root = root if root.is_absolute() else (cwd / root)
    return Path(os.path.abspath(root)), origin


def settings_for(memory_dir: str | os.PathLike[str], **section_overrides: Any) -> Settings:
    """Defaults for one directory, ignoring config files: what tests and benchmarks want."""
    settings = Settings(memory_dir=Path(os.path.abspath(Path(memory_dir).expanduser())))
    settings.origins["memoryDir"] = "argument"
    for section, values in section_overrides.items():
        current = getattr(settings, section)
        if is_dataclass(values):
            setattr(settings, section, values)
        else:
            setattr(settings, section, replace(current, **values))
    return settings
