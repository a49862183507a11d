"""The project a recall is for (``cwd``, ``projectTag``, a coding context) and which memories belong to it.

A coding context is the original Remnic's ``{projectId, branch, rootPath, defaultBranch}``.
From a working directory it is read from the git repository's files — never by running
git in a directory a client named: ``rootPath`` is the nearest folder holding ``.git``,
``branch`` comes from ``HEAD`` (None when detached), ``defaultBranch`` from
``refs/remotes/origin/HEAD``, and ``projectId`` is ``origin:`` plus the 32-bit FNV-1a hash
of the normalised origin URL (``root:`` plus the hash of the root path without one), so
the scp and https spellings of one remote give one id. ``projectTag: webapp`` is the
context ``tag:webapp``.

A memory belongs to the project when its ``project`` frontmatter (a name or a list), a tag
(``webapp`` or ``project:webapp``) or its ``entityRef`` (``project-webapp``) names one of the
project's names: the tag, the repository folder's name, the origin repository's name.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SLUG = re.compile(r"[^a-z0-9]+")
_URL_CREDENTIALS = re.compile(r"^([a-z][a-z0-9+.-]*://)[^@/]*@")
_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")


def slug(name: str) -> str:
    return _SLUG.sub("-", name.lower()).strip("-")


def fnv1a(text: str) -> str:
    """32-bit FNV-1a of the UTF-8 bytes, as 8 hex digits (the original's stable project hash)."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{value:08x}"


def normalize_origin(url: str) -> str:
    """``git@github.com:Acme/WebApp.git`` and ``https://user@github.com/acme/webapp`` → ``github.com/acme/webapp``."""
    text = _URL_CREDENTIALS.sub(r"\1", url.strip().lower())
    scp = _SCP.match(text) if "://" not in text else None
    if scp:
        text = f"{scp.group(1)}/{scp.group(2)}"
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text)
    text = text.rstrip("/")
    return text.removesuffix(".git").rstrip("/")


@dataclass(frozen=True)
class ProjectContext:
    project_id: str
    root_path: str
    branch: str | None = None
    default_branch: str | None = None
    names: tuple[str, ...] = ()
    """Slugs a memory may name the project by (the first is what a write records)."""

    @property
    def name(self) -> str:
        return self.names[0] if self.names else ""

    def to_dict(self) -> dict[str, Any]:
        """The original's codingContext, plus remnic's ``projectName`` and ``names``."""
        return {
            "projectId": self.project_id,
            "branch": self.branch,
            "rootPath": self.root_path,
            "defaultBranch": self.default_branch,
            "projectName": self.name,
            "names": list(self.names),
        }


def from_tag(tag: str) -> ProjectContext:
    tag = tag.strip()
    return ProjectContext(f"tag:{tag}", f"tag:{tag}", None, None, (slug(tag),) if slug(tag) else ())


def from_dict(context: Mapping[str, Any]) -> ProjectContext:
    """A client's codingContext ``{projectId, branch, rootPath, defaultBranch}``."""
    project_id, root = str(context["projectId"]), str(context["rootPath"])
    names = []
    for candidate in (project_id.removeprefix("tag:") if project_id.startswith("tag:") else "", Path(root).name):
        if candidate and slug(candidate) and slug(candidate) not in names:
            names.append(slug(candidate))
    branch, default = context.get("branch"), context.get("defaultBranch")
    return ProjectContext(
        project_id,
        root,
        branch if isinstance(branch, str) else None,
        default if isinstance(default, str) else None,
        tuple(names),
    )


def _git_dir(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8", errors="replace")  # a worktree or submodule: "gitdir: <path>"
    except OSError:
        return None
    if text.startswith("gitdir:"):
        target = Path(text.split(":", 1)[1].strip())
        return target if target.is_absolute() else (root / target)
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a path the OS cannot stat (a name over 255 bytes, no permission) is
    no repository, never an error: a client's ``cwd`` is only a hint."""
    try:
        return path.exists()
    except OSError:
        return False


def from_cwd(cwd: str) -> ProjectContext:
    """The coding context of a working directory, from the files of its git repository (no git run).
    Outside a repository: the folder itself, by its name."""
    start = Path(os.path.abspath(os.path.expanduser(cwd)))
    root = next((d for d in (start, *start.parents) if _exists(d / ".git")), None)
    if root is None:
        return ProjectContext(
            f"root:{fnv1a(str(start))}", str(start), None, None, (slug(start.name),) if slug(start.name) else ()
        )
    git_dir = _git_dir(root)
    branch = default = origin = None
    if git_dir is not None:
        head = _read(git_dir / "HEAD") or ""
        branch = head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None
        common = Path(_read(git_dir / "commondir") or ".")
        common = common if common.is_absolute() else git_dir / common
        remote_head = _read(common / "refs" / "remotes" / "origin" / "HEAD") or ""
        default = remote_head.removeprefix("ref: refs/remotes/origin/") if remote_head.startswith("ref:") else None
        config = configparser.ConfigParser(strict=False, interpolation=None)
        try:
            config.read(common / "config", encoding="utf-8")
            origin = config.get('remote "origin"', "url", fallback=None)
        except (configparser.Error, OSError):
            origin = None
    names = []
    if origin:
        repo = normalize_origin(origin).rsplit("/", 1)[-1]
        if slug(repo):
            names.append(slug(repo))
    if slug(root.name) and slug(root.name) not in names:
        names.insert(0, slug(root.name))
    project_id = f"origin:{fnv1a(normalize_origin(origin))}" if origin else f"root:{fnv1a(str(root))}"
    return ProjectContext(project_id, str(root), branch, default, tuple(names))


def _names_in(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [slug(str(v)) for v in items if isinstance(v, (str, int)) and str(v).strip()]


def belongs(fm: Mapping[str, Any], project: ProjectContext) -> bool:
    """Whether a memory's frontmatter names the project (``project``, a tag, ``entityRef``)."""
    wanted = set(project.names)
    if not wanted:
        return False
    if wanted & set(_names_in(fm.get("project"))):
        return True
    for tag in fm.get("tags") or []:
        text = str(tag)
        if slug(text.removeprefix("project:")) in wanted:
            return True
    refs = fm.get("entityRef")
    return any(
        str(r).startswith("project-") and slug(str(r)[8:]) in wanted
        for r in (refs if isinstance(refs, list) else [refs])
        if r
    )
