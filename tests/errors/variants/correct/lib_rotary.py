# helper module of rotary_halves_from_torch_chunk_rotated_in_place.py (a held-out variant)
import torch


def rotate(x, angle):
    """Rotary position embedding: rotate the pairs (first half, second half) of the features by
    `angle`."""
    first, second = torch.chunk(x, 2, dim=-1)
    cos, sin = angle.cos(), angle.sin()
    new_first = first * cos - second * sin
    second = second * cos + first * sin  # PRIMARY
    return torch.cat([new_first, second], dim=-1)
