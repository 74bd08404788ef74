"""Content fingerprints of saved tensors, for writes that no hook can see.

Writes through a NumPy view, DLPack or a custom kernel change memory without bumping
the version counter. With `verify_saved=True` each saved tensor gets a fingerprint at
save time that is compared when backward unpacks it. The fingerprint sums the raw bit
patterns as integers with wrap-around (the whole tensor, and its first half so that a
swap across the halves shows too), so NaNs and -0.0 compare exactly and any change to a
single element always changes it. Integer sums in the element's own width run at the
speed of a float sum.
"""

from __future__ import annotations

import torch

_INT_BY_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(tensor, max_elements: int | None = None) -> torch.Tensor | None:
    """The tensor's elements as a flat view of integers of the same width (its raw bit
    patterns), or None when it cannot be read that way or has more than `max_elements`."""
    flat = tensor.detach()
    if flat.is_complex():
        flat = torch.view_as_real(flat)
    flat = flat.reshape(-1)
    if flat.is_sparse or flat.device.type == "meta":
        return None
    if max_elements is not None and flat.numel() > max_elements:
        return None
    if flat.dtype == torch.bool:
        flat = flat.view(torch.uint8)
    integer_type = _INT_BY_SIZE.get(flat.element_size())
    return None if integer_type is None else flat.view(integer_type)


def fingerprint(tensor) -> tuple[int, int] | None:
    """Two int64 sums of the tensor's bits, or None when it cannot be read as bits."""
    try:
        with torch.no_grad():
            bits = _bits(tensor)
            if bits is None:
                return None
            accumulate = torch.int64 if bits.dtype is torch.int64 else torch.int32
            total = int(bits.sum(dtype=accumulate))
            first_half = int(bits[: bits.numel() // 2].sum(dtype=accumulate))
            return total, first_half
    except Exception:
        return None


# Saved tensors up to this many elements get a content fingerprint before a write through
# an untracked alias first lands on them; larger ones are reported without the restore check.
MAX_RESTORE_CHECK_ELEMENTS = 1 << 22


def content_before_write(tensor) -> tuple[int, int] | None:
    """A fingerprint of `tensor`'s values that holds no memory, to tell later whether a
    write was undone: the wrap-around sums of its bit patterns, plain and weighted by
    position (so a change to any one element, or two elements swapped, always shows).
    None when it is too large or cannot be read as bits."""
    try:
        with torch.no_grad():
            bits = _bits(tensor, MAX_RESTORE_CHECK_ELEMENTS)
            if bits is None:
                return None
            bits = bits.to(torch.int64)
            weights = torch.arange(1, bits.numel() + 1, dtype=torch.int64, device=bits.device)
            return int(bits.sum()), int((bits * weights).sum())
    except Exception:
        return None
