"""Bearer tokens, principals and the namespace policy.

Tokens live outside the memory repository (its git history would keep a
committed secret forever): ``$XDG_CONFIG_HOME/remnic/tokens.json`` or
``~/.config/remnic/tokens.json`` (:func:`remnic.config.user_config_file`) unless
``REMNIC_TOKENS_PATH`` names another file. The file is mode 0600 and holds only
a SHA-256 of each token, with the principal it maps to, an id and a creation
time; ``remnic token generate`` prints the secret once.

A presented token is hashed and compared against every stored hash with
``hmac.compare_digest`` and no early exit, so response time does not reveal how
much of a guess matched or which entry it was.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remnic.config import MARKER_FILE, NamespaceSettings, namespace_policies, user_config_file
from remnic.config.paths import TOKENS_ENV, ignored_copy, single_file
from remnic.errors import NotFoundError, UsageError, ValidationError
from remnic.fsio import write_atomic
from remnic.memfile.model import NAMESPACE_RE, now_iso

from .errors import NamespaceForbidden

log = logging.getLogger("remnic.server")

TOKEN_PREFIX = "rmn_"
PRINCIPAL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
DEFAULT_PRINCIPAL = "default"
ANY_PRINCIPAL = "*"


def default_tokens_path(env: Mapping[str, str] | None = None) -> Path:
    return single_file("tokens.json", env=env)


def tokens_file_warning(env: Mapping[str, str] | None = None) -> str | None:
    """Said by ``serve``, ``daemon start``, ``token`` and ``doctor`` when a ``tokens.json`` under ``~/.config``
    is ignored because ``$XDG_CONFIG_HOME`` holds one too."""
    return ignored_copy("tokens.json", env=env)


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_principal(name: Any, field: str = "principal") -> str:
    if not isinstance(name, str) or not PRINCIPAL_RE.match(name):
        raise ValidationError.single(
            field, f"{name!r} is not a valid principal name (letters, digits, '.', '_', '@', '-'; up to 64)"
        )
    return name


def ensure_outside_repo(path: Path, memory_dir: Path | None) -> None:
    """Refuse a tokens file inside the memory repository, or inside any other one (a folder with the
    ``.remnic-memory`` marker, at or above the file): a commit there could capture it."""
    # Both spellings, as written and with every link resolved: a linked folder may lead into a repository.
    spelled = {Path(os.path.abspath(path)), Path(os.path.realpath(path))}
    repos = {Path(f(memory_dir)) for f in (os.path.abspath, os.path.realpath)} if memory_dir is not None else set()
    repos |= {d for absolute in spelled for d in absolute.parents if (d / MARKER_FILE).is_file()}
    for absolute, repo in ((a, r) for a in spelled for r in sorted(repos)):
        try:
            absolute.relative_to(repo)
        except ValueError:
            continue
        raise UsageError(
            f"tokens file {path} is inside the memory repository {repo}; it could end up in "
            f"git history. Point ${TOKENS_ENV} at a file outside it (without it: {user_config_file('tokens.json')})"
        )


@dataclass
class TokenEntry:
    id: str
    principal: str
    sha256: str
    created: str
    label: str | None = None

    def to_dict(self, *, with_hash: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "principal": self.principal, "created": self.created}
        if self.label:
            out["label"] = self.label
        if with_hash:
            out["sha256"] = self.sha256
        return out


class TokenStore:
    """The tokens file. Safe to share between a running server and the CLI: writes are atomic
    renames and readers reload when the file's mtime/size change.

    ``generate`` and ``revoke`` read, modify and write the file while holding an exclusive
    ``flock`` on a sidecar ``<file>.lock`` (the file itself is replaced by each write, so it cannot
    carry the lock), so concurrent ``remnic token`` processes never lose each other's changes.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_tokens_path()
        self._lock = threading.Lock()
        self._stamp: tuple[float, int] | None = None
        self._entries: list[TokenEntry] = []

    def _stat(self) -> tuple[float, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def entries(self) -> list[TokenEntry]:
        """Current entries, re-read only when the file changed (so a revoke takes effect at once)."""
        with self._lock:
            stamp = self._stat()
            if stamp != self._stamp:
                self._entries = self._read() if stamp is not None else []
                self._stamp = stamp
            return list(self._entries)

    def _read(self) -> list[TokenEntry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            raise UsageError(f"tokens file {self.path} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
        rows = data.get("tokens", []) if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise UsageError(f"tokens file {self.path} must be an object with a 'tokens' list")
        out = []
        for row in rows:
            if isinstance(row, dict) and all(isinstance(row.get(k), str) for k in ("id", "principal", "sha256")):
                out.append(
                    TokenEntry(
                        row["id"],
                        row["principal"],
                        row["sha256"],
                        str(row.get("created", "")),
                        row.get("label") if isinstance(row.get("label"), str) else None,
                    )
                )
        return out

    def _write(self, entries: list[TokenEntry]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = json.dumps({"version": 1, "tokens": [e.to_dict(with_hash=True) for e in entries]}, indent=2)
        write_atomic(self.path, body + "\n", mode=0o600)
        os.chmod(self.path, 0o600)  # write_atomic's mode is subject to the umask; be explicit
        with self._lock:
            self._stamp = None

    @contextmanager
    def _locked(self) -> Iterator[list[TokenEntry]]:
        """The current entries, read under the file's exclusive lock, held until the block ends."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield self._read() if self.path.exists() else []  # fresh from disk, never the cache
        finally:
            os.close(fd)  # releases the lock

    def generate(self, principal: str, label: str | None = None) -> tuple[str, TokenEntry]:
        """A new secret for ``principal``; only its hash is stored. Returns (secret, entry)."""
        check_principal(principal)
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        entry = TokenEntry(
            id="tok_" + secrets.token_hex(4),
            principal=principal,
            sha256=token_hash(secret),
            created=now_iso(),
            label=label,
        )
        with self._locked() as current:
            self._write(current + [entry])
        return secret, entry

    def revoke(self, key: str) -> list[TokenEntry]:
        """Remove the token with this id, or every token of the principal ``key``."""
        with self._locked() as current:
            gone = [e for e in current if e.id == key] or [e for e in current if e.principal == key]
            if not gone:
                ids = ", ".join(e.id for e in current) or "none"
                raise NotFoundError(f"no token with id or principal {key!r} (tokens: {ids})")
            self._write([e for e in current if e not in gone])
        return gone


class Authenticator:
    """Maps an ``Authorization: Bearer <token>`` header to a principal, or None."""

    def __init__(self, store: TokenStore | None, extra: Mapping[str, str] | None = None) -> None:
        self.store = store
        # Tokens given on the command line (--token) are kept hashed in memory too.
        self._extra = [(token_hash(secret), principal) for secret, principal in (extra or {}).items()]

    def has_tokens(self) -> bool:
        return bool(self._extra) or bool(self.store and self.store.entries())

    def principal_for(self, authorization: str | None) -> str | None:
        if not authorization:
            return None
        scheme, _, secret = authorization.strip().partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret or len(secret) > 512:
            return None
        digest = token_hash(secret).encode("ascii")
        try:
            stored = self.store.entries() if self.store else []
        except UsageError as exc:  # a hand-broken tokens file: fail closed for its tokens, and say why
            log.error("ignoring the tokens file: %s", exc.message)
            stored = []
        candidates = self._extra + [(e.sha256, e.principal) for e in stored]
        found: str | None = None
        for hashed, principal in candidates:
            # No early exit: every candidate is compared whatever matched before.
            if hmac.compare_digest(hashed.encode("ascii", "replace"), digest):
                found = principal
        return found


class NamespacePolicy:
    """Who may read and write which namespace.

    Disabled (the default): every principal reads and writes every namespace.
    Enabled: a namespace with a policy admits the principals listed in its
    ``readPrincipals`` / ``writePrincipals`` (``"*"`` admits all); the default
    namespace without a policy is open; any other namespace without a policy is
    closed. A request that names no namespace uses the principal's own namespace
    (a policy named like the principal) when it has one, else the default.
    """

    def __init__(self, settings: NamespaceSettings) -> None:
        self.enabled = settings.enabled
        self.default = settings.default
        self.policies = self._parse(settings.policies)

    @staticmethod
    def _parse(raw: Mapping[str, Any]) -> dict[str, dict[str, frozenset[str]]]:
        # The config loader refuses a bad policy already (naming its file); settings built in code get here too.
        policies, problems = namespace_policies(raw or {})
        if problems:
            raise ValidationError("invalid namespace policy in config", problems=problems)
        return policies

    def _admits(self, principal: str, namespace: str, key: str) -> bool:
        if not self.enabled:
            return True
        policy = self.policies.get(namespace)
        if policy is None:
            return namespace == self.default
        allowed = policy.get(key, frozenset())
        if key == "readPrincipals":  # a writer may always read what it writes
            allowed = allowed | policy.get("writePrincipals", frozenset())
        return principal in allowed or ANY_PRINCIPAL in allowed

    def can_read(self, principal: str, namespace: str) -> bool:
        return self._admits(principal, namespace, "readPrincipals")

    def can_write(self, principal: str, namespace: str) -> bool:
        return self._admits(principal, namespace, "writePrincipals")

    def home(self, principal: str) -> str:
        return principal if self.enabled and principal in self.policies else self.default

    def resolve(self, principal: str, requested: Any, *, write: bool, field: str = "namespace") -> str | None:
        """The namespace a request acts on, checked before anything runs.

        Returns None only for a read that names no namespace while namespaces are
        disabled: such a read spans every namespace.
        """
        if requested is None or requested == "":
            if not self.enabled and not write:
                return None
            namespace = self.home(principal)
        elif not isinstance(requested, str) or not NAMESPACE_RE.match(requested):
            raise ValidationError.single(
                field,
                f"{requested!r} is not a valid namespace (lowercase letters, digits, "
                "'-' and '_', up to 64; no '/' or '..')",
            )
        else:
            namespace = requested
        allowed = self.can_write(principal, namespace) if write else self.can_read(principal, namespace)
        if not allowed:
            verb = "write" if write else "read"
            raise NamespaceForbidden(f"principal {principal!r} may not {verb} namespace {namespace!r}")
        return namespace

    def readable(self, principal: str, namespaces: Iterable[str]) -> list[str]:
        return [ns for ns in namespaces if self.can_read(principal, ns)]
