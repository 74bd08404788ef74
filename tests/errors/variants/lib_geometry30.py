"""Geometry helpers for the arm model."""


def unit_direction(vector):
    """The direction of `vector` (a unit vector along its last dimension)."""
    return vector.data / vector.data.norm(dim=-1, keepdim=True)  # PRIMARY
