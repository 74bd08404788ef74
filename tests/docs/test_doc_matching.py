"""The pieces of the docs' example checker: matching with `...`, normalising, updating."""

import doctest

import doc_examples
from doc_examples import matches, normalise, parse_options, select, updated


def test_a_gap_line_stands_for_any_lines_and_an_inline_ellipsis_for_any_text():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert matches(["RuntimeError: x ... y"], ["RuntimeError: x 1 2 3 y"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a", "...", "d"], ["a", "b", "c"])


def test_updating_keeps_the_abridged_lines_that_still_fit():
    expected = ["Traceback:", "  ...", "RuntimeError: bad ... here", "report 1", "help: old"]
    actual = ["Traceback:", "  frame 1", "  frame 2", "RuntimeError: bad thing here", "report 1", "= note: new",
              "help: new"]
    new = updated(expected, actual)
    assert new == ["Traceback:", "  ...", "RuntimeError: bad ... here", "report 1", "= note: new", "help: new"]
    assert matches(new, actual)
    assert updated(actual, actual) == actual


def test_options_and_selection():
    options = parse_options(' run="autograd-doctor run x.py" from="Error:" until="summary" input')
    assert options == {"run": "autograd-doctor run x.py", "from": "Error:", "until": "summary", "input": True}
    output = "noise\nError: a\nreport\nsummary line\nmore"
    assert select(output, options) == ["Error: a", "report"]
    assert select("[rank 0] a\n[rank 1] b", {"keep": r"^\[rank 1\]"}) == ["[rank 1] b"]


def test_normalise_examples():
    failures, _ = doctest.testmod(doc_examples, optionflags=doctest.ELLIPSIS)
    assert failures == 0
    assert normalise("/work/x/examples/a.py:3", ("/work/x",)) == "examples/a.py:3"
