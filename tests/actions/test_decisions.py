"""A decision is an input, checked on the way in (the door: CLI, TUI, server) and on recheck
(bundle verify and --recompute) by one validator (``workbench.bundle.decisions``): a word of the
vocabulary, an actor and a reason that say something, times in order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.foundation.test_textsafe import EVERY_INVISIBLE
from workbench.bundle.decisions import DECISION_WORDS, history_problems

PROPOSED = "2026-11-30T10:00:00+00:00"
BLANKS = [*EVERY_INVISIBLE, " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x1b", "\x85"]


def decision(word="approved", by="dana", why="queue time dominates", at="2026-11-30T11:00:00+00:00"):
    return {"decision": word, "by": by, "why": why, "at": at}


def where(problems):
    return [p.where for p in problems]


def test_an_ordinary_history_holds():
    history = [
        decision(),
        decision("rejected", at="2026-11-30T12:00:00+00:00"),
        decision(at="2026-11-30T13:00:00+00:00"),
    ]
    assert history_problems(PROPOSED, history, [{"by": "sam", "at": "2026-11-30T13:00:00+00:00"}]) == []


@pytest.mark.parametrize(
    "word", ["yes", "approve", "Approved", "APPROVED", "approved\u200b", "approve\u200b", " approved", "ok", ""]
)
def test_only_the_vocabulary_decides(word):
    assert word not in DECISION_WORDS
    assert where(history_problems(PROPOSED, [decision(word)])) == ["decisions[0].decision"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(BLANKS), max_size=8), st.sampled_from(["by", "why"]))
def test_an_actor_or_reason_of_blanks_and_invisibles_says_nothing(chars, field):
    problems = history_problems(PROPOSED, [decision(**{field: "".join(chars)})])
    assert where(problems) == [f"decisions[0].{field}"] and "says nothing" in problems[0].why


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(BLANKS), max_size=6), st.sampled_from(["by", "why"]))
def test_invisibles_around_a_real_name_are_no_reason_to_refuse(chars, field):
    padding = "".join(chars)
    assert history_problems(PROPOSED, [decision(**{field: f"{padding}dana{padding}"})]) == []


def test_every_invisible_character_alone_is_nobody():
    for ch in EVERY_INVISIBLE:
        assert where(history_problems(PROPOSED, [decision(by=ch)])) == ["decisions[0].by"], f"U+{ord(ch):04X}"
    assert where(history_problems(PROPOSED, [decision(by="\u0301\u0302")])) == ["decisions[0].by"]  # marks alone


@pytest.mark.parametrize(
    ("history", "verifications", "place", "why"),
    [
        ([decision(at="2026-11-30T09:00:00+00:00")], [], "decisions[0].at", "before the proposal"),
        (
            [decision(), decision("rejected", at="2026-11-30T10:30:00+00:00")],
            [],
            "decisions[1].at",
            "before the decision before it",
        ),
        (
            [decision()],
            [{"by": "sam", "at": "2026-11-30T10:30:00+00:00"}],
            "verifications[0].at",
            "before the approval",
        ),
        (
            [decision("rejected")],
            [{"by": "sam", "at": "2026-11-30T12:00:00+00:00"}],
            "verifications[0]",
            "not approved",
        ),
        ([], [{"by": "sam", "at": "2026-11-30T12:00:00+00:00"}], "verifications[0]", "not approved"),
        ([decision()], [{"by": "\u200b", "at": "2026-11-30T12:00:00+00:00"}], "verifications[0].by", "says nothing"),
        ([decision(at="2026-11-30 11:00")], [], "decisions[0].at", "not a time with a zone"),
        ([decision(at="yesterday")], [], "decisions[0].at", "not a time with a zone"),
    ],
)
def test_times_keep_their_order(history, verifications, place, why):
    problems = history_problems(PROPOSED, history, verifications)
    assert where(problems) == [place] and why in problems[0].why, problems


def test_a_verification_after_a_later_rejection_is_impossible():
    history = [decision(), decision("rejected", at="2026-11-30T12:00:00+00:00")]
    problems = history_problems(PROPOSED, history, [{"by": "sam", "at": "2026-11-30T13:00:00+00:00"}])
    assert where(problems) == ["verifications[0]"]
    # Within the same second either order may have happened: not refused.
    tie = [decision(at="2026-11-30T11:00:00+00:00"), decision("rejected", at="2026-11-30T11:00:00+00:00")]
    assert history_problems(PROPOSED, tie, [{"by": "sam", "at": "2026-11-30T11:00:00+00:00"}]) == []
