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


def fingerprint(tensor) -> tuple[int, int] | None:
    """Two int64 sums of the tensor's bits, or None when it cannot be read as bits."""
    try:
        with torch.no_grad():
            flat = tensor.detach()
            if flat.is_complex():
                flat = torch.view_as_real(flat)
            flat = flat.reshape(-1)
            if flat.dtype == torch.bool:
                flat = flat.view(torch.uint8)
            integer_type = _INT_BY_SIZE.get(flat.element_size())
            if integer_type is None or flat.is_sparse or flat.device.type == "meta":
                return None
            bits = flat.view(integer_type)
            accumulate = torch.int64 if integer_type is torch.int64 else torch.int32
            total = int(bits.sum(dtype=accumulate))
            first_half = int(bits[: bits.numel() // 2].sum(dtype=accumulate))
            return total, first_half
    except Exception:
        return None


# Saved tensors up to this size get an exact copy before a write through an untracked
# alias first lands on them; larger ones are reported without the restore check.
MAX_COPY_BYTES = 64 << 20


def content_copy(tensor):
    """An exact copy of `tensor`'s values, to tell later whether a write was undone; None
    when it is too large or cannot be copied."""
    try:
        if tensor.numel() * tensor.element_size() > MAX_COPY_BYTES or tensor.is_sparse:
            return None
        with torch.no_grad():
            return tensor.detach().clone()
    except Exception:
        return None


def same_content(tensor, copy) -> bool:
    """Bit for bit the values of `copy` (NaNs and -0.0 compare exactly)."""
    try:
        with torch.no_grad():
            now = tensor.detach()
            if now.shape != copy.shape or now.dtype != copy.dtype:
                return False
            if now.is_complex():
                now, copy = torch.view_as_real(now), torch.view_as_real(copy)
            integer_type = _INT_BY_SIZE.get(now.element_size())
            if now.dtype == torch.bool or integer_type is None:
                return bool(torch.equal(now, copy))
            return bool(torch.equal(now.contiguous().view(integer_type), copy.contiguous().view(integer_type)))
    except Exception:
        return False
