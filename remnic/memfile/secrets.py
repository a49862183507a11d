"""The secret scanner (``store.scanSecrets``): what no memory may hold, for store, import, the file checks
and what observe hears. One scanner, so a credential observe redacts is one the store refuses.

Two kinds of secret: a token of a known shape (an AWS access key id, a GitHub token …), which is
a secret wherever it stands, and a credential said in words — the password of ``user:pass@host``
in a URL, the value after "password is" / "password:", an AWS secret access key in the sentence of
its key id or after "secret access key is" — where only the value is one (:func:`secret_spans`
gives that part, which is what redaction replaces), and a value set in a config line, JSON, Markdown,
"changed the password to X" or a ``curl -u`` / ``mysql -p`` command. A false positive on a write blocks it and makes a
hand-written file malformed, so writes and files are held to the precise rules: a token's shape, a URL's
``user:pass@`` (``:pass@`` too), an AWS secret key beside its id. "password is X" and the config and
command forms (``words``) are a guess at what people
say, applied only to what observe hears, where a miss costs a sentence and never a file. A value said in words counts only when it
looks like one: quoted, or a token of six characters or more with a digit, a symbol or a capital
inside it that ends its clause and is no description ("The password is SHA-256 hashed", "… is
2FA-protected" hold none); never a placeholder (``$DB_PASS``, ``<password>``, ``****``), path, link or
password manager's name — "the password policy requires 12 characters", "the password is in
1Password" and "the password is required" hold none (a plain word unquoted — "the password is
sunshine" — is not told from prose, a known limit). A refusal names the kind and a redacted excerpt
(:func:`describe_secret`), never the value.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

_TRAILING = ".,;:!?)]}"  # the sentence's, not the value's


def _said_value(m: re.Match[str]) -> bool:
    """Whether a bare value said after "password is" / "password:" is one: a credential-shaped token
    that ends its clause. "The password is SHA-256 hashed" or "… is 2FA-protected" describe it."""
    value = m.group("secret").rstrip(_TRAILING)
    if not 6 <= len(value) <= 128 or value[0] in "$%{<[(*•#~/." or _NOT_A_VALUE.match(value):
        return False
    if _DESCRIBED.search(value) or _SCHEME_OR_VERSION.match(value):
        return False
    if not _CLAUSE_END.match(m.string, end := m.start("secret") + len(value)):
        # Mid-clause, only a strong one (Tr0ub4dor&3xyz, P@ssw0rd1) not described by the next word.
        strong = re.search(r"\d", value) and re.search(r"[^\w-]|[a-z].*[A-Z]|[A-Z].*[a-z]", value)
        if not strong or _PARTICIPLE.match(m.string, end):
            return False
    return bool(re.search(r"\d|[^\w'-]|[a-z][A-Z]", value))  # "well-known" is a word


def _quoted_value(m: re.Match[str]) -> bool:
    """A quoted value after "password is" is one, unless a placeholder ("'<your password>'", "'$DB_PASS'")."""
    value = m.group("secret")
    return len(value.strip()) >= 4 and value[0] not in "$%{<[(*•" and not _NOT_A_VALUE.match(value)


# A hyphenated description, not a value: SHA256-hashed, OAuth2-based, x86-only, ISO27001-compliant.
_DESCRIBED = re.compile(
    r"-[a-z]*(?:ed|en|ing|only|based|compliant|safe|proof|ready|free|friendly|specific|wide|like|aware|bound"
    r"|agnostic|native|sensitive|style|length|long|level|side|compatible|capable)$"
)
# A cipher, hash or encoding, or a version, named as what the password is: AES-256, Base64, WPA2-PSK, v1.2.3.
_SCHEME_OR_VERSION = re.compile(
    r"(?i:(?:aes|sha|md|rsa|3?des|base|hex|utf|wpa|argon|bcrypt|scrypt|pbkdf|hmac|ecdsa|ed|tls|ssl|crc|blake)"
    r"[-\d]*(?:id|i|d|psk|gcm|cbc)?)$|v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$"
)
_PARTICIPLE = re.compile(
    r"\s+(?:(?i:is|are|now|also|always|then|fully|securely)\s+)?(?i:\w+(?:ed|en)|only|compliant|based|safe|proof"
    r"|ready|encoded|format|style|algorithm|hash|hashing|encryption|cipher|standard|protocol)\b"
)
# What may follow a value: the end of the text or of the sentence, punctuation, a quote, a dash, or a
# word that starts another clause — never a participle ("… is SHA-256 hashed").
_CLAUSE_END = re.compile(
    r"[.,;:!?)\]}\"'`”’]*(?:\s*$|\s*[.,;:!?()\[\]\"'`“”‘’—–]|\s+-\s"
    r"|\s+(?i:and|but|or|so|then|for|from|until|since|now|today|before|yet|which|though|although|btw)\b)"
)


def _url_password(m: re.Match[str]) -> bool:
    """The password of ``user:pass@host``: any but a placeholder or the user's name again (the
    ``postgres:postgres`` or ``guest:guest`` of a local default)."""
    value = m.group("secret")
    if value.isdigit() and "." in m["user"]:
        return False  # host:port, then an "@" further on (a link's ?user=ana@example.com)
    return len(value) >= 4 and value[0] not in "$%{<[(*•" and not _NOT_A_VALUE.match(value) and value != m["user"]


_NOT_A_VALUE = re.compile(
    r"(?i:https?://|1password|lastpass|bitwarden|keepass|dashlane|keychain|icloud|vault\b|\d+-?(?:char|digit|letter|symbol))"
    r"|[A-Z]+(?:_[A-Z]+)+$"  # YOUR_PASSWORD, DB_PASS: a name for the value, not the value
    r"|[A-Za-z_][\w.]*[\[({]"  # os.environ[…], getenv(…): code that reads it
    r"|(?:process|os|settings|config|env|self|this|secrets|cfg|ctx|app|opts|options)\.[\w.]+$"  # process.env.X
    r"|[A-Za-z_]\w*(?:\.\w+)*\.[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"  # settings.DB_PASSWORD
    r"|(?i:password|passw(?:or)?d|pass|pwd|secret|x{3,}|\.{3}|…)$"  # an example's stand-in
)


def _set_value(m: re.Match[str]) -> bool:
    """A value set in a config line or a command (``DB_PASSWORD=hunter22``, ``"password": "…"``, ``-pS3cret``):
    any but a placeholder, code that reads it, or the user's name again."""
    value = m.group("secret").rstrip(_TRAILING)
    if len(value) < 4 or value[0] in "$%{<[(*•#~/." or _NOT_A_VALUE.match(value):
        return False
    return "user" not in m.re.groupindex or value != m["user"]


def _aws_secret(m: re.Match[str]) -> bool:
    """A 40-character AWS secret access key: mixed case and a digit or symbol (a git SHA is not)."""
    value = m.group("secret")
    return bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value) and re.search(r"[\d/+]", value))


@dataclass(frozen=True)
class SecretKind:
    """One rule of the scanner: a ``pattern`` whose ``secret`` group (else the whole match) is the secret,
    when ``accept`` (if any) takes the match; ``needs``: lowercase words one of which the text must contain."""

    name: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] | None = None
    needs: tuple[str, ...] = ()
    strip: str = _TRAILING  # dropped from the end of the span: the sentence's punctuation, not the secret's
    words: bool = False  # a guess from the words around it ("password is …"): observe only, never a write's refusal


_AWS_ID = r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
_AWS_SECRET = r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
_PASSWORD_WORD = r"(?i:\b(?:pass(?:word|wd|phrase|code)|pwd)s?\b)"
# the wifi password at the office is …, the admin password at https://admin.example.com is …
_OF_WHAT = r"(?:\s+(?i:for|to|of|at|on)\s+(?:[^\n.,;:!?=\"'`]{0,40}?\b[a-z][\w+.-]*://\S+?|[^\n.,;:!?=\"'`]{1,40}?))?"
_ENV_NAME = r"\b[A-Za-z][A-Za-z0-9]*_(?:[A-Za-z0-9]+_)*(?i:password|passwd|pass|pwd)\b|\b(?:PGPASSWORD|PASSWORD)\b"
_SAID_AS = (
    r"(?:\s*[:=]\s*|\s+(?i:is|was|will be)(?:\s*:\s*|\s+)(?:(?i:now|still|currently|actually|set to|changed to)\s+)?)"
)

# From BEGIN through END (the label may differ: a hand-made paste); cut off before its END, to the text's end.
_PRIVATE_KEY = r"-----BEGIN (?:[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----(?:[\s\S]*?-----END [A-Z0-9 ]*-----|[\s\S]*)"
# A body whose BEGIN line was not pasted (or was sent in another message): its base64 lines up to the END.
# A run of base64 lines is tried from its first line only (the lookbehinds) and never backed into (the
# possessive ++): a long note of base64 with no END line costs one pass, not one per line (quadratic).
_KEY_TAIL = (
    r"^(?<![A-Za-z0-9+/=]\n)(?<![A-Za-z0-9+/=]\r\n)(?:[ \t]*[A-Za-z0-9+/=]{16,}[ \t]*\r?\n)++"
    r"[ \t]*-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
)

_KEY_WORD = (
    r"(?i:\b(?:(?:api|access|auth(?:entication|orization)?|bearer|client|deploy|private|personal|refresh|secret|"
    r"service|session|signing|webhook)[ _-]?(?:key|token|secret)|api[ _-]?key|token|secret)s?\b)"
)
_KEY_NAME = (
    r"(?:\b[A-Za-z][A-Za-z0-9]*_(?:[A-Za-z0-9]+_)*(?i:api_?key|apikey|token|secret|secret_key|access_key)\b"
    r"|\b(?i:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret|api[_-]?token)\b)"
)
_KEY_NEEDS = ("key", "token", "secret")


def _credential_shaped(value: str) -> bool:
    """A token a machine made: 12 to 256 characters of a key's alphabet, letters and digits mixed."""
    return bool(
        re.fullmatch(r"[A-Za-z0-9_.+/=~-]{12,256}", value)
        and re.search(r"\d", value)
        and re.search(r"[A-Za-z]", value)
        and not _DESCRIBED.search(value)
        and not _SCHEME_OR_VERSION.match(value)
        and not re.search(r"[a-z]{3,}-[a-z]{3,}-[a-z]{3,}", value)  # a-hyphenated-phrase-v2
    )


def _key_said(m: re.Match[str]) -> bool:
    """ "the API key is 9f8e7d…", "token: glx…": a credential-shaped value that ends its clause."""
    return _credential_shaped(m.group("secret").rstrip(_TRAILING)) and _said_value(m)


def _key_set(m: re.Match[str]) -> bool:
    """``API_KEY=9f8e7d…``, ``"api_key": "…"``: a credential-shaped value, never a placeholder or code."""
    return _credential_shaped(m.group("secret").rstrip(_TRAILING)) and _set_value(m)


def _header_value(m: re.Match[str]) -> bool:
    value = m.group("secret")
    return bool(re.search(r"\d", value)) and not _NOT_A_VALUE.match(value)


_WHOLE_TOKEN = ".,;:)]}"  # a password's "!" is its own ("P@ssw0rd!"): only the sentence's punctuation goes


def _said(
    name: str,
    pattern: str,
    accept: Callable[[re.Match[str]], bool],
    strip: str = _TRAILING,
    needs: tuple[str, ...] = ("pass", "pwd"),
) -> SecretKind:
    """A credential guessed from the words around it (``words``: observe redacts it, writes are not refused)."""
    return SecretKind(name, re.compile(pattern), accept, needs, strip, words=True)


@functools.cache
def secret_kinds() -> tuple[SecretKind, ...]:
    """The scanner's rules, compiled on first use: a command that scans no text never pays for them."""
    return (
        SecretKind("private key", re.compile(_PRIVATE_KEY)),
        SecretKind("private key", re.compile(_KEY_TAIL, re.MULTILINE), needs=("private key",)),
        SecretKind("AWS access key id", re.compile(_AWS_ID)),
        SecretKind(
            "GitHub token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b")
        ),
        SecretKind("OpenAI/Anthropic API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b")),
        SecretKind("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
        SecretKind("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
        SecretKind("Stripe secret key", re.compile(r"\b(?:sk|rk)_live_[0-9a-zA-Z]{20,}\b")),
        SecretKind(
            "GitLab token", re.compile(r"\bgl(?:pat|dt|rt|ptt|cbt|ft|imt|soat)-[A-Za-z0-9_-]{20,}(?:\.[\w.-]+)?")
        ),
        SecretKind("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
        SecretKind("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
        SecretKind("SendGrid API key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}")),
        SecretKind(
            "Azure account key",
            re.compile(r"\b(?:AccountKey|SharedAccessKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"),
            needs=("accountkey", "sharedaccesskey"),
            strip="",
        ),
        SecretKind(
            "Authorization header",
            re.compile(
                r"(?i:\bauthorization\b)[\"']?\s*[:=]\s*[\"']?(?i:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"
            ),
            _header_value,
            ("authorization",),
            "",
        ),
        SecretKind(
            "JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b")
        ),
        # Said in words: only the value is the secret.
        SecretKind(
            "password in a URL",
            re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^\s/:@]*):(?P<secret>[^\s/@]+)@[\w\[]"),
            _url_password,
            ("://",),
            "",
        ),
        _said(
            "password", _PASSWORD_WORD + _OF_WHAT + _SAID_AS + r"(?P<secret>[^\s\"'`“”‘’]+)", _said_value, _WHOLE_TOKEN
        ),
        _said(
            "password",
            _PASSWORD_WORD + _OF_WHAT + _SAID_AS + r"[\"'`“‘](?P<secret>[^\n\"`“”‘’]{1,128}?)[\"'`”’](?!\w)",
            _quoted_value,
            "",
        ),
        # Set in a config line, JSON, Markdown, a sentence or a command (guesses too: observe only).
        _said("password", r"(?:" + _ENV_NAME + r")\s*[:=]\s*[\"']?(?P<secret>[^\s\"'`]+)", _set_value),
        _said(
            "password",
            r"[\"'](?i:[\w-]*pass(?:word|wd)?|pwd)[\"']\s*:\s*[\"'](?P<secret>[^\"'\n]{1,128})[\"']",
            _set_value,
            "",
        ),
        _said(
            "password",
            r"\*\*" + _PASSWORD_WORD + r"\s*:?\s*\*\*\s*:?\s*(?P<secret>[^\s\"'`“”‘’]+)",
            _said_value,
            _WHOLE_TOKEN,
        ),
        _said(
            "password",
            r"(?i:\b(?:changed|change|set|setting|reset|updated|update|rotated)\s+(?:[\w'-]+\s+){0,3}?)"
            + _PASSWORD_WORD
            + r"\s+(?i:to|as)\s+(?P<secret>[^\s\"'`“”‘’]+)",
            _said_value,
            _WHOLE_TOKEN,
        ),
        _said(
            "password",
            r"\bcurl\b[^\n]*?\s(?:-u|--user)\s*[\"']?(?P<user>[^\s:\"']+):(?P<secret>[^\s\"']+)",
            _set_value,
            needs=("curl",),
        ),
        _said(
            "password",
            r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s(?:-p\s*|--password=)(?P<secret>[^\s\"'-][^\s\"']*)",
            _set_value,
            needs=("mysql", "mariadb"),
        ),
        # An API key, token or secret key said or set by name: a credential-shaped value only.
        _said(
            "API key or token",
            _KEY_WORD + _OF_WHAT + _SAID_AS + r"[\"'`“‘]?(?P<secret>[^\s\"'`“”‘’]+)",
            _key_said,
            needs=_KEY_NEEDS,
        ),
        _said(
            "API key or token",
            _KEY_NAME + r"[\"']?\s*[:=]\s*[\"']?(?P<secret>[^\s\"'`,;]+)",
            _key_set,
            needs=_KEY_NEEDS,
        ),
        # An AWS secret access key: after its key id in one sentence, before it, or named.
        *(
            SecretKind("AWS secret access key", re.compile(pattern), _aws_secret, ("akia", "asia", "secret"))
            for pattern in (
                rf"{_AWS_ID}[^.!?\n]{{0,200}}?{_AWS_SECRET}",
                rf"{_AWS_SECRET}(?=[^.!?\n]{{0,200}}?{_AWS_ID})",
                r"(?i:secret[ _-]?(?:access[ _-]?)?key)[\"']?\s*(?:[:=]|\s(?i:is|was)\s)\s*[\"']?" + _AWS_SECRET,
            )
        ),
    )


def secret_spans(text: str, *, words: bool = True) -> list[tuple[str, int, int]]:
    """Every secret in ``text``: (its kind's name, start, end) of the part that is the secret, in order;
    without ``words``, the precise rules only (what a write is refused for)."""
    lowered = text.lower()
    found: list[tuple[str, int, int]] = []
    for kind in secret_kinds():
        if kind.words and not words:
            continue
        if kind.needs and not any(word in lowered for word in kind.needs):
            continue
        for m in kind.pattern.finditer(text):
            if kind.accept is not None and not kind.accept(m):
                continue
            start, end = m.span("secret") if "secret" in kind.pattern.groupindex else m.span()
            while end > start + 1 and text[end - 1] in kind.strip:
                end -= 1
            found.append((kind.name, start, end))
    return sorted(found, key=lambda f: (f[1], f[2]))


def find_secrets(text: str, *, words: bool = True) -> list[str]:
    """Names of the secret kinds that appear in ``text`` (``words``: as :func:`secret_spans`)."""
    names = {name for name, _, _ in secret_spans(text, words=words)}
    return list(dict.fromkeys(kind.name for kind in secret_kinds() if kind.name in names))


SECRET_WAY_OUT = "remove the value, or set store.scanSecrets to false in your own config (~/.config/remnic/config.json)"
_QUOTES = "\"'`“‘ "


def describe_secret(text: str, *, words: bool = True) -> tuple[str, int] | None:
    """What a refusal says of the first secret in ``text`` (its kind, the words that made it one, a short
    excerpt with every secret redacted: never the value) and where it starts; None without one."""
    spans = secret_spans(text, words=words)
    if not spans:
        return None
    name, start, _ = spans[0]
    said = re.search(_PASSWORD_WORD + _OF_WHAT + _SAID_AS + r"[\"'`“‘]?$", text[max(0, start - 80) : start])
    if name == "password" and said:
        what = f"a password after '{' '.join(said.group().split()).rstrip(_QUOTES)}'"
    else:
        what = f"{'an' if name[0] in 'AEIOU' else 'a'} {name}"
    # The excerpt hides guesses too, even where only the precise rules refuse: it may show no secret at all.
    redacted = redact(text, "[REDACTED]")
    at = len(redact(text[:start], "[REDACTED]"))  # the first secret starts at the same place, redacted
    before, after = redacted[max(0, at - 40) : at], redacted[at : at + 50]
    if at > 40:  # whole words only
        before = "…" + before.split(" ", 1)[-1]
    if at + 50 < len(redacted):
        after = after.rsplit(" ", 1)[0] + "…"
    return f"{what}: “{' '.join(f'{before}{after}'.split())}”", start


def redact(text: str, mark: str, *, words: bool = True) -> str:
    """``text`` with each secret replaced by ``mark`` (overlapping ones as one)."""
    out, at = [], 0
    for _name, start, end in secret_spans(text, words=words):
        if end <= at:
            continue
        out.append(text[at : max(at, start)] + mark)
        at = end
    return "".join(out) + text[at:]


def subject_excerpt(text: str, width: int = 60) -> str:
    """The start of ``text`` for a commit subject, in every `git log` line: a secret (a password said in
    words too) left out, whitespace folded, cut where a character ends."""
    from .graphemes import clip

    return clip(" ".join(redact(text, " ").split()), width)
