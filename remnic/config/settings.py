"""Every tunable setting as a dataclass with its documented default; the value rules they obey.

Loading (which files, in which order, the original Remnic's spellings) lives in
:mod:`.load` and :mod:`.aliases`. ``remnic config --defaults`` and
docs/configuration.md are generated from the docstrings here.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from remnic.errors import ValidationError

from .recall_settings import RecallSettings

MARKER_FILE = ".remnic-memory"
REPO_CONFIG_FILE = "remnic.config.json"
STATE_DIR = ".remnic"
DURABLE_DIR = "state"
"""The memory repo's durable state folder (transcript archive, recall audit ledger, feedback ledger):
never rebuilt, never deleted by reindex; git-ignored unless ``state.commit``."""
DEFAULT_CONFIDENCE = 0.9
"""Remnic's default confidence: what a store writes when the caller names none, and how a file
without a ``confidence`` key reads (get, the index, X-ray provenance alike)."""


@dataclass
class StoreSettings:
    max_content_chars: int = 20_000
    """store/import refuse a memory body longer than this many characters."""
    scan_secrets: bool = True
    """store/import refuse content holding an API key or token of a known shape, a private key, a URL's password (user:pass@host) or an AWS secret key; observe redacts those and a password said in words ("the password is …") and rejects the sentence."""
    lock_timeout_s: float = 30.0
    """How long a writer waits for the repository write lock before giving up."""
    git_retry_s: float = 10.0
    """How long to keep retrying when git's own index.lock is held by another process."""
    default_confidence: float = DEFAULT_CONFIDENCE
    """Confidence given to a stored memory when the caller names none (Remnic's default)."""
    default_importance: float = 0.5
    """importanceScore given to a stored memory when the caller names none."""
    inline_rebuild_max: int = 2000
    """A write into a repository with no usable index builds the whole index right away when it holds at most this many memory files (so the first write leaves `status` healthy); a larger one is rebuilt by the next recall, with progress."""
    cli_index: bool = False
    """`remnic store` run in its own process (no server running) updates the search index before it exits, loading the embedding model (~0.3-0.5 s); off, the next recall catches the index up from git and embeds what changed then (a server always updates it at once)."""
    scan_memo: bool = True
    """Keep each valid file's parse in .remnic/scan-memo.sqlite, keyed by its stat and by the store settings and remnic version it was parsed under, so listing a large repository (list, status, doctor, GET memories) parses only what changed."""
    include: list[str] = field(default_factory=list)
    """Glob patterns (relative to the memory directory, `**` spans folders) of further markdown files that are memories besides the category folders: ["**"] adopts a whole notes vault, ["notes/**"] one folder. `remnic init --adopt PATTERN` adds one. Files outside every memory folder and pattern are reported as skipped, never touched."""
    exclude: list[str] = field(default_factory=list)
    """Glob patterns of files that are never memories, even inside a category folder (reported as skipped)."""
    readme_files: bool = False
    """README, CHANGELOG, LICENSE and CONTRIBUTING files (in any folder, any markdown extension) are memories too; by default they are reported as skipped."""
    extensions: list[str] = field(default_factory=lambda: [".md", ".markdown"])
    """File extensions of memory files, matched case-insensitively (so .MD and .Markdown count). Each starts with a dot (".md"; "md" is refused, not guessed), and the list names at least one."""


@dataclass
class GitSettings:
    split_index: str = "auto"
    """git's split index for the repository (`git update-index --split-index`): each commit then rewrites a small file instead of git's whole index (8.8 MB at 100k memories). auto turns it on once the index passes ~20,000 entries; true or false (JSON booleans or strings) force it."""
    run_hooks: bool = False
    """Run the repository's pre-commit and commit-msg hooks for remnic's own commits too (a secret scanner, a linter), against exactly what is being committed; a hook that refuses stops the write and nothing changes. Off by default: remnic builds its commits without git's index, so plain hooks do not run. Either way remnic's own git commands run no other hook of the repository (reference-transaction, post-commit, post-merge …: core.hooksPath=/dev/null for them) and never its core.fsmonitor command; a push keeps pre-push. The filters .gitattributes names (clean, smudge: Git LFS) still apply."""


@dataclass
class EmbedSettings:
    model_path: str | None = None
    """An ONNX sentence-embedding model (any export with input_ids/attention_mask inputs); empty means the packaged all-MiniLM-L6-v2 (int8). See docs/retrieval.md for exporting bge-small-en-v1.5."""
    tokenizer_path: str | None = None
    """The tokenizer.json that goes with model_path; empty means the packaged one."""
    model_id: str | None = None
    """Name recorded in the index manifest (a change rebuilds the index); empty derives one from the model file, tokenizer and the settings below."""
    pooling: str = "mean"
    """How token vectors become one vector: mean, cls, max, or none (the model already outputs one vector per text)."""
    int8: bool = False
    """Run the packaged model's int8 weights as int8 matrix products, each text's activations quantized on the fly: 1.3x observe throughput and about half the model's CPU per text, for slightly lower recall (LoCoMo turn R@5 0.746 -> 0.739, temporal 0.903 -> 0.890, session 0.907 -> 0.905: docs/retrieval.md, "The embedding model"). Off by default: recall first. The packaged model only (a model of one's own runs as exported); a change rebuilds the index."""
    normalize: bool = True
    """L2-normalise embeddings (recall compares them by dot product)."""
    output_name: str | None = None
    """The ONNX output to read; empty picks last_hidden_state (sentence_embedding for pooling none), else the only output of the right shape."""
    query_prefix: str = ""
    """Text put before every query before embedding (bge: 'Represent this sentence for searching relevant passages: ', e5: 'query: ')."""
    document_prefix: str = ""
    """Text put before every indexed text before embedding (e5: 'passage: ')."""
    max_length: int = 256
    """Tokens per text; longer texts are truncated."""
    batch_size: int = 16
    """Texts per model call (texts of a few tokens, such as single words: up to four times as many); small batches keep peak memory low."""
    threads: int | None = None
    """onnxruntime intra-op threads; empty means min(cpu count, 4)."""
    bulk_workers: int | None = None
    """Bulk embedding (a reindex, a large import: 512+ new texts) runs this many single-threaded model calls in parallel, on threads sharing one model session (~150 MB while it runs); empty means the same as threads, 0 or 1 turns it off."""
    bulk_mmap_threshold: int = 1_048_576
    """While deferred vectors are computed (a first adoption's second phase), memory blocks of at least this many bytes get a mapping of their own (glibc's M_MMAP_THRESHOLD, fixed from then on for the process), so the model session's weights and buffers go back to the system when freed instead of staying in a heap that does not shrink; 0 leaves glibc's default. At most 33554432."""


@dataclass
class IndexSettings:
    language: str = "english"
    """The language BM25 stems (and drops stopwords of) in this repository's notes and queries: one of tantivy's stemmers (see docs/retrieval.md), or none (lowercase and accent folding only, for mixed languages). A change rebuilds the index."""


DELETE_SETTLE_S = 1.0
"""How long ``remnic sync watch`` holds a memory file's disappearance before syncing it (seconds): a save
that renames the original away (to ``file~``) and then writes the new text, slowly (a large file, a network
mount), stays one edit instead of a delete and an add. The same second sync gives a file modified within
it before trusting it (docs/sync.md, step 2); a real ``rm`` is committed that much later."""


@dataclass
class SyncSettings:
    debounce_ms: int = 200
    """The watcher waits this long after the last save before syncing a burst."""
    max_delay_ms: int = 2000
    """A burst of saves that never pauses is still synced at least this often."""
    commit: bool = True
    """sync commits hand edits it finds (``--no-commit`` turns this off per run)."""
    stamp_edits: bool = True
    """After a hand edit of a memory's body, sync writes ``updated`` (in the format the file already uses) and refreshes the ``contentHash`` the file carries; a file seen for the first time is never stamped."""
    rescan_interval_s: float = 60.0
    """The watcher runs a full diff this often even without events (and at once after a sleep or clock jump)."""
    defer_embeddings_above: int = 256
    """A sync whose notes need more than this many texts embedded (a first adoption, a large pull) indexes them for BM25 and commits at once, and computes their vectors afterwards: `sync run` in the foreground with a progress bar, the watcher between bursts of saves. 0 defers every sync's embeddings; a very large number embeds inline."""


@dataclass
class ServerSettings:
    host: str = "127.0.0.1"
    """Interface the HTTP server binds: an IP address or host name; loopback unless you mean otherwise (`remnic serve` warns of any other, naming where it was set)."""
    port: int = 4318
    """TCP port of the HTTP server."""
    max_body_bytes: int = 131_072
    """Requests with larger bodies get 413 request_body_too_large."""
    write_rate_limit: int = 30
    """Writes allowed per principal per window."""
    write_rate_window_s: float = 60.0
    """The write rate-limit window in seconds."""
    idempotency_window_s: float = 600.0
    """A write repeated with the same idempotencyKey within this many seconds replays the first response."""
    request_timeout_s: float = 30.0
    """Deadline in seconds for a whole request (request line, headers and body) from its first byte, not per read: a client still sending after it gets 408 and is disconnected. Writing a response to a client that does not read is bounded by it too."""
    keep_alive_timeout_s: float = 10.0
    """A connection waits this many seconds for its next request (or a new connection for its first byte) before it is closed."""
    max_connections: int = 64
    """Open HTTP connections at once, each served by one pooled thread (so also the thread bound); a connection beyond it gets 503 server_busy with Retry-After."""
    allowed_hosts: list[str] = field(default_factory=list)
    """Host names accepted in the Host header besides 127.0.0.1, localhost, [::1] and the bound address (DNS-rebinding defence); each still needs the server's port."""
    stdio_principal: str = "default"
    """Principal of `remnic mcp` (stdio) sessions, which carry no token; --principal overrides it."""


@dataclass
class ObserveSettings:
    buffer_max_turns: int = 50
    """Flush a session's buffer once it holds this many unflushed turns (one commit per flush)."""
    buffer_max_minutes: float = 30.0
    """Flush the turns of a session that span more than this many minutes, by their timestamps (0 = off)."""
    topic_shift: bool = True
    """Flush the turns before a change of topic: the mean embedding of the last topicWindow turns against the topicWindow before them."""
    topic_window: int = 4
    """Turns on each side of a possible topic boundary."""
    topic_similarity_floor: float = 0.2
    """A topic shift is a cosine similarity between the two windows below this (measured: 0.10 across a design-to-debugging switch; 0.5% of boundaries inside LoCoMo sessions fall below 0.2)."""
    retry_window_s: float = 600.0
    """A turn without a turnId repeating the same role and text within this many seconds is a client retry: buffered once."""
    user_name: str = ""
    """Whom a user's "I" and "my" become when the transcript names no speaker; empty means "the user"."""
    assistant_name: str = "the assistant"
    """Whom the assistant's "I" becomes in an observation."""
    max_turn_chars: int = 4000
    """Only the first this many characters of a turn are read for facts."""
    min_sentence_words: int = 4
    """Sentences without a cue (a decision, a preference, a stated value, a first-person statement) shorter than this many words are never facts (but see replyStatements); a sentence with a cue is a fact whatever its length."""
    reply_statements: int = 1
    """A person's reply to the other speaker's question: this many of its first statements are facts even without a cue, from two words ("It's on Rua Augusta.", "Contemporary, mostly."); 0 = off. Chosen by leave-one-conversation-out cross-validation on LoCoMo (docs/benchmarks.md)."""
    reply_question_max_words: int = 0
    """A reply's first statement carries the question it answers (`Ana, asked "Where is it?": It's on Rua Augusta.`) when it cannot stand without it — a bare answer, a pronoun naming nothing — or has at most this many words. Chosen by leave-one-conversation-out cross-validation on LoCoMo."""
    continuation_min_words: int = 5
    """A statement without a cue that goes on about what the sentence before it (kept as a fact) named — a pronoun subject, "It's dairy-free vanilla with strawberry filling." — joins that fact when it has at least this many content words; -1 = off. Chosen by leave-one-conversation-out cross-validation on LoCoMo."""
    join_max_sentences: int = 4
    """A kept sentence joins the fact the sentence before it in the same turn made (same category, or one leaning on the other for its subject) while that fact holds fewer than this many sentences: a long turn stays several facts. 4 leaves 99.6% of LoCoMo's joined facts as they were."""
    listener_remark_max_words: int = 2
    """A sentence about the listener ("you", "your") with at most this many other content words is a remark to them, not a fact ("I'm here for you", "I appreciate your encouragement"); -1 = off. Chosen by leave-one-conversation-out cross-validation on LoCoMo."""
    judge: bool = True
    """Run the rules judge (durable vs transient); off, every extracted fact is accepted."""
    min_importance_level: str = "low"
    """Facts below this importanceLevel are dropped before the judge (trivial, low, normal, high, critical)."""
    review_below_confidence: float = 0.6
    """Accepted facts with a lower confidence are proposed as pending_review instead of active."""
    duplicate_similarity_floor: float = 0.92
    """Facts whose embeddings are at least this similar are one fact: within a flush they fold into one observation citing both turns; against an active memory they reinforce it instead of adding one."""
    near_duplicate_word_overlap: float = 0.5
    """A near-duplicate of an active memory must also share this share of its words (Jaccard of words of 3+ letters), so a paraphrase with another meaning is kept."""
    consolidate_after_flush: bool = True
    """Long-running processes (the server, the watcher) run `remnic consolidate` in the background after a flush: their own, or one another process (an agent hook) committed."""
    hook_budget_s: float = 30.0
    """An agent hook (Stop, PreCompact, SessionEnd) begins no flush after this many seconds of observing, so it ends before the host's 60 s timeout kills it: its flushes take at most 100 turns each, each a commit of its own, and the turns left stay buffered for the next hook, a running server or `remnic observe --flush` (the hook's status line says `flushDeferred`); 0 = hooks never flush. A long transcript is flushed over several hooks. The turns a hook read are journaled and its cursor saved before any flush, so a killed hook loses none."""
    tend_interval_s: float = 60.0
    """How often a long-running process (the server, the watcher) flushes the buffers of sessions idle past bufferMaxMinutes and looks for flushes other processes committed (0 = never)."""
    consolidate_window_days: float = 7.0
    """Consolidation looks at memories the pipeline wrote in the last this many days."""


@dataclass
class McpSettings:
    tool_names: str = "underscore"
    """Tool names MCP clients see in tools/list: underscore (remnic_recall: names every client accepts), dotted (remnic.recall plus the legacy engram.recall) or both. Calls accept all three spellings whatever is listed."""
    rate_limit_stdio: bool = False
    """When true, writes over stdio MCP (`remnic mcp`, the user's own agent) count against server.writeRateLimit like HTTP writes; by default only HTTP (routes and POST /mcp) is limited."""


@dataclass
class StateSettings:
    commit: bool = False
    """Commit the durable state folder (state/: the transcript archive, the recall audit ledger, the feedback and compaction ledgers) to git: one commit holding every state file changed since the last (except the buffers' empty *.lock files), made when an agent hook hands turns over, on lcm compaction flush and by `remnic lcm flush`. Off, state/ is git-ignored (the template's .gitignore) and stays on this machine; either way reindex never touches it. Whether your conversations leave this machine is yours to decide: only your own config sets it; a memory repository's remnic.config.json that does is ignored, with a warning."""
    lcm_excerpt_chars: int = 1000
    """An lcm search result's content: an excerpt of about this many characters around the first matching word."""


@dataclass
class EntitySettings:
    enabled: bool = True
    """Build entity pages (entities/<type>-<name>.md: people, projects, tools, places the memories name, by rules) and keep them current: `remnic entities refresh` rebuilds them in one commit, as a long-running process (server, watcher) does after each observe flush's consolidation; reads show them as a build would make them and write nothing."""
    timeline_max: int = 50
    """A page's Timeline lists at most this many of the memories that name the entity, the newest (0 lists all)."""
    extra_tools: list[str] = field(default_factory=list)
    """Names to treat as tools besides the built-in list (docker, postgres, vim, …), e.g. ["mytool", "acme-cli"]."""


@dataclass
class HookSettings:
    pinned_budget_chars: int = 2000
    """Session start: characters of pinned memories (rules, principles, important preferences) injected into every new session, whatever the project (0 pins nothing); a memory that does not fit is cut at a word boundary, or skipped when fewer than recall.budgetMinChars are left, and the rest still go in."""
    pinned_min_importance: float = 0.7
    """Session start: a preference is pinned when its importanceScore is at least this (rules and principles always are)."""
    session_top_k: int = 8
    """Session start: memories recalled for the repository's context (its name, branch, recent commit subjects and changed files; at most 10000)."""
    git_subjects: int = 5
    """Session start: how many recent commit subjects go into the context query."""


@dataclass
class SpaceSettings:
    remote: str = "origin"
    """The git remote `remnic space push|pull` use when the branch has none configured (else the only remote)."""
    recall_read_only: bool = True
    """Recall also searches the spaces marked read-only in your spaces registry (`remnic space create --read-only`), each result naming its space."""
    network_timeout_s: float = 300.0
    """How long a fetch, push or clone may take before it is stopped (git's own credential prompts count)."""


@dataclass
class NamespaceSettings:
    enabled: bool = False
    """When false every principal reads and writes every namespace."""
    default: str = "default"
    """Namespace a write (store, import, observe) goes to when it names none (lowercase letters, digits, '-' and '_', up to 64). A recall that names none spans every namespace (over HTTP and MCP with `namespaces.enabled`: the principal's own)."""
    policies: dict[str, Any] = field(default_factory=dict)
    """Per namespace: {"readPrincipals": [...], "writePrincipals": [...]}, checked when the config is read (`remnic config` and `remnic doctor` name each problem)."""


SECTIONS: dict[str, type] = {
    "store": StoreSettings,
    "git": GitSettings,
    "embed": EmbedSettings,
    "index": IndexSettings,
    "recall": RecallSettings,
    "sync": SyncSettings,
    "server": ServerSettings,
    "observe": ObserveSettings,
    "mcp": McpSettings,
    "state": StateSettings,
    "entities": EntitySettings,
    "hooks": HookSettings,
    "namespaces": NamespaceSettings,
    "spaces": SpaceSettings,
}


@dataclass
class Settings:
    memory_dir: Path
    store: StoreSettings = field(default_factory=StoreSettings)
    git: GitSettings = field(default_factory=GitSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    observe: ObserveSettings = field(default_factory=ObserveSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    state: StateSettings = field(default_factory=StateSettings)
    entities: EntitySettings = field(default_factory=EntitySettings)
    hooks: HookSettings = field(default_factory=HookSettings)
    namespaces: NamespaceSettings = field(default_factory=NamespaceSettings)
    spaces: SpaceSettings = field(default_factory=SpaceSettings)
    origins: dict[str, str] = field(default_factory=dict)
    """Dotted key (``recall.topK``) → where its value came from."""
    config_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """What loading noticed but did not refuse: the original Remnic's keys remnic does not read."""

    @property
    def state_dir(self) -> Path:
        """``.remnic/``: the rebuildable cache (index, vectors, scan memo, locks, pid and log)."""
        return self.memory_dir / STATE_DIR

    @property
    def durable_dir(self) -> Path:
        """``state/``: what cannot be rebuilt from the files (archive, audit and feedback ledgers)."""
        return self.memory_dir / DURABLE_DIR

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"memoryDir": str(self.memory_dir)}
        for name in SECTIONS:
            section = getattr(self, name)
            out[name] = {camel(f.name): getattr(section, f.name) for f in fields(section)}
        return out


def ensure_state_dir(memory_dir: Path) -> Path:
    """``.remnic/`` with a ``.gitignore`` of ``*`` inside, so its contents (index, vectors, caches, locks)
    are never committed even when the repository's own .gitignore forgets it."""
    state = memory_dir / STATE_DIR
    marker = state / ".gitignore"
    if not marker.exists():
        try:
            state.mkdir(parents=True, exist_ok=True, mode=0o700)  # memory text lives in the index and caches
            marker.write_text("# remnic's rebuildable state: never commit it\n*\n", encoding="utf-8")
        except OSError:
            pass  # a read-only checkout: nothing will be written there either
    return state


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def describe_settings() -> list[dict[str, Any]]:
    """Every setting with its default and documentation, read from the dataclasses' docstrings."""
    import ast
    import inspect

    rows = []
    for section, cls in SECTIONS.items():
        docs: dict[str, str] = {}
        tree = ast.parse(inspect.getsource(cls))
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, nxt in itertools.pairwise(body):
            if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
                docs[node.target.id] = str(nxt.value.value)  # type: ignore[union-attr]
        default = cls()
        for f in fields(cls):
            key = f"{section}.{camel(f.name)}"
            rows.append(
                {
                    "key": key,
                    "default": getattr(default, f.name),
                    "doc": docs.get(f.name, ""),
                    "userOnly": key in USER_ONLY or key in USER_ONLY_IGNORED,
                }
            )
    return rows


def settings_markdown() -> str:
    """docs/configuration.md: every setting, its default and meaning (``make docs`` writes it)."""
    lines = [
        "# Configuration",
        "",
        "Generated from `remnic/config/settings.py` by `make docs`; `remnic config --defaults` prints the same.",
        'Config files are JSON with camelCase keys, e.g. `{"recall": {"topK": 5}}`; see the README for',
        "where remnic looks for them and in which order. Settings marked *user only* are refused in a",
        "memory repository: its `remnic.config.json` and any other config file inside it (an",
        "`engram.config.json`, one in a subfolder), since `git pull` brings them; and in a",
        "`./remnic.config.json` (or `./engram.config.json`) of the current directory inside any git",
        "repository, tracked or not, since a clone brings it just the same. Set them in",
        "`~/.config/remnic/config.json` or `$XDG_CONFIG_HOME/remnic/config.json` (or the file",
        "`$REMNIC_CONFIG_PATH` names). A key given twice in",
        "one file is refused, and every problem of every file is reported at once. Numbers are at most",
        "2147483647 unless a setting says otherwise. The original Remnic's flat keys and file shape",
        "(`recallBudgetChars`, a `remnic` block) are read too: see [remnic-compat.md](remnic-compat.md).",
        "",
    ]
    section = None
    for row in describe_settings():
        head = row["key"].split(".")[0]
        if head != section:
            section = head
            lines += ["", f"## `{section}`", "", "| setting | default | meaning |", "|---|---|---|"]
        note = " *User only.*" if row["userOnly"] else ""
        lines.append(f"| `{row['key']}` | `{json.dumps(row['default'])}` | {row['doc']}{note} |")
    return "\n".join(lines) + "\n"


# --- value rules (beyond types) ---

LANGUAGES = (
    *("english", "arabic", "danish", "dutch", "finnish", "french", "german", "greek", "hungarian", "italian"),
    *("norwegian", "portuguese", "romanian", "russian", "spanish", "swedish", "tamil", "turkish", "none"),
)
"""BM25 analyser languages: tantivy's stemmers, and none."""

CHOICES: dict[str, tuple[str, ...]] = {
    "recall.fusion": ("rrf", "score"),
    "recall.contextVectors": ("passage", "mean"),
    "observe.minImportanceLevel": ("trivial", "low", "normal", "high", "critical"),
    "mcp.toolNames": ("underscore", "dotted", "both"),
    "git.splitIndex": ("auto", "true", "false"),
    "embed.pooling": ("mean", "cls", "max", "none"),
    "index.language": LANGUAGES,
}
# Integers that must be at least 1 (a count, a size); every other number must be finite and >= 0.
AT_LEAST_ONE = {
    "store.maxContentChars",
    "embed.maxLength",
    "embed.batchSize",
    "embed.threads",
    "recall.topK",
    "recall.candidates",
    "recall.rrfK",
    "recall.mmrPool",
    "recall.rerankMaxLength",
    "recall.maxChunks",
    "recall.maxQueryChars",
    "server.maxBodyBytes",
    "server.writeRateLimit",
    "observe.bufferMaxTurns",
    "observe.topicWindow",
    "observe.maxTurnChars",
    "server.maxConnections",
    "state.lcmExcerptChars",
    "hooks.sessionTopK",
    "spaces.networkTimeoutS",
}
RANGES: dict[str, tuple[float, float | None]] = {
    "server.port": (0, 65535),
    "embed.bulkMmapThreshold": (0, 33_554_432),  # glibc's ceiling (HEAP_MAX_SIZE / 2 on 64-bit)
    "recall.queryAspectWeight": (0, 1),
    "server.requestTimeoutS": (0.01, None),
    "server.keepAliveTimeoutS": (0.01, None),
    "recall.passageBm25Blend": (0, 1),  # a share of the lesser score: past 1 it would outweigh the better
    "observe.continuationMinWords": (-1, None),  # -1 turns the feature off
    "observe.listenerRemarkMaxWords": (-1, None),
}
MAX_NUMBER = 2_147_483_647
"""The ceiling of every number without a range of its own: past it native code (tantivy, numpy,
timeouts) overflows or tries to allocate it; no setting needs more."""
CEILINGS: dict[str, int] = {
    # Each sizes an allocation of that many entries per recall (tantivy's top-k heap, the fused pool).
    "recall.topK": 10_000,
    "recall.candidates": 10_000,
    "recall.mmrPool": 10_000,
    "recall.rerankTopN": 10_000,
    "recall.recentScanProbe": 10_000,
    "hooks.sessionTopK": 10_000,
}
"""Upper bounds of settings that are otherwise "at least" rules: a value past one is refused by name."""
# Shares, floors and cosines (a similarity below 0 matches nearly everything, above 1 nothing): 0 to 1.
_FRACTION_RE = re.compile(r"(Confidence|Importance|Overlap|Ratio|Lambda|Alpha|Floor|Similarity)$")
# Settings that widen access or weaken safety: a shared, versioned memory repo must not be able to
# set them for everyone who clones it; they come from the user's own config only.
USER_ONLY = {
    "namespaces.enabled",
    "namespaces.policies",
    "namespaces.default",
    "server.host",
    "server.allowedHosts",
    "store.scanSecrets",
    "embed.modelPath",
    "embed.tokenizerPath",
    "recall.rerank",
}
USER_ONLY_IGNORED = {"state.commit"}
"""User-only settings a shared file may not set either, but which it is no error for it to name (a team
config from before they were user-only): the value is ignored there, with a warning."""


def json_text(value: Any) -> str:
    """A value as a config file spells it (``true``, ``null``, ``"ten"``), for messages about that file."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def did_you_mean(word: str, options: Sequence[str]) -> str:
    """``"; did you mean X?"`` naming the option closest to ``word`` (case aside), or "" when none is close."""
    by_lower = {o.lower(): o for o in reversed(options)}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.75)
    return f"; did you mean {by_lower[close[0]]}?" if close else ""


def _check_value(dotted: str, value: Any, origin: str) -> None:
    def bad(message: str, options: tuple[str, ...] | None = None) -> None:
        raise ValidationError.single(dotted, message, path=origin, options=options)

    if dotted in CHOICES and value not in CHOICES[dotted]:
        bad(f"unknown value {json_text(value)}", CHOICES[dotted])
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if value != value or value in (float("inf"), float("-inf")):
        bad(f"must be a finite number, got {json_text(value)}")
    low, high = RANGES.get(dotted, (1 if dotted in AT_LEAST_ONE else 0, 1 if _FRACTION_RE.search(dotted) else None))
    if high is not None:
        if not low <= value <= high:
            bad(f"must be from {low} to {high}, got {json_text(value)}")
    elif value < low:
        bad(f"must be at least {low}, got {json_text(value)}")
    elif value > (ceiling := CEILINGS.get(dotted, MAX_NUMBER)):
        bad(f"must be at most {ceiling}, got {json_text(value)}")
