"""The graph around a failure, as plain data: what a graph picture shows.

`analysis.graph_snapshot.snapshot_failure()` fills these inside the failing backward();
`report.graph` draws them. They hold names, versions, shapes and Locations, never a
tensor or an autograd node, so a stored diagnosis does not keep the user's graph alive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autograd_doctor.diagnosis.model import Location


@dataclass
class SavedSlotInfo:
    """One tensor a backward node saved, as plain facts."""

    slot: str
    name: str | None = None
    shape: list[int] = field(default_factory=list)
    dtype: str = ""
    version_saved: int | None = None
    version_now: int | None = None
    stale: bool = False
    save_site: Location | None = None

    def version_text(self) -> str:
        if self.version_saved is None:
            return "version unknown"
        if self.version_now is None or self.version_now == self.version_saved:
            return f"v{self.version_saved}"
        return f"saved v{self.version_saved}, now v{self.version_now}"


@dataclass
class WriteInfo:
    """The in-place write that bumped a saved tensor's version."""

    op: str
    location: Location | None
    version_before: int | None
    version_after: int | None


@dataclass
class NodeInfo:
    """A backward node (or a leaf's AccumulateGrad) in the snapshot."""

    id: str
    name: str
    distance: int  # hops from the failing node, either direction
    failing: bool = False
    root: bool = False
    leaf_name: str | None = None  # for AccumulateGrad: the parameter or variable it fills
    leaf_shape: list[int] | None = None
    saved: list[SavedSlotInfo] = field(default_factory=list)
    writes: dict[str, list[WriteInfo]] = field(default_factory=dict)  # slot -> writes


@dataclass
class GraphSnapshot:
    """The neighbourhood of the failing node, with no reference to torch objects.

    `edges` go from a node to the node that computes its input's gradient next
    (autograd's `next_functions` direction: from the loss toward the leaves).
    """

    nodes: list[NodeInfo] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    failing_id: str | None = None
    stale_slot: str | None = None
    truncated: int = 0  # nodes known to exist beyond the captured ones
    truncated_more: bool = False  # the walk stopped before counting everything

    def node(self, node_id: str) -> NodeInfo | None:
        for node in self.nodes:
            if node.id == node_id:
                return node
        return None
