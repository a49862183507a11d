"""From a turn's text to candidate sentences: code, traces, logs and tool output out; sentences split.

Pure functions. Noise is recognised per line and per paragraph: a paragraph that is mostly noise
(a pasted stack trace, a log excerpt, a diff) goes as a whole, a stray noise line inside prose goes
alone. Fenced and indented code blocks always go.
"""

from __future__ import annotations

import re

from .cues import words

_FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_NOISE_LINE_RES = tuple(
    re.compile(p)
    for p in (
        # Stack traces (Python, JVM/JS, Go, Rust) and exception lines.
        r"^\s*Traceback \(most recent call last\)",
        r'^\s*File "[^"]+", line \d+',
        r"^\s+at [\w$.<>\[\]/@-]+ ?\(.*\)\s*$",
        r"^\s+at [\w$./<>-]+:\d+(:\d+)?\s*$",
        r"^\s*([\w]+\.)*\w*(Error|Exception|Warning|Interrupt)\b(:|\s*$)",
        r"^\s*(Caused by|During handling of the above exception)",
        r"^\s*\.\.\. \d+ more",
        r"^\s*\^[\^~ ]*$",
        r"^\s*goroutine \d+ \[",
        r"^\s*thread '.*' panicked at",
        r"^\s*\d+: 0x[0-9a-f]+",
        # Log lines: a timestamp or a level first.
        r"^\s*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}",
        r"^\s*\[?\d{2}:\d{2}:\d{2}(\.\d+)?\]?\s",
        r"^\s*\[?(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL|SEVERE)\]?[\s:|-]",
        r"^\s*[EWIF]\d{4} \d{2}:\d{2}",
        # Shell prompts, REPLs, tool and test-runner output.
        r"^\s*[$#%] \S",
        r"^\s*>>> ",
        r"^\s*(npm|yarn|pnpm) (ERR|WARN|notice)",
        r"^\s*=+ .* =+\s*$",
        r"^\s*_{3,} .* _{3,}\s*$",
        r"^\s*-{3,}\s*$",
        r"^\s*(FAILED|PASSED|ERROR|SKIPPED|XFAIL|FAIL|PASS)\s+[\w/.:\[\]-]+",
        r"^\s*(not )?ok \d+\b",  # TAP: "ok 1 - name"; "ok we decided …" is chat
        r"^\s*collected \d+ items?",
        r"^\s*\d+ (passed|failed|errors?)\b",
        r"^\s*[\w/.-]+\.(py|js|jsx|ts|tsx|go|rs|java|rb|c|cc|cpp|h|kt|swift|php|cs):\d+",
        r"^\s*(\+\+\+|---|@@|diff --git|index [0-9a-f]+\.\.)",
        r"^\s*\d+\s*[→|│]",
        r"^\s*(exit code|exit status|returncode)\b",
        # Code lines.
        # Code lines, by their shape: a leading keyword alone is chat as often as code ("let's go with
        # pnpm", "import the data", "public holidays are days off").
        r"^\s*(async\s+)?(def|fn|pub\s+fn|func|function\*?)\s*[\w$]*\s*[(<]",
        r"^\s*(export\s+)?(abstract\s+)?class\s+[A-Z_]\w*\s*([(:{<]|extends\b|implements\b|$)",
        r"^\s*import\s+([\w.]+(\s+as\s+\w+)?(\s*,\s*[\w.]+(\s+as\s+\w+)?)*\s*;?|.*\bfrom\s+[\"'][^\"']+[\"']\s*;?|[\"'][^\"']+[\"']\s*;?)\s*$",
        r"^\s*from\s+[\w.]+\s+import\s+[\w\s,.*()]+$",
        r"^\s*(export\s+)?(const|let|var)\s+(mut\s+)?[\w${}\[\],\s]+?\s*(:\s*[^=]+)?=(?!=)",
        r"^\s*return(\s+[^\s.!?]*[()\[\]_.=][^\s]*)?\s*;?\s*$",
        r"^\s*package\s+[\w.]+;?\s*$",
        r"^\s*#include\b",
        r"^\s*(public|private|protected)(\s+(static|final|abstract|async|readonly|override|virtual))*\s+[\w<>\[\],.?]+\s+\w+\s*[({=;]",
        r"^\s*(public|private|protected)\s*:\s*$",
        r"^[\W\d_]*$",  # no letter in any script ("東京に住んでいます。" has letters)
        r"[{};]\s*$",
        r"^\s*[\[{].*[\]}],?\s*$",
        r"^\s*</?[a-zA-Z][\w-]*(\s[^<>]*)?>\s*$",
    )
)
_INDENTED_RE = re.compile(r"^(\t| {4,})\S")
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s")
_EMPHASIS_RE = re.compile(r"(\*\*|__|`)")
_SPACE_RE = re.compile(r"[ \t]+")
# A bracketed aside of two or more words ("[shares a photo of a dog]", "[laughs]" is one word and
# stays): a host's or transcriber's annotation of the turn, not the speaker's words. A markdown
# link's text ("[the docs](…)") stays.
_ASIDE_RE = re.compile(r"\s*\[[A-Za-z][\w'-]*:?\s+[A-Za-z][^\[\]\n]*\](?!\()")
# ASCII emoticons (":)", ":D", ";-)", "xD", "<3"), as emoji are: a face, not words ("congrats on the new
# job :D" is a short exclamation, and "to her :)" must not end as "to her:)").
_EMOTICON_RE = re.compile(r"\s*(?<!\S)(?:[:;=][-']?[)(\]\[DPpO/\\|3*]+|[xX]D+|<3+|\^_*\^)(?=[\s.,!?;]|$)")

# Sentence boundaries: terminal punctuation (and closing quotes/brackets), then space, then a
# sentence start — a lowercase one too, as chat writes it ("i prefer tabs. we use ruff."), but not
# after a trailing-off "..." ("I was like... whatever"). Abbreviations and initials never end a sentence.
# A Chinese, Japanese or Korean character starts one too, and a full-width 。！？ ends one with or
# without a space after it ("…in Python code. 会議は月曜日です。毎週です。").
_CJK = "\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_BOUNDARY_RE = re.compile(
    r"([.!?]+|…)([\"'”’)\]]*)\s+(?=[\"'“‘(\[「『]?([A-Z0-9" + _CJK + r"]|(?P<lower>[a-z])))"
    r"|[。！？]+(?P<wide_close>[」』）\"'”’)\]]*)\s*(?=[^\s。！？」』）\"'”’)\]])"
)
# Chat's lowercase "i" is the first person ("i.e." and "i)" are not).
_LOWER_I_RE = re.compile(r"(?<![\w.'’-])i(?=(?:'(?:m|ve|d|ll)\b|\s|$))")
# Text read beyond the cap of prose: a pasted log of any length is removed before the cap applies,
# but a turn of megabytes is not scanned whole.
_RAW_CHARS_PER_PROSE_CHAR = 25
ABBREVIATIONS = words("""mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie inc ltd co corp dept
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
    a.m p.m u.s u.k cf al""")
# Abbreviations only when a number follows ("No. 5", "approx. 20"); otherwise "5 min." ends a sentence.
NUMBER_ABBREVIATIONS = words("no nos fig vol ver v approx ca min max avg est pp")


def is_noise_line(line: str) -> bool:
    """Whether one line is a stack-trace frame, a log line, tool or test output, or code."""
    return any(pattern.search(line) for pattern in _NOISE_LINE_RES)


def prose_lines(text: str) -> list[str]:
    """The prose lines of a turn: code blocks, noise paragraphs and noise lines removed.

    List markers, headings, markdown emphasis and bracketed asides are dropped; a line wrapped mid-sentence is joined
    with its continuation.
    """
    return [line for line, _ in prose_blocks(text)]


def prose_blocks(text: str) -> list[tuple[str, bool]]:
    """``prose_lines`` with whether each line is a list item: an item is a statement of its own,
    never the continuation of the line before it."""
    text = _FENCE_RE.sub("\n\n", text.replace("\r\n", "\n").replace("’", "'").replace("‘", "'"))
    kept: list[str] = []
    items: list[bool] = []
    previous = ""
    for paragraph in re.split(r"\n[ \t]*\n", text):
        lines = [line for line in paragraph.split("\n") if line.strip()]
        if not lines:
            continue
        noise = [is_noise_line(line) or bool(_INDENTED_RE.match(line)) for line in lines]
        if sum(noise) * 2 >= len(lines) and len(lines) > 1:
            # A pasted trace, log or code paragraph goes whole, but for the prose typed after it ("…WARN
            # cache miss ratio 0.9\nOur cache hit target is 95 percent."): the person's own words.
            last = max(i for i, is_noise in enumerate(noise) if is_noise)
            lines = lines[last + 1 :]
            if not lines or not all(_prose_like(line) for line in lines):
                continue
            noise = [False] * len(lines)
        for line, is_noise in zip(lines, noise):
            if is_noise or _HEADING_RE.match(line):
                continue
            item = bool(_LIST_MARK_RE.match(line))
            clean = _ASIDE_RE.sub("", _EMPHASIS_RE.sub("", _LIST_MARK_RE.sub("", line)))
            clean = _SPACE_RE.sub(" ", _EMOTICON_RE.sub("", clean)).strip()
            if not clean:
                continue
            if not item and kept and kept[-1][-1] not in ".!?:;)" and clean[0].islower() and _wrapped(previous, line):
                kept[-1] += " " + clean  # a soft-wrapped sentence
            else:
                kept.append(clean)
                items.append(item)
            previous = line
    return list(zip(kept, items, strict=True))


_PLAIN_WORD_RE = re.compile(r"^[\"'(]?[A-Za-z][A-Za-z'-]*[\"'),.!?;:]*$")


def _prose_like(line: str) -> bool:
    """A line of words as people type them: three or more, at least three in four plain words, starting
    with a letter, not indented (a log message after its timestamp has words too, but is a noise line)."""
    said = line.split()
    if _INDENTED_RE.match(line) or len(said) < 3 or not line.lstrip()[:1].isalpha():
        return False
    return sum(bool(_PLAIN_WORD_RE.match(word)) for word in said) * 4 >= len(said) * 3


# A line is wrapped text when it is indented under the line before, starts with a word that cannot
# start a statement, or follows a line as long as editors wrap at; short lowercase lines one after
# another are chat ("ok we decided …" / "let's go with pnpm …"), each its own statement.
_CONTINUATION_RE = re.compile(
    r"^\s*(and|or|but|nor|so|because|which|that|who|whom|whose|where|when|while|to|of|in|on|at|by|for|from|with"
    r"|without|as|than|then|into|onto|about|after|before|until|since|if|unless|though|although|plus|via)\b"
)
_WRAP_WIDTH = 60


def _wrapped(previous: str, line: str) -> bool:
    indented = len(line) - len(line.lstrip()) > len(previous) - len(previous.lstrip())
    return indented or bool(_CONTINUATION_RE.match(line)) or len(previous.rstrip()) >= _WRAP_WIDTH


def split_sentences(line: str) -> list[str]:
    """Sentences of one prose line (hand-written rules; see docs/observe.md for the measurement)."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(line):
        end = match.end(2) if match.group(1) else match.end("wide_close")
        if match.group("lower") and (match.group(1) in ("…", "..") or len(match.group(1)) > 2):
            continue
        if match.group(1) == "." and _ends_with_abbreviation(line[start : match.start(1)], line[match.end() :]):
            continue
        piece = line[start:end].strip()
        if piece:
            sentences.append(piece)
        start = match.end()
    tail = line[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _ends_with_abbreviation(text: str, following: str) -> bool:
    word = text.rsplit(None, 1)[-1] if text.strip() else ""
    word = word.lstrip("(\"'“‘[")
    if len(word) == 1 and word.isupper():
        return True  # an initial: "J. K. Rowling"
    if word.lower() in NUMBER_ABBREVIATIONS:
        return following[:1].isdigit()
    return word.lower() in ABBREVIATIONS


def sentences_of(text: str, max_chars: int) -> list[str]:
    """Every candidate sentence of a turn's text (its first ``max_chars`` characters of prose)."""
    return [sentence for sentence, _ in sentence_units(text, max_chars)]


def sentence_units(text: str, max_chars: int) -> list[tuple[str, int | None]]:
    """Every candidate sentence of a turn's first ``max_chars`` characters of prose (code, traces
    and logs are removed before the cap, so a long paste does not crowd out what follows it), each
    with the number of the list item it is part of (None outside a list)."""
    out: list[tuple[str, int | None]] = []
    budget = max_chars
    raw = text[: max_chars * _RAW_CHARS_PER_PROSE_CHAR] if max_chars > 0 else text
    for number, (line, item) in enumerate(prose_blocks(raw)):
        if budget <= 0:
            break
        line = _LOWER_I_RE.sub("I", line[:budget])
        budget -= len(line) + 1
        out.extend((sentence, number if item else None) for sentence in split_sentences(line))
    return out
