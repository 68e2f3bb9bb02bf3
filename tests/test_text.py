"""The shared name shortlist of messages and legends."""

from timingbench.text import shortlist


def test_shortlist_counts_what_it_leaves_out() -> None:
    assert shortlist(["a", "b", "c"], most=2) == "a, b ... and 1 more"
    assert shortlist(["a", "b"], most=2) == "a, b"
    assert shortlist([], most=2) == "none"
    assert shortlist([1, 2, 3], most=1, sep="; ") == "1 ... and 2 more"


def test_shortlist_shows_at_least_one_name() -> None:
    assert shortlist(["a", "b"], most=0) == "a ... and 1 more"
