"""A tantivy index over the archived turns: rebuildable, in ``.remnic/lcm/``.

The archive in ``state/transcripts/`` is the truth; this index is a cache of it. A
manifest records how many bytes of each archive file are indexed, so catching up
after new turns reads only the new lines (and counts the lines that are no turn: a
torn append, a hand edit), and an index that is missing, corrupt,
of another version, or behind a file that shrank is rebuilt from the archive.
Catching up takes an ``flock`` (``.remnic/lcm.lock``) so one process writes at a time.

A turn's speaker (a plain transcript's ``Speaker:``, an OpenAI message's ``name``) is indexed
beside its words, so searching for a name finds what that person said.

Query text is never parsed as tantivy syntax: it is analysed like the documents
(lowercased, ascii-folded, stemmed; stopwords dropped) into a plain OR of terms,
with the whole phrase as a boosted clause, so a quoted phrase from a transcript
ranks its turn first. Runs of Chinese, Japanese or Korean characters are indexed and
queried as overlapping character bigrams (:func:`remnic.index.text.cjk_bigrams`, as the
recall index does), so a word inside an unspaced sentence is found, and their characters are
indexed too, so a one-character word (猫) is; the turn's own text is stored apart, for the excerpt.
Emoji and other symbols (🚀, ✨: :func:`remnic.index.text.symbols`) are terms of their own, as there.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy

from remnic.config import STATE_DIR
from remnic.fsio import write_atomic
from remnic.index.bm25 import STOPWORDS, pre_tokenized, stopword_phrase
from remnic.index.text import SYMBOL_RE, cjk_bigrams, cjk_unigrams, normal_form, symbols

from .store import archive_files, read_lines, unreadable_tail

VERSION = 7
"""2: speaker, turnId and timestamp indexed; 3: unreadable lines counted; 4: CJK runs as bigrams, the text
stored apart; 5: and the runs' characters; 6: emoji and other symbols as terms; 7: text in its normal form
(NFC, Turkish İ as I: a decomposed "Köln" is the word typed). An index of another version is rebuilt from
the archive on the next catch-up."""
INDEX_DIR = "lcm"
LOCK_FILE = "lcm.lock"
ANALYZER = "remnic_lcm"
PHRASE_BOOST = 2.0
WRITER_HEAP = 16_000_000
MAX_TERMS = 64
_STOP_TOKENS = sorted({p for w in STOPWORDS for p in re.split(r"\W+", w) if p})
_analyzers: dict[bool, Any] = {}
_REGEX_META = re.compile(r"([\\.+*?()|\[\]{}^$#&\-~])")
_TOKEN = re.compile(r"[^\W_]+|" + SYMBOL_RE.pattern)
"""A word as tantivy's simple tokenizer cuts it (letters and digits: ``_`` separates), or a symbol."""


def _analyzer(stop: bool) -> Any:
    if stop not in _analyzers:
        builder = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold())
        )
        if stop:
            builder = builder.filter(tantivy.Filter.custom_stopword(_STOP_TOKENS))
        _analyzers[stop] = builder.filter(tantivy.Filter.stemmer("english")).build()
    return _analyzers[stop]


def _schema() -> Any:
    sb = tantivy.SchemaBuilder()
    for name in ("key", "session", "namespace"):
        sb.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    for name in ("role", "ts", "turn_id", "timestamp"):
        sb.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("turn", stored=True)
    # The indexed text has its CJK runs as bigrams (tantivy's tokenizers cannot make them), so what a
    # hit shows is stored apart, as it was said.
    sb.add_text_field("content", stored=False, tokenizer_name=ANALYZER, index_option="position")
    sb.add_text_field("speaker", stored=False, tokenizer_name=ANALYZER, index_option="position")
    sb.add_bytes_field("content_text", stored=True)
    sb.add_bytes_field("speaker_text", stored=True)
    return sb.build()


@dataclass(frozen=True)
class LcmHit:
    session_key: str
    namespace: str
    turn_index: int
    role: str
    ts: str
    content: str
    """An excerpt around the first matching word (the whole turn when it is short)."""
    score: float
    speaker: str = ""
    turn_id: str = ""
    timestamp: str = ""
    """The speaker, the host's turn id and the time the turn was said, when the archive has them."""


@dataclass(frozen=True)
class CatchUp:
    rebuilt: bool
    added: int
    total: int
    files: int
    reason: str = ""


def _analyze(text: str, stop: bool = False) -> list[str]:
    """``text``'s query terms: CJK runs as bigrams (a lone character as itself), then lowercased,
    folded, stemmed; then its symbols. The index has these and, apart, its runs' characters
    (:meth:`LcmIndex._doc`)."""
    return _words(text, stop) + symbols(text)


def _words(text: str, stop: bool = False) -> list[str]:
    """:func:`_analyze` without the symbols: the tokens a phrase is made of (the symbols are a value apart)."""
    return list(_analyzer(stop).analyze(cjk_bigrams(normal_form(text))))


def _query_terms(query: str) -> list[str]:
    """The query's terms as the index has them (stemmed, stopwords dropped unless that leaves none)."""
    return list(dict.fromkeys(_analyze(query, True)))[:MAX_TERMS] or list(dict.fromkeys(_analyze(query)))[:MAX_TERMS]


def _first_match(content: str, terms: Sequence[str]) -> int:
    """Where the first word of ``content`` that analyses to one of ``terms`` starts (0 when none does):
    a stemmed match ("renaming" for "renamed") counts, as it did for the search."""
    wanted = set(terms)
    seen: dict[str, bool] = {}  # each distinct word is analysed once, even in a very long turn
    for match in _TOKEN.finditer(content):
        word = match.group().lower()
        hit = seen.get(word)
        if hit is None:
            hit = seen[word] = any(t in wanted for t in _analyze(f"{word} {cjk_unigrams(word)}"))
        if hit:
            return match.start() + _bigram_at(word, wanted)
    return 0


def _bigram_at(word: str, wanted: set[str]) -> int:
    """Where in ``word`` (a word that matched) the matching term starts: 0, unless ``word`` is an
    unspaced CJK sentence, whose terms are its bigrams and its characters."""
    if cjk_bigrams(word) == word:
        return 0
    for i in range(len(word)):
        if any(t in wanted for t in _analyze(word[i : i + 2])) or word[i] in wanted:
            return i
    return 0


def excerpt(content: str, query: str, limit: int) -> str:
    """About ``limit`` characters of ``content`` centred on the first word matching ``query``."""
    if len(content) <= limit:
        return content
    at = _first_match(content, _query_terms(query))
    start = max(0, min(at - limit // 2, len(content) - limit))
    piece = content[start : start + limit]
    return ("…" if start > 0 else "") + piece + ("…" if start + limit < len(content) else "")


class LcmIndex:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache = root / STATE_DIR
        self.directory = self.cache / INDEX_DIR
        self.manifest_path = self.directory / "manifest.json"
        self.schema = _schema()
        self._index: Any = None

    # --- opening, locking ---

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.cache.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.cache / LOCK_FILE, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _open(self, create: bool) -> Any:
        if create:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        index = tantivy.Index(self.schema, path=str(self.directory), reuse=not create)
        index.register_tokenizer(ANALYZER, _analyzer(False))
        return index

    def _manifest(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("files"), dict):
            return None
        return data

    def _manifest_problem(self) -> str:
        """Why the manifest cannot be trusted, naming the versions (as recall's rebuild reason does)."""
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return "index manifest missing"
        except (OSError, ValueError) as exc:
            return f"index manifest unreadable ({type(exc).__name__})"
        version = data.get("version") if isinstance(data, dict) else None
        if version != VERSION:
            was = f"v{version}" if isinstance(version, int) else "of no version"
            return f"index {was}, this remnic writes v{VERSION}"
        return "index manifest has no file list"

    # --- catching up with the archive ---

    def catch_up(self) -> CatchUp:
        """Index the turns archived since the last catch-up (or everything, rebuilding, when the
        index cannot be trusted). Safe to call from any process at any time."""
        with self._lock():
            manifest = self._manifest()
            files = archive_files(self.root)
            sizes = {p.relative_to(self.root).as_posix(): p.stat().st_size for p in files}
            reason = ""
            if manifest is None:
                reason = "no index yet" if not self.directory.exists() else self._manifest_problem()
            else:
                done: dict[str, int] = manifest["files"]
                gone = [f for f in done if f not in sizes or sizes[f] < done[f]]
                if gone:
                    reason = f"archive file changed underneath the index ({gone[0]})"
            index = None
            if not reason:
                try:
                    index = self._open(create=False)
                except Exception as exc:  # noqa: BLE001 - a corrupt cache is rebuilt, never fatal
                    reason = f"index unreadable ({type(exc).__name__})"
            rebuilt = bool(reason)
            if rebuilt or manifest is None:
                index = self._open(create=True)
                manifest = {"version": VERSION, "files": {}, "turns": 0, "unreadable": {}}
            assert index is not None and manifest is not None
            todo = [(rel, size) for rel, size in sizes.items() if size > manifest["files"].get(rel, 0)]
            added = 0
            if todo:
                writer = index.writer(WRITER_HEAP, 1)
                try:
                    bad_counts: dict[str, int] = manifest.setdefault("unreadable", {})
                    for rel, _size in todo:
                        bad: list[int] = []
                        records, end = read_lines(self.root / rel, manifest["files"].get(rel, 0), bad)
                        for offset, record in records:
                            writer.add_document(self._doc(rel, offset, record))
                            added += 1
                        manifest["files"][rel] = end
                        if bad:
                            bad_counts[rel] = bad_counts.get(rel, 0) + len(bad)
                    writer.commit()
                except BaseException:
                    writer.rollback()
                    raise
                finally:
                    try:
                        writer.wait_merging_threads()
                    except Exception:  # noqa: BLE001 - a consumed writer is fine
                        pass
                manifest["turns"] = int(manifest.get("turns", 0)) + added
                write_atomic(self.manifest_path, json.dumps(manifest, sort_keys=True) + "\n", mode=0o600)
            elif rebuilt:
                write_atomic(self.manifest_path, json.dumps(manifest, sort_keys=True) + "\n", mode=0o600)
            if todo or rebuilt or self.directory.stat().st_mode & 0o077:
                self._keep_private()
            index.reload()
            self._index = index
            return CatchUp(rebuilt, added, int(manifest["turns"]), len(sizes), reason)

    def _keep_private(self) -> None:
        """Owner-only, as the archive is: the index stores the turns verbatim, and tantivy writes its
        files with the umask's mode."""
        os.chmod(self.directory, 0o700)
        for entry in os.scandir(self.directory):
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mode & 0o077:
                    os.chmod(entry.path, 0o600)
            except OSError:
                pass  # a file tantivy merged away meanwhile

    @staticmethod
    def _doc(rel: str, offset: int, record: dict[str, Any]) -> Any:
        doc = tantivy.Document()
        doc.add_text("key", f"{rel}#{offset}")
        doc.add_text("session", str(record.get("sessionKey") or ""))
        doc.add_text("namespace", str(record.get("namespace") or ""))
        doc.add_text("role", str(record.get("role") or ""))
        doc.add_text("ts", str(record.get("ts") or ""))
        turn = record.get("turnIndex")
        doc.add_integer("turn", turn if isinstance(turn, int) and not isinstance(turn, bool) else -1)
        content = str(record.get("content") or "")
        # An OpenAI message's name is its speaker; lines archived before speakers were kept have neither.
        speaker = _text(record.get("speaker") or record.get("name"))
        # The runs' characters in a value of their own, so the bigrams keep their positions for phrases;
        # so do the symbols, which the tokenizer would drop (given as tokens).
        for field, said in (("content", content), ("speaker", speaker)):
            text = normal_form(said)  # as the query is read (:func:`_words`)
            doc.add_text(field, cjk_bigrams(text))
            if unigrams := cjk_unigrams(text):
                doc.add_text(field, unigrams)
            if marks := symbols(text):
                doc.add_pre_tokenized_text(field, pre_tokenized(marks))
        doc.add_bytes("content_text", content.encode("utf-8", "surrogatepass"))
        doc.add_bytes("speaker_text", speaker.encode("utf-8", "surrogatepass"))
        doc.add_text("turn_id", _text(record.get("turnId")))
        doc.add_text("timestamp", _text(record.get("timestamp")))
        return doc

    def unreadable(self) -> dict[str, int]:
        """Each archive file's lines that are no turn (invalid JSON, a torn last line), by repo-relative
        path. Read-only: the indexed part's count comes from the manifest, the rest is read here."""
        manifest = self._manifest() or {"files": {}, "unreadable": {}}
        counts: dict[str, int] = manifest.get("unreadable") or {}
        out: dict[str, int] = {}
        for path in archive_files(self.root):
            rel = path.relative_to(self.root).as_posix()
            done = int(manifest["files"].get(rel, 0))
            if done > path.stat().st_size:
                done = 0  # shrunk since indexed: the next catch-up rebuilds; count it all afresh
            bad: list[int] = []
            read_lines(path, done, bad)
            n = (int(counts.get(rel, 0)) if done else 0) + len(bad) + unreadable_tail(path)
            if n:
                out[rel] = n
        return out

    def count(self, namespaces: Sequence[str]) -> int:
        """How many archived turns are in ``namespaces`` (after catching up)."""
        self.catch_up()
        if not namespaces:
            return 0
        query = tantivy.Query.term_set_query(self.schema, "namespace", list(namespaces))
        return int(self._index.searcher().search(query, 1, count=True).count)

    def turn_ids_elsewhere(
        self, turn_ids: Sequence[str], *, namespace: str, session_prefix: str, session_key: str
    ) -> set[str]:
        """Which of ``turn_ids`` (hosts' turn ids) are archived in ``namespace`` under a session key that
        starts with ``session_prefix`` and is not ``session_key`` — a forked Claude Code session copies its
        parent's lines with their uuids. One term-set query on the indexed ``turn_id`` after a catch-up
        (which reads only the archive bytes added since the last one), never a scan of the archive."""
        wanted = sorted({t for t in turn_ids if t})
        found: set[str] = set()
        if not wanted:
            return found
        self.catch_up()
        searcher = self._index.searcher()
        pattern = _REGEX_META.sub(r"\\\1", session_prefix) + ".*"
        while wanted:
            limit = 4 * len(wanted) + 8  # an id in several other sessions takes a hit each: ask again for the rest
            query = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, tantivy.Query.term_set_query(self.schema, "turn_id", wanted)),
                    (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "namespace", namespace)),
                    (tantivy.Occur.Must, tantivy.Query.regex_query(self.schema, "session", pattern)),
                    (tantivy.Occur.MustNot, tantivy.Query.term_query(self.schema, "session", session_key)),
                ]
            )
            hits = searcher.search(query, limit, count=False).hits
            new = {_first(searcher.doc(addr), "turn_id") for _score, addr in hits} - found
            found |= new
            if len(hits) < limit or not new:
                break
            wanted = [t for t in wanted if t not in found]
        return found

    # --- searching ---

    def search(
        self,
        query: str,
        *,
        limit: int,
        session_key: str | None = None,
        session_prefix: str | None = None,
        namespaces: Sequence[str] | None = None,
        excerpt_chars: int = 1000,
        warnings: list[str] | None = None,
    ) -> list[LcmHit]:
        """The archived turns best matching ``query`` (BM25, the phrase boosted), best first. A query of
        stopwords only ("the of and is to", "The Who") is searched as a phrase, as recall does
        (:func:`remnic.index.bm25.stopword_phrase`), and ``warnings`` (when given) says so."""
        self.catch_up()
        index = self._index
        terms = _query_terms(query)
        if not terms or limit <= 0:
            return []
        # The LCM analyser is recall's English one, so its tokens are the index's.
        only_stop = stopword_phrase(query)[:MAX_TERMS]
        if only_stop:
            should = [(tantivy.Occur.Should, self._phrase(field, only_stop)) for field in ("content", "speaker")]
        else:
            should = [
                (tantivy.Occur.Should, tantivy.Query.term_query(self.schema, field, t))
                for field in ("content", "speaker")
                for t in terms
            ]
            phrase: list[str | tuple[int, str]] = [*_words(query)[:MAX_TERMS]]
            if len(phrase) >= 2:
                should.append(
                    (
                        tantivy.Occur.Should,
                        tantivy.Query.boost_query(
                            tantivy.Query.phrase_query(self.schema, "content", phrase), PHRASE_BOOST
                        ),
                    )
                )
        clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
        if session_key is not None:
            clauses.append(
                (tantivy.Occur.Must, self._filter(tantivy.Query.term_query(self.schema, "session", session_key)))
            )
        if session_prefix is not None:
            pattern = _REGEX_META.sub(r"\\\1", session_prefix) + ".*"
            clauses.append(
                (tantivy.Occur.Must, self._filter(tantivy.Query.regex_query(self.schema, "session", pattern)))
            )
        if namespaces is not None:
            clauses.append(
                (
                    tantivy.Occur.Must,
                    self._filter(tantivy.Query.term_set_query(self.schema, "namespace", list(namespaces))),
                )
            )
        searcher = index.searcher()
        result = searcher.search(tantivy.Query.boolean_query(clauses), limit, count=bool(only_stop))
        if only_stop and warnings is not None:
            warnings.append(phrase_warning(only_stop, int(result.count)))
        hits = []
        for score, addr in result.hits:
            doc = searcher.doc(addr)
            content = _stored(doc, "content_text")
            hits.append(
                LcmHit(
                    session_key=doc["session"][0],
                    namespace=doc["namespace"][0],
                    turn_index=int(doc["turn"][0]),
                    role=doc["role"][0],
                    ts=doc["ts"][0],
                    content=excerpt(content, query, excerpt_chars),
                    score=float(score),
                    speaker=_stored(doc, "speaker_text"),
                    turn_id=_first(doc, "turn_id"),
                    timestamp=_first(doc, "timestamp"),
                )
            )
        return hits

    def _phrase(self, field: str, words: Sequence[str]) -> Any:
        if len(words) == 1:
            return tantivy.Query.term_query(self.schema, field, words[0])
        return tantivy.Query.phrase_query(self.schema, field, list(words))

    @staticmethod
    def _filter(query: Any) -> Any:
        return tantivy.Query.const_score_query(query, 0.0)


def phrase_warning(words: Sequence[str], held: int) -> str:
    """What a stopword-only search is told: recall's words (:class:`remnic.recall.phrase.Phrase`), of turns."""
    found = (
        "which no archived turn holds, so nothing is returned; add a word the turn is about"
        if not held
        else f"so only the {held} {'turn that holds' if held == 1 else 'turns that hold'} it can be returned"
    )
    return f"query: only stopwords, no content words ({' '.join(words)!r}): searched as a phrase, {found}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _first(doc: Any, field: str) -> str:
    value = doc.get_first(field)
    return value if isinstance(value, str) else ""


def _stored(doc: Any, field: str) -> str:
    value = doc.get_first(field)
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else ""
