"""elements_intersect decides overlap on the elements two strided views share, checked
against a brute-force enumeration on many random views of one storage."""

import itertools

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograd_doctor.recording.element_overlap import elements_intersect, layouts_intersect

STORAGE = 400


def positions(view) -> set[int]:
    """Every element's position in the storage, by brute force."""
    offset = view.storage_offset()
    return {offset + sum(i * s for i, s in zip(index, view.stride()))
            for index in itertools.product(*(range(n) for n in view.shape))}


@st.composite
def strided_views(draw, storage):
    dims = draw(st.integers(0, 4))
    sizes = [draw(st.integers(0, 5)) for _ in range(dims)]
    strides = [draw(st.integers(0, 30)) for _ in range(dims)]
    reach = sum(max(n - 1, 0) * s for n, s in zip(sizes, strides))
    offset = draw(st.integers(0, max(0, STORAGE - 1 - reach)))
    return storage.as_strided(sizes, strides, offset)


@settings(max_examples=600, deadline=None)
@given(st.data())
def test_matches_brute_force_on_random_strided_views(data):
    storage = torch.zeros(STORAGE)
    first = data.draw(strided_views(storage))
    second = data.draw(strided_views(storage))
    expected = bool(positions(first) & positions(second))
    assert elements_intersect(first, second) == expected
    assert elements_intersect(second, first) == expected


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_chunked_enumeration_matches_brute_force(data):
    # Small chunks exercise the loop over outer dimensions.
    from autograd_doctor.recording import element_overlap

    storage = torch.zeros(STORAGE)
    first = data.draw(strided_views(storage))
    second = data.draw(strided_views(storage))
    saved = element_overlap.CHUNK_ELEMENTS
    element_overlap.CHUNK_ELEMENTS = 3
    try:
        assert elements_intersect(first, second) == bool(positions(first) & positions(second))
    finally:
        element_overlap.CHUNK_ELEMENTS = saved


def test_solver_column_write_into_a_saved_slice():
    # A solver's stage buffer: the first i + 1 columns are saved, column i + 1 is written.
    k = torch.zeros(8, 2, 6)
    for i in range(5):
        assert not elements_intersect(k[..., :i + 1], k[..., i + 1])
        assert elements_intersect(k[..., :i + 2], k[..., i + 1])


def test_views_from_common_operations():
    x = torch.zeros(6, 8)
    assert not elements_intersect(x[:, ::2], x[:, 1::2])
    assert elements_intersect(x.t()[3], x[:, 3])
    assert not elements_intersect(x[0], x[1])
    assert elements_intersect(x[0].expand(4, 8), x[:, 7])
    assert not elements_intersect(x.unfold(1, 2, 2)[..., 0], x.unfold(1, 2, 2)[..., 1])
    assert not elements_intersect(x[:0], x)
    assert elements_intersect(x.view(-1)[10:12], x[1])


def test_large_views_are_exact_within_the_budget():
    x = torch.zeros(512, 2048)
    assert not elements_intersect(x[:, :1000], x[:, 1000])
    assert elements_intersect(x[:, :1001], x[:, 1000])


def test_past_the_budget_it_answers_maybe():
    assert layouts_intersect((0, [(100, 2)]), (1, [(100, 2)]), max_enumerated=1000) is False  # bounding/nested
    # Neither nested and too many to enumerate: it cannot tell, so "maybe".
    assert layouts_intersect((0, [(100, 3), (100, 2)]), (1, [(100, 3), (100, 2)]), max_enumerated=50) is True


def test_different_element_sizes_answer_maybe():
    x = torch.zeros(8)
    assert elements_intersect(x[:4], x.view(torch.int16)[12:])
