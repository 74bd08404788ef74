"""Do two strided views of one storage share an element?

Byte ranges are not enough: `k[..., :i + 1]` and `k[..., i + 1]` interleave in memory
but share no element (a solver that writes column i + 1 of a buffer whose first columns
a matmul saved). This decides on the elements themselves, from sizes, strides and
storage offsets:

1. a bounding check on the element ranges (cheap, usually decides);
2. an exact check: enumerate the elements of one view (in bounded chunks) and test each
   against the other view's layout. When that layout is *nested* (sorted by stride, every
   stride is larger than the farthest reach of the smaller ones: true of every view that
   slicing, indexing, transposing, `unfold` without overlap and `expand` produce), an
   element's position decomposes greedily, dimension by dimension, in one vectorised
   pass. Otherwise both views are enumerated and intersected, when they are small enough.

Past the enumeration budget, or for two views of different element sizes (`view(dtype)`),
it cannot tell and answers what the caller passed as `unknown`: True where the answer
only drops alarms the byte ranges raised, False where a yes would raise one.

Example::

    >>> import torch
    >>> k = torch.zeros(4, 6)
    >>> elements_intersect(k[:, :3], k[:, 3])
    False
    >>> elements_intersect(k[:, :3], k[1:, 2])
    True
"""

from __future__ import annotations

import itertools

import torch

# Elements enumerated per chunk, and in all, before the answer falls back to "maybe".
CHUNK_ELEMENTS = 1 << 18
MAX_ENUMERATED = 1 << 24


def _layout(tensor) -> tuple[int, list[tuple[int, int]]]:
    """(storage offset, [(size, stride)] by decreasing stride), in elements, with the
    dimensions that do not change which elements are covered dropped (size 1, stride 0)
    and contiguous neighbours merged."""
    dims = sorted(((size, stride) for size, stride in zip(tensor.shape, tensor.stride()) if size > 1 and stride != 0),
                  key=lambda pair: pair[1], reverse=True)
    merged: list[tuple[int, int]] = []
    for size, stride in dims:
        if merged and merged[-1][1] == size * stride:
            outer_size, _ = merged.pop()
            merged.append((outer_size * size, stride))
        else:
            merged.append((size, stride))
    return tensor.storage_offset(), merged


def _span(offset: int, dims: list[tuple[int, int]]) -> tuple[int, int]:
    """[first, last] element positions the layout reaches."""
    return offset, offset + sum((size - 1) * stride for size, stride in dims)


def _is_nested(dims: list[tuple[int, int]]) -> bool:
    """Every stride exceeds what the smaller dimensions can reach: positions decompose uniquely."""
    reach = 0
    for size, stride in reversed(dims):
        if stride <= reach:
            return False
        reach += (size - 1) * stride
    return True


def _positions(offset: int, dims: list[tuple[int, int]]):
    """The element positions of a layout, in chunks of at most about CHUNK_ELEMENTS."""
    inner = 1
    split = len(dims)
    while split > 0 and inner * dims[split - 1][0] <= CHUNK_ELEMENTS:
        split -= 1
        inner *= dims[split][0]
    inner_positions = torch.zeros((), dtype=torch.int64)
    for size, stride in dims[split:]:
        inner_positions = inner_positions.unsqueeze(-1) + torch.arange(size, dtype=torch.int64) * stride
    inner_positions = inner_positions.reshape(-1)
    outer = dims[:split]
    for index in itertools.product(*(range(size) for size, _ in outer)):
        yield inner_positions + (offset + sum(i * stride for i, (_, stride) in zip(index, outer)))


def _members(positions: torch.Tensor, offset: int, dims: list[tuple[int, int]]) -> torch.Tensor:
    """Which `positions` belong to a nested layout: greedy decomposition by stride."""
    rest = positions - offset
    for size, stride in dims:
        rest = rest - torch.clamp(torch.div(rest, stride, rounding_mode="floor"), 0, size - 1) * stride
    return rest == 0


def _count(dims: list[tuple[int, int]]) -> int:
    count = 1
    for size, _ in dims:
        count *= size
    return count


def layouts_intersect(first: tuple[int, list], second: tuple[int, list], max_enumerated: int = MAX_ENUMERATED,
                      unknown: bool = True) -> bool:
    """Do two layouts (offset, [(size, stride)] by decreasing stride, in elements of one
    size) share a position? `unknown` when it cannot tell within `max_enumerated`."""
    first_low, first_high = _span(*first)
    second_low, second_high = _span(*second)
    if first_high < second_low or second_high < first_low:
        return False
    if first == second:
        return True
    # Enumerate the smaller view that has a nested partner; test against the partner.
    candidates = [(enumerated, tested) for enumerated, tested in ((first, second), (second, first))
                  if _is_nested(tested[1])]
    candidates.sort(key=lambda pair: _count(pair[0][1]))
    if candidates:
        enumerated, tested = candidates[0]
        if _count(enumerated[1]) > max_enumerated:
            return unknown
        low, high = _span(*tested)
        for chunk in _positions(*enumerated):
            chunk = chunk[(chunk >= low) & (chunk <= high)]
            if chunk.numel() and bool(_members(chunk, *tested).any()):
                return True
        return False
    # Neither layout is nested (as_strided with overlapping strides): both, if small.
    if _count(first[1]) > max_enumerated or _count(second[1]) > max_enumerated:
        return unknown
    first_positions = torch.cat(list(_positions(*first)))
    second_positions = torch.cat(list(_positions(*second)))
    return bool(torch.isin(first_positions, second_positions).any())


def elements_intersect(first, second, max_enumerated: int = MAX_ENUMERATED, unknown: bool = True) -> bool:
    """Do two tensors on one storage share at least one element? `unknown` when it
    cannot tell (different element sizes, or more than `max_enumerated` elements)."""
    if first.numel() == 0 or second.numel() == 0:
        return False
    if first.element_size() != second.element_size():
        return unknown
    with torch.no_grad():
        return layouts_intersect(_layout(first), _layout(second), max_enumerated, unknown)
