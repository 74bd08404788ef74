"""Content fingerprints of saved tensors, for writes that no hook can see.

Writes through a NumPy view, DLPack or a custom kernel change memory without bumping
the version counter. With `verify_saved=True` each saved tensor gets a fingerprint at
save time that is compared when backward unpacks it. The fingerprint sums the raw bit
patterns (two differently weighted sums), so NaNs and -0.0 compare exactly; a change
that keeps both sums equal is possible in theory, not in practice for real writes.
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
            total = int(bits.sum(dtype=torch.int64))
            odd = int(bits[1::2].sum(dtype=torch.int64))
            return total, odd
    except Exception:
        return None
