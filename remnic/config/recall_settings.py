"""Recall's tunables (``recall.*``), apart from the other sections for their number: fusion weights,
stages, tiers, the budget and the X-ray, each with its documented default."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RecallSettings:
    top_k: int = 10
    """Results returned by a recall (at most 10000)."""
    budget_chars: int = 8192
    """Character budget for the returned contents; a result that does not fit is trimmed to its best passages (0 = no limit)."""
    candidates: int = 50
    """Candidates taken from each retriever (BM25 and vectors) before fusion; never fewer than the recall's topK (at most 10000)."""
    fusion: str = "score"
    """How BM25 and vector lists are fused: 'score' (normalised scores, the measured best) or 'rrf' (reciprocal rank)."""
    rrf_k: int = 60
    """The k constant of reciprocal-rank fusion (fusion='rrf' only)."""
    weight_vector: float = 1.0
    """Weight of the vector (semantic) term: min-max normalised similarity over the vector candidates."""
    weight_bm25: float = 1.25
    """Weight of the BM25 (lexical) term: the BM25 score divided by the best BM25 score."""
    context_weight: float = 0.5
    """Weight of a memory's episode-passage similarity inside its vector similarity (0 ignores context vectors)."""
    boost_title: float = 1.0
    """BM25 boost of the title field (frontmatter title, a leading heading or 'Label:')."""
    boost_body: float = 1.0
    """BM25 boost of the memory's own text."""
    boost_tags: float = 1.0
    """BM25 boost of tags and entityRef."""
    boost_near: float = 0.7
    """BM25 boost of the neighbouring turns (±1) indexed with a short episode memory."""
    boost_far: float = 0.5
    """BM25 boost of the turns ±2..neighborWindow indexed with a short episode memory."""
    boost_when: float = 3.0
    """BM25 boost of the date words of `created` ('8 May 2023 Monday'), so 'in May' finds May; also the boost of a query's date terms there."""
    dates: bool = True
    """Understand dates in queries: dates and ranges a query names become date terms and, where unambiguous, a date scope."""
    boost_dated: float = 3.0
    """BM25 boost of the dates a memory's text names ('yesterday', 'last week', 'May 3, 2023'), resolved against its observedAt/created, for a query's date terms."""
    weight_states_time: float = 0.3
    """Additive `date` score term, for a question asking when (or how long), of memories whose text states a time."""
    date_filter: bool = False
    """A query naming one unambiguous date or range recalls only memories dated then (created then, or naming an overlapping date; not applied when none is). Off by default: on LoCoMo it cost R@5 (see docs/retrieval.md)."""
    date_slack_days: int = 1
    """The date scope is widened by this many days on each side ('last night' written just after midnight)."""
    query_aspect_weight: float = 0.5
    """A query naming a name most memories contain is also embedded without it (its aspect); the query vector is this share of the aspect's plus the rest of the whole query's (0 = off)."""
    query_aspect_name_ratio: float = 0.2
    """A name counts as one most memories share when at least this share of the indexed memories contains it."""
    query_expansion_weight: float = 0.5
    """Each query word (not one at least queryAspectNameRatio of the memories contain) is also searched in memory texts by the words of the repository's own vocabulary nearest it in embedding space ('pets' → dogs, cats), each with this × its cosine as BM25 weight (0 = off)."""
    query_expansion_min_similarity: float = 0.5
    """A vocabulary word expands a query word only when their embedding cosine is at least this."""
    query_expansion_terms: int = 3
    """At most this many vocabulary words (distinct stems, not already query terms) per query word."""
    question_penalty: float = 0.2
    """In an episode, a memory whose text ends with a question is lowered by this much: the turn after it answers."""
    reply_alpha: float = 1.0
    """In an episode, the memory after a question is lifted to this share of the question's score (0 = off)."""
    query_stopwords: bool = True
    """Drop English stopwords and question words from the BM25 query (kept if nothing else is left)."""
    max_query_chars: int = 2000
    """Longer query text is cut to this many characters before analysis and embedding."""
    weight_importance: float = 0.05
    """Additive weight of importanceScore (0..1) in the final score."""
    weight_recency: float = 0.02
    """Additive weight of recency in the final score: exp decay of the age of when a memory was said (`validAt`, else `observedAt`, else `updated`)."""
    recency_half_life_days: float = 30.0
    """Age at which the recency term halves."""
    inactive_penalty: float = 0.5
    """Subtracted from memories that are not active when they are asked for (include_inactive)."""
    rerank: str = ""
    """A cross-encoder for the rerank stage: a directory holding model.onnx + tokenizer.json (e.g. ms-marco-MiniLM-L-6-v2 exported to ONNX, see docs/retrieval.md); empty = off."""
    rerank_top_n: int = 20
    """How many of the best fused candidates the cross-encoder rescores (at most 10000)."""
    rerank_budget_ms: float = 150.0
    """Latency budget of the rerank stage: batches stop once it is spent (the first batch always runs); the rest keep no rerank term. With the X-ray clock pinned (REMNIC_XRAY_CLOCK) no budget applies, so the X-ray is the same on every run."""
    rerank_weight: float = 1.0
    """The rerank term is rerankWeight × sigmoid(cross-encoder logit)."""
    rerank_max_length: int = 256
    """Tokens per (query, memory) pair given to the cross-encoder; the memory's side is truncated."""
    mmr_lambda: float = 1.0
    """MMR trade-off: 1.0 is pure relevance (measured best on LoCoMo), lower values penalise near-duplicates."""
    mmr_pool: int = 50
    """How many of the best-scored candidates MMR re-ranks (at most 10000)."""
    score_propagation_alpha: float = 0.5
    """Discount for episode siblings of strong hits (XTrace's score_propagation_alpha)."""
    episode_expansion: bool = True
    """Offer memories sharing an episode with strong hits as discounted siblings."""
    expansion_seeds: int = 3
    """How many of the best hits lend their score to episode siblings."""
    expansion_window: int = 2
    """Siblings within this many positions of a seed in its episode (0 = the whole episode)."""
    neighbour_cap: bool = True
    """A memory never outranks an episode neighbour (within neighborWindow) whose own text matches the query better: its borrowed context may find it, not lift it above its source."""
    neighbor_window: int = 2
    """Index a short episode memory with the text of its neighbours up to this many positions away (0 = off)."""
    context_max_chars: int = 600
    """Only memories up to this long borrow neighbour context; longer ones stand alone."""
    context_vectors: str = "passage"
    """How a short episode memory's context vector is made: `passage` embeds the text of it and its neighbours (one model run per memory, ~5× a sentence), `mean` averages their sentence vectors (no model run beyond the sentences; LoCoMo R@10 0.804 vs 0.808). Observed facts (`source: extraction`) always take the mean: their flush embedded those sentences already. *Reindexes.*"""
    max_chunks: int = 16
    """Vectors per memory: one per sentence, merged into groups of neighbours past this many (a group stays within one passage). *Reindexes.*"""
    max_vectors: int = 256
    """At most this many vectors per memory (groups of at most passageChars: the first ~200,000 characters at the default): a longer note (a 10 MB export) is found by its words all through, by its meaning within that start; indexing it tells which note and where. Stored memories and LoCoMo sessions are far below it. 0 = no cap. Applies to memories indexed from then on (`remnic reindex`: to all)."""
    passage_chars: int = 800
    """A long memory is indexed as heading/paragraph passages of at most this many characters (within the model's window), each embedded; recall shows its best passages and the budget trims to them. *Reindexes.*"""
    budget_min_chars: int = 200
    """The budget trims a hit that does not fit to its best passages; with fewer characters than this left it is dropped instead (the first hit is always kept, trimmed if need be)."""
    passage_bm25_blend: float = 0.5
    """A long memory's BM25 takes the better of its whole body's and its best passage's score, plus this × the lesser (0 = the better one only): matching as a whole and in one place counts more than either alone."""
    chunk_top_k: int = 2
    """A long memory's vector similarity is the mean of its best chunk_top_k chunks (1 = its best chunk only)."""
    chunk_top_k_min_chunks: int = 12
    """Only memories with at least this many chunks count as long for chunk_top_k; shorter ones keep their best chunk."""
    confidence_floor: float = 0.0
    """Candidates below this confidence are filtered out."""
    min_similarity: float = 0.2
    """Candidates no BM25 term matched need at least this raw cosine to the query (0 disables)."""
    token_overlap_floor: float = 0.0
    """Candidates sharing less than this fraction of query terms are filtered (0 disables)."""
    xray_capture: bool = False
    """Capture an X-ray snapshot on every recall (otherwise only when asked)."""
    audit: bool = True
    """Append one entry per recall to the audit ledger (state/audit/recall-YYYYMMDD.jsonl)."""
    audit_retention_days: int = 90
    """Audit files older than this many days are deleted when a new day's file starts (0 keeps all)."""
    direct_answer: bool = True
    """Direct-answer tier: pin a single trusted decision/fact/principle that answers the query."""
    direct_answer_min_importance: float = 0.75
    """Direct answer: importanceScore at least this."""
    direct_answer_min_confidence: float = 0.9
    """Direct answer: confidence at least this (a trusted memory)."""
    direct_answer_min_overlap: float = 0.6
    """Direct answer: fraction of the query terms found in the memory's text."""
    direct_answer_margin: float = 0.4
    """Direct answer: its score must lead every other candidate by this much (unambiguous)."""
    direct_answer_prior: float = 0.25
    """Direct answer: tier prior added to its score."""
    procedural: bool = True
    """Procedural tier: how-to queries favour procedures/skills."""
    procedural_prior: float = 0.2
    """Procedural: tier prior of a procedure that shares enough of a how-to query's terms."""
    procedural_min_overlap: float = 0.3
    """Procedural: fraction of the query terms a procedure must share."""
    procedural_max: int = 2
    """Procedural: procedures the retrievers missed that may be offered per recall."""
    graph: bool = True
    """Graph tier: follow links, [[wikilinks]] and shared entityRef from the strongest hits."""
    graph_seeds: int = 2
    """Graph: how many of the strongest hits are seeds."""
    graph_seed_ratio: float = 0.7
    """Graph: a seed scores at least this fraction of the best hit."""
    graph_max_hops: int = 2
    """Graph: edges followed from a seed (0 = none; each hop more widens the search, 1 or 2 are usual)."""
    graph_max_nodes: int = 3
    """Graph: memories the graph tier may serve per recall."""
    graph_alpha: float = 0.6
    """Graph: a reached memory is lifted to alpha × path confidence × the seed's score."""
    graph_link_confidence: float = 0.9
    """Graph: confidence of a `links` edge."""
    graph_wikilink_confidence: float = 0.85
    """Graph: confidence of a [[wikilink]] edge."""
    graph_entity_confidence: float = 0.75
    """Graph: confidence of a shared-entityRef edge."""
    graph_min_confidence: float = 0.5
    """Graph: paths whose confidence (product of edges) falls below this are not followed."""
    recent_scan: bool = True
    """Recent-scan tier: queries about what is recent favour recently updated memories."""
    recent_scan_window_days: float = 7.0
    """Recent-scan: how recent `updated` must be."""
    recent_scan_prior: float = 0.15
    """Recent-scan: tier prior of a memory updated just now (falls linearly to 0 at the window's end)."""
    recent_scan_max: int = 3
    """Recent-scan, queries naming a topic: recent memories found, and as many offered, kept past the floors."""
    recent_scan_probe: int = 200
    """Recent-scan: how many of the most recently updated memories are checked for topic words (at most 10000)."""
    review_context: bool = True
    """Review-context tier: show pending_review/disputed memories flagged requires-review."""
    review_context_max: int = 2
    """Review context: pending_review memories the trust-zone gate may keep per recall."""
    review_context_min_overlap: float = 0.5
    """Review context: fraction of the query terms a pending_review memory must share to be kept."""
    reinforcement_weight: float = 0.02
    """Boost of a memory confirmed reinforcement_count times: weight × min(count, cap) / cap."""
    reinforcement_cap: float = 10.0
    """reinforcement_count at which the boost stops growing."""
    citations: bool = False
    """Recall responses end with an `<oai-mem-citation>` block naming each result's file and lines (the form Codex reads); a request can also ask for it (`citations: true`, `remnic query --citations`)."""
    project_boost: float = 0.1
    """Added to the score of a memory of the project a recall is for (its cwd, projectTag or session coding context), when the memory names the project in its `project` frontmatter, a tag or entityRef; shown as projectBoost in the X-ray (0 turns it off)."""
    fallback_scan: bool = True
    """When the index cannot be used (corrupt and not rebuildable, model missing), answer by scanning the files."""
    follow_edits: bool = True
    """Before searching, index memory files edited since the last commit (hand edits no sync or watcher has committed yet), without committing them, so a recall never returns a file's old text."""
    follow_edits_max: int = 50
    """More edited files than this are not indexed by a recall (that would hold it up): the result and its X-ray say how many were not searched and to run `remnic sync run`."""
