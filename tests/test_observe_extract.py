"""Extraction rules: noise out, cues in, facts made to stand alone; importance and the judge."""

from __future__ import annotations

import pytest

from remnic.config import ObserveSettings
from remnic.observe.dates import resolve_relative_dates
from remnic.observe.extract import drop_reason, extract_turn, tags_for, value_key
from remnic.observe.importance import score_importance
from remnic.observe.judge import judge_candidate
from remnic.observe.normalize import replace_first_person, standalone, third_person
from remnic.observe.records import Turn
from remnic.observe.text import prose_lines, split_sentences

MONDAY = "2023-05-08T13:56:00Z"


def facts(text: str, *, role: str = "user", speaker: str | None = "Ana", timestamp: str | None = MONDAY) -> list:
    return extract_turn(Turn(role, text, 0, speaker=speaker, timestamp=timestamp), ObserveSettings())


@pytest.mark.parametrize(
    "line,expected",
    [
        ("We moved to v2.3.1 yesterday. It works.", ["We moved to v2.3.1 yesterday.", "It works."]),
        ("Dr. Smith said the cache TTL is 5 min. We agreed.", ["Dr. Smith said the cache TTL is 5 min.", "We agreed."]),
        ("I met J. K. Rowling once! It was amazing.", ["I met J. K. Rowling once!", "It was amazing."]),
        ("Use e.g. Redis or Memcached. Not both.", ["Use e.g. Redis or Memcached.", "Not both."]),
        ("The alarm fires at 2.5 s. Keep it light.", ["The alarm fires at 2.5 s.", "Keep it light."]),
        ("Wow!! That's great. What now?", ["Wow!!", "That's great.", "What now?"]),
        ('He said "ship it." Then he left.', ['He said "ship it."', "Then he left."]),
        ("I went to the U.S. last year. I loved it.", ["I went to the U.S. last year.", "I loved it."]),
        (
            "Our office is at No. 5 Main St. in Lisbon. Come by!",
            ["Our office is at No. 5 Main St. in Lisbon.", "Come by!"],
        ),
    ],
)
def test_sentence_boundaries(line: str, expected: list[str]) -> None:
    assert split_sentences(line) == expected


def test_code_traces_logs_and_tool_output_are_not_prose() -> None:
    text = (
        "The cache should be per-tenant.\n\n"
        "```python\ndef get(key):\n    return cache[key]\n```\n\n"
        "Traceback (most recent call last):\n"
        '  File "tests/test_checkout.py", line 88, in test_checkout_flow\n'
        "TimeoutError: payment stub did not answer\n\n"
        "2026-05-04 09:41:12,532 ERROR [worker-3] connection refused\n"
        "2026-05-04 09:41:13,034 WARN  [worker-3] retrying\n\n"
        "$ pytest -q\n1 failed, 2 passed in 6.12s\n\n"
        "- We deploy on Fridays\n"
        "  and roll back on Mondays."
    )
    assert prose_lines(text) == ["The cache should be per-tenant.", "We deploy on Fridays and roll back on Mondays."]


@pytest.mark.parametrize(
    "sentence,reason",
    [
        ("How have you been?", "question"),
        ("Hey Mel! ", "greeting or acknowledgement"),
        ("Thanks so much, Caroline!", "greeting or acknowledgement"),
        ("Sounds good.", "greeting or acknowledgement"),
        ("That's really cool.", "greeting or acknowledgement"),
        ("Wow, great pic!", "exclamation"),
        ("Here's a pic from the party!", "thanks or show-and-tell"),
        ("I've been great, busy but great.", "small talk"),
    ],
)
def test_noise_is_dropped_before_any_cue(sentence: str, reason: str) -> None:
    assert drop_reason(sentence, "user") == reason


def test_assistant_task_chatter_is_dropped() -> None:
    for said in ("I'll run the tests now.", "Let me check the fixture order.", "Running the tests now."):
        assert drop_reason(said, "assistant") == "assistant task chatter"
    assert facts("I'll run the tests now. All tests pass. I've updated cache.py.", role="assistant") == []


@pytest.mark.parametrize(
    "said,category,content",
    [
        ("Actually, the staging DB port is 5433, not 5432.", "correction", "The staging DB port is 5433, not 5432."),
        ("Never push to main.", "principle", "Never push to main."),
        (
            "Remember to always run migrations before deploying.",
            "principle",
            "Remember to always run migrations before deploying.",
        ),
        (
            "If the replica lag passes 30s, page the on-call.",
            "rule",
            "If the replica lag passes 30s, page the on-call.",
        ),
        ("I really love hiking in the Alps.", "preference", "Ana loves hiking in the Alps."),
        (
            "I'll send the migration plan by next Friday.",
            "commitment",
            "Ana will send the migration plan by Friday, 12 May 2023.",
        ),
        ("We decided to cut releases every Tuesday.", "decision", "We decided to cut releases every Tuesday."),
        ("My sister Mia lives in Porto.", "relationship", "Ana's sister Mia lives in Porto."),
        ("Argo is our deployment tool.", "entity", "Argo is our deployment tool."),
        ("I got married last summer!", "moment", "Ana got married in the summer of 2022."),
        ("I'm really good at choreography.", "skill", "Ana is good at choreography."),
        ("I went to a support group yesterday.", "fact", "Ana went to a support group on 7 May 2023."),
        ("Been reading that book you recommended.", "fact", "Ana has been reading that book you recommended."),
        ("The billing service owner is Dana.", "fact", "The billing service owner is Dana."),
    ],
)
def test_each_category_has_its_cue(said: str, category: str, content: str) -> None:
    found = facts(said)
    assert [(c.fact.category, c.fact.content) for c in found] == [(category, content)]
    assert found[0].fact.quote == said


def test_requests_and_remarks_to_the_listener_are_not_facts() -> None:
    assert facts("Fix the empty-cart 500. Can you look into it?") == []
    assert facts("You'd be a great counselor!") == []
    assert [c.fact.category for c in facts("Use pnpm, not npm.")] == ["preference"]  # a request that states a choice
    assert [c.fact.category for c in facts("You must never commit secrets.")] == ["principle"]


def test_general_remarks_about_us_are_not_facts() -> None:
    said = "We can make a real impact together! Let's keep chasing our dreams. Let's keep going!"
    assert facts(said) == []
    assert [c.fact.category for c in facts("Let's use pnpm, not npm.")] == ["decision"]  # a choice
    assert [c.fact.category for c in facts("Let's keep the old API for now.")] == ["decision"]
    assert [c.fact.content for c in facts("We can meet on Fridays.")] == ["We can meet on Fridays."]  # a time
    assert facts("I feel the same way! Yeah, I love to.") == []  # nothing but function words
    reply = Turn("user", "I love it!", 1, speaker="Ana")
    assert [c.fact.content for c in extract_turn(reply, ObserveSettings(), question="How's Lisbon?")] == [
        'Asked "How\'s Lisbon?": Ana loves it.'
    ]


def test_a_pronoun_statement_after_a_fact_goes_on_about_it() -> None:
    found = facts("I baked a cake on Sunday. It's dairy-free vanilla sponge with strawberry filling. It was fun!")
    assert [(c.fact.category, c.cue) for c in found] == [
        ("fact", "first-person statement"),
        ("fact", "continues the sentence before"),
    ]
    assert found[1].fact.content == "It's dairy-free vanilla sponge with strawberry filling."
    assert facts("It's dairy-free vanilla sponge with strawberry filling.") == []  # nothing before it to go on about
    off = extract_turn(
        Turn("user", "I baked a cake. It's dairy-free vanilla sponge with strawberry filling.", 0, speaker="Ana"),
        ObserveSettings(continuation_min_words=-1),
    )
    assert len(off) == 1


def test_a_statement_saying_when_is_a_fact() -> None:
    (found,) = facts("Something exciting happened last Friday.")
    assert (found.cue, found.fact.content) == ("dated statement", "Something exciting happened on Friday, 5 May 2023.")
    assert facts("Something exciting happened.") == []  # no cue, no first person, nothing specific, no date
    assert facts("The outage happened yesterday.", role="assistant", speaker=None) == []  # a person's statements only


def test_a_definite_description_after_a_fact_goes_on_about_it() -> None:
    found = facts(
        "Yup, we did the hike yesterday! The kids loved it and it was a nice way to relax after the road trip."
    )
    assert [c.cue for c in found] == ["first-person statement", "continues the sentence before"]
    said = "We went to the canyon. Thankfully, they enjoyed the long drive and the canyon views a lot!"
    assert [c.cue for c in facts(said)] == ["first-person statement", "continues the sentence before"]
    assert facts("The Wolves are solid and great this season overall.") == []  # a name, not "the" + a noun


def test_truths_about_us_in_general_are_not_facts() -> None:
    said = "Music brings us together. Challenges help us learn and grow. Taking time for ourselves is vital."
    assert facts(said) == []
    kept = facts("We love camping, it brings us closer. Music brought us together last summer.")
    assert len(kept) == 2  # "we" did something; something happened


def test_remarks_about_the_listener_with_nothing_else_are_not_facts() -> None:
    assert facts("I'm here for you. I appreciate your encouragement. I'm so glad it worked for you!") == []
    kept = facts("I still have that stuffed animal dog you gave me!")
    assert [c.fact.content for c in kept] == ["Ana still has that stuffed animal dog you gave them."]


def test_showing_ones_own_things_says_what_one_has_or_did() -> None:
    found = facts("Here are some bowls of coconut ice cream that I made. Here's a pic!")
    assert [c.fact.content for c in found] == ["Ana shares some bowls of coconut ice cream that Ana made."]
    shown = facts("Check out my painting for the art show!")
    assert [c.fact.content for c in shown] == ["Ana shares their painting for the art show."]
    assert facts("Check out the logs.") == []  # a request, nothing of one's own


def test_a_name_is_something_said_to_the_listener_but_not_when_it_calls_them() -> None:
    (found,) = facts("I think you'd love this fantasy novel by Patrick Rothfuss.")
    assert found.fact.content == "Ana thinks you'd love this fantasy novel by Patrick Rothfuss."
    assert facts("Got it Nate, I'll see you soon!") == [] and facts("I'm here for you, Jon!") == []


def test_bracketed_asides_are_not_the_speakers_words() -> None:
    assert prose_lines("Yay! [shares a photo of a dog] Read [the docs](https://x.io) [sic].") == [
        "Yay! Read [the docs](https://x.io) [sic]."
    ]
    assert facts("[shares a photo of a cake on a table]") == []


def test_the_first_statement_of_a_reply_to_a_question_is_a_fact_carrying_the_question() -> None:
    reply = Turn("user", "Well, it's on Rua Augusta. It gets busy.", 1, speaker="Gina", timestamp=MONDAY)
    found = extract_turn(reply, ObserveSettings(), question="Where is your store?")
    assert [c.fact.content for c in found] == ['Gina, asked "Where is your store?": It\'s on Rua Augusta.']
    importance = score_importance(found[0].fact.content, "fact", said=found[0].sentence)
    assert judge_candidate(found[0], importance).kind == "accept"  # the question names what "it" is
    assert extract_turn(reply, ObserveSettings()) == []  # not a reply: no cue, no first person, nothing specific
    # A statement that stands on its own keeps its own words.
    said = Turn("user", "My goal is to improve my shooting percentage this season.", 2, speaker="John")
    assert [c.fact.content for c in extract_turn(said, ObserveSettings(), question="What's your goal?")] == [
        "John's goal is to improve their shooting percentage this season."
    ]


def test_naming_something_is_a_fact() -> None:
    assert [c.fact.content for c in facts("Her name's Coco and she's adorable.")] == [
        "Her name's Coco and she's adorable."
    ]


def test_must_is_a_rule_only_when_it_obliges() -> None:
    for rule in ("Secrets must be stored in the vault.", "Every PR must run the full test suite."):
        assert [c.fact.category for c in facts(rule)] == ["principle"], rule
    for guess in ("That trip must have been so much fun.", "Losing all that progress must be really frustrating."):
        assert facts(guess) == [], guess  # conjecture about someone, not a rule
    assert [c.fact.category for c in facts("Lisbon is a must-visit city for anyone.")] == ["preference"]


def test_first_person_becomes_the_speaker_with_agreeing_verbs() -> None:
    assert (
        replace_first_person("I love painting and I go running.", "Mel") == "Mel loves painting and Mel goes running."
    )
    assert replace_first_person("I'm off; my kids need me.", "Mel") == "Mel is off; their kids need them."
    assert replace_first_person("I don't like it, I've tried.", "Mel") == "Mel doesn't like it, Mel has tried."
    # "their" only after the name, and the name as a word: the fact still says whose it is.
    assert replace_first_person("My sister and I went to Rome.", "Sam") == "Sam's sister and Sam went to Rome."
    assert replace_first_person("My wife works in Albany.", "Al") == "Al's wife works in Albany."
    assert replace_first_person("My favourite band is Sam Fender.", "Sam") == "Sam's favourite band is Sam Fender."
    assert [third_person(v) for v in ("try", "watch", "go", "went", "can", "have")] == [
        "tries",
        "watches",
        "goes",
        "went",
        "can",
        "has",
    ]
    assert standalone("So, I'm Bo, I joined the team.", speaker="Bo", timestamp=None)[0] == "Bo joined the team."
    assert [
        replace_first_person(said, "Ana")
        for said in ("I highly recommend it.", "I'd been there twice.", "How much I need them!", "I rely on her.")
    ] == ["Ana highly recommends it.", "Ana had been there twice.", "How much Ana needs them!", "Ana relies on her."]


def test_fillers_and_names_said_to_the_listener_leave_the_fact() -> None:
    def said(text: str, listener: str | None = None) -> str:
        return standalone(text, speaker="Ana", timestamp=MONDAY, listener=listener)[0]

    assert said("Hey Maria, my favourite treat is the tart.") == "Ana's favourite treat is the tart."
    assert (
        said("Wow, Jon, it's definitely changed them and it was so special.") == "It's changed them and it was special."
    )
    assert said("It's been super busy and the party was pretty loud.") == "It's been busy and the party was loud."
    assert said("It was so much fun and a pretty dress.") == "It was so much fun and a pretty dress."
    assert said("Yesterday, I went to the park.") == "On 7 May 2023, Ana went to the park."  # not a name
    assert said("It was an awesome time, Caroline!", listener="Caroline") == "It was an awesome time."
    assert said("Caroline, they're some of my fave memories.", listener="Caroline") == (
        "They're some of Ana's fave memories."
    )
    assert said("I moved to a new city, Boston.", listener="Caroline") == "Ana moved to a new city, Boston."
    assert said("Quick context: the API is v2.") == "The API is v2."  # a lead-in
    assert said("I got ideas from everywhere: people, books.") == "Ana got ideas from everywhere: people, books."
    assert facts("I prefer tabs.", speaker=None)[0].fact.content == "The user prefers tabs."


@pytest.mark.parametrize(
    "text,expected",
    [
        ("I went there yesterday.", "I went there on 7 May 2023."),
        ("We met up last week.", "We met up in the week before 8 May 2023."),
        ("I painted it last year.", "I painted it in 2022."),
        ("I started three years ago.", "I started in 2020."),
        ("We go camping next month.", "We go camping in June 2023."),
        ("I ran a race last Saturday.", "I ran a race on Saturday, 6 May 2023."),
        ("That trip this past weekend was wild.", "That trip on the weekend before 8 May 2023 was wild."),
        ("We spoke this past Friday, not the past week.", "We spoke on Friday, 5 May 2023, not the past week."),
        ("Much happened in the last month.", "Much happened in the last month."),
        ("Can't wait for tomorrow's opening!", "Can't wait for 9 May 2023's opening!"),
        ("Ship it by next Friday.", "Ship it by Friday, 12 May 2023."),
        ("Since yesterday it works.", "Since 7 May 2023 it works."),
        ("It was a few days ago.", "It was a few days before 8 May 2023."),
        ("The exam is in 3 weeks.", "The exam is around 29 May 2023."),
        ("We cut releases every Tuesday.", "We cut releases every Tuesday."),
        ("The deploy is on Fridays.", "The deploy is on Fridays."),
    ],
)
def test_relative_dates_become_absolute(text: str, expected: str) -> None:
    assert resolve_relative_dates(text, MONDAY)[0] == expected


def test_without_a_timestamp_dates_stay_relative() -> None:
    assert resolve_relative_dates("I went there yesterday.", None) == ("I went there yesterday.", [])


def test_values_give_supersession_keys() -> None:
    assert value_key("the staging DB port is now 5433", "Ana") == ("staging-db", {"port": "5433"})
    assert value_key("Actually the staging DB port is 5433, not 5432"[9:], "Ana") == ("staging-db", {"port": "5433"})
    assert value_key("my favourite colour is blue", "Ana") == ("ana", {"favourite-colour": "blue"})
    assert value_key("Caroline's email is c@example.org", "Ana") == ("caroline", {"email": "c@example.org"})
    assert value_key("the transgender stories were so inspiring", "Ana") == (None, {})
    assert value_key("it is 5433", "Ana") == (None, {})
    # A clause joined after the value is not part of it; names joined by "and" are.
    assert value_key("My name is Ana and I live in Porto", "Ana") == ("ana", {"name": "Ana"})
    assert value_key("The billing leads are Ana and Ben", "Ana") == ("billing", {"leads": "Ana and Ben"})
    assert value_key("My sister Mia is visiting next Saturday", "Ana") == (None, {})  # a verb going on
    fact = facts("The staging DB port is now 5433.")[0].fact
    assert fact.supersession_keys() == ["staging-db::port"]


def test_tags_come_from_names_then_keywords() -> None:
    assert tags_for("Ana's sister Mia is visiting Porto on Saturday, 14 March 2026.", exclude=("Ana",)) == (
        "mia",
        "porto",
        "sister",
        "visiting",
    )


def test_importance_follows_the_reference_rules() -> None:
    trivial = score_importance("ok", "fact")
    assert (trivial.score, trivial.level) == (0.1, "trivial")
    decided = score_importance("We decided to cut releases every Tuesday.", "decision", ("decision",))
    assert decided.score == 0.75 and decided.level == "high"
    assert decided.reasons == (
        "High importance marker detected",
        "Category boost: decision",
        "Important tags: decision",
    )
    corrected = score_importance(
        "The staging DB port is 5433.", "correction", said="Actually, the staging DB port is 5433, not 5432."
    )
    assert corrected.reasons[0].startswith("Critical marker:") and corrected.score == 0.88
    hedged = score_importance("Maybe we move the standup.", "fact")
    assert hedged.score == 0.35 and "Uncertainty/hedging detected" in hedged.reasons


@pytest.mark.parametrize(
    "said,kind,reason",
    [
        ("Never push to main.", "accept", "Auto-approved: principle category bypasses judge"),
        ("I went to a support group yesterday.", "accept", "Durable fact (first-person statement)"),
        ("My build is currently failing on CI.", "reject", "Work in progress, stale within hours"),
        ("I'm currently debugging the flaky checkout test.", "reject", "Work in progress, stale within hours"),
        (
            "I'm currently reading a novel by Patrick Rothfuss.",
            "accept",
            "What the speaker is doing these days (dated by when it was said)",
        ),
        ("I think the deploy takes 20 minutes.", "defer", "Hedged: the speaker is not sure"),
        (
            "It taught me self-acceptance and patience.",
            "defer",
            "Ambiguous referent: the subject is named in another turn",
        ),
        ("I'm going to learn the cello.", "defer", "Plan or commitment with no date"),
        ("I'm going to learn the cello next year.", "accept", "Durable commitment (future with a date)"),
        ("Well, I'm heading out now.", "reject", "Leaving the conversation"),
        ("I'm off to bed.", "reject", "Leaving the conversation"),
        ("I'm off to lunch.", "reject", "Leaving the conversation"),
        ("I'm currently refactoring the auth module.", "reject", "Work in progress, stale within hours"),
        ("I'm currently waiting for the build.", "reject", "Work in progress, stale within hours"),
        (
            "I'm off to go swimming with the kids.",
            "accept",
            "What the speaker is doing these days (dated by when it was said)",
        ),
        ("I failed the military aptitude test.", "accept", "Durable fact (first-person statement)"),
        (
            "I've done weight training so far.",
            "accept",
            "What the speaker is doing these days (dated by when it was said)",
        ),
    ],
)
def test_judge_verdicts(said: str, kind: str, reason: str) -> None:
    (candidate,) = facts(said)
    fact = candidate.fact
    verdict = judge_candidate(candidate, score_importance(fact.content, fact.category, fact.tags, said=said))
    assert (verdict.kind, verdict.reason) == (kind, reason)
    off = judge_candidate(candidate, score_importance(fact.content, fact.category), enabled=False)
    assert off.kind == "accept" and off.source == "disabled"


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_how_systems_relate_is_a_fact(role: str) -> None:
    for said in (
        "The cart service calls the pricing API at port 8081.",
        "The cart service depends on Redis 7.",
        "Payments service calls the Stripe API.",
    ):
        assert [(c.fact.category, c.fact.content) for c in facts(said, role=role)] == [("fact", said)]


def test_short_statements_with_their_own_cue_are_kept_and_small_talk_is_not() -> None:
    from remnic.observe.pipeline import plan_observations

    said = ["I hate YAML.", "I'm a nurse.", "Never force-push main.", "I felt great.", "I am tired.", "Yes, twice."]
    turns = [Turn("user", text, i, speaker="Al", timestamp=MONDAY) for i, text in enumerate(said)]
    kept = [o.fact.content for o in plan_observations(turns, session_key="s", settings=ObserveSettings())]
    assert kept == ["Al hates YAML.", "Al is a nurse.", "Never force-push main."]
