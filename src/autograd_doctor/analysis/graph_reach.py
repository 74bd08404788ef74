"""Whether a walk down an autograd graph from one node meets any of some other nodes.

Bounded: past `max_nodes` visited nodes the walk gives up and says no (unknown is treated as "not
reached" by every caller: they report only what a walk showed).
"""

from __future__ import annotations


def graph_reaches(start, targets, max_nodes: int) -> bool:
    """Whether `start` (a graph node, or None) or a node below it is in `targets` (a set of nodes)."""
    seen = set()
    queue = [start] if start is not None else []
    while queue and len(seen) < max_nodes:
        current = queue.pop()
        if current in targets:
            return True
        if current in seen:
            continue
        seen.add(current)
        queue.extend(child for child, _ in current.next_functions if child is not None)
    return False
