"""Copy the autograd graph around a failure into plain data (`diagnosis.graph_data`).

`snapshot_failure()` runs inside the failing backward() and copies what a picture needs
(names, versions, shapes, Locations) into a `GraphSnapshot`. It keeps no tensor and no
autograd node, so a stored diagnosis does not keep the user's graph alive.
`report.graph` draws the snapshot.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from typing import Any

from autograd_doctor import compat
from autograd_doctor.analysis.naming import parameter_path, user_frames
from autograd_doctor.diagnosis.graph_data import GraphSnapshot, NodeInfo, SavedSlotInfo, WriteInfo
from autograd_doctor.diagnosis.model import Location
from autograd_doctor.diagnosis.source import location_of
from autograd_doctor.recording.frames import frame_locals

# How far the snapshot walks from the failing node, and how much it keeps at most.
INPUT_DEPTH = 8
CONSUMER_DEPTH = 6
MAX_SNAPSHOT_NODES = 400
# Nodes visited when searching from the backward() root for the failing node.
MAX_ROOT_WALK = 20000


# ---- capture (runs inside backward; must not keep torch objects) ---------------------

def _node_name(node) -> str:
    try:
        name = str(node.name())
    except Exception:
        name = type(node).__name__
    return name.rsplit("::", 1)[-1]  # torch::autograd::AccumulateGrad -> AccumulateGrad


def _tensor_key(tensor) -> tuple | None:
    try:
        return (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape),
                tuple(tensor.stride()))
    except Exception:
        return None


def _user_names() -> tuple[dict[tuple, str], list]:
    """Tensors the user's frames name, keyed by memory and layout; and those frames."""
    import torch

    frames = user_frames(limit=12)
    names: dict[tuple, str] = {}
    for frame in frames:
        try:
            items = list(frame_locals(frame).items())
        except Exception:
            continue
        for name, value in items:
            if name.startswith("_") or not isinstance(value, torch.Tensor):
                continue
            key = _tensor_key(value)
            if key is not None and key not in names:
                names[key] = name
    return names, frames


def _location(site, role: str = "", note: str = "") -> Location | None:
    try:
        return location_of(site, role=role, note=note)
    except Exception:
        return None


def _slot_info(slot: str, record, names: dict[tuple, str], stale_record) -> SavedSlotInfo:
    alias = record.alias
    now = alias._version
    return SavedSlotInfo(
        slot=slot, name=names.get(_tensor_key(alias)), shape=list(alias.shape),
        dtype=str(alias.dtype).replace("torch.", ""), version_saved=record.version, version_now=now,
        stale=record is stale_record or now != record.version,
        save_site=_location(record.site, role="saved", note="saved here"),
    )


def _raw_slot_infos(node, known: set[str], names: dict[tuple, str], stale_record=None) -> list[SavedSlotInfo]:
    """Saved tensors that we did not pack (saved before the doctor started, or in light
    mode, which packs nothing: there the stale one is recognised by its memory)."""
    import torch

    stale_key = _tensor_key(stale_record.alias) if stale_record is not None else None
    found = []
    for attribute in dir(node):
        if not attribute.startswith("_raw_saved_"):
            continue
        slot = attribute[len("_raw_saved_"):]
        if slot in known:
            continue
        try:
            raw = getattr(node, attribute)
            tensor = raw.data if hasattr(raw, "data") else None
        except Exception:
            continue
        if not isinstance(tensor, torch.Tensor):
            continue
        info = SavedSlotInfo(
            slot=slot, name=names.get(_tensor_key(tensor)), shape=list(tensor.shape),
            dtype=str(tensor.dtype).replace("torch.", ""), version_saved=None, version_now=tensor._version)
        if stale_key is not None and _tensor_key(tensor) == stale_key and tensor._version != stale_record.version:
            info.version_saved, info.stale = stale_record.version, True
        found.append(info)
    return found


def _writes_of(record) -> list[WriteInfo]:
    writes = []
    for event in list(getattr(record, "writes", ()))[:3]:
        label = f"modified here: version {event.version_before} -> {event.version_after}"
        writes.append(WriteInfo(op=event.op, location=_location(event.site, role="modified", note=label),
                                version_before=event.version_before, version_after=event.version_after))
    return writes


def _backward_roots() -> list:
    """grad_fns of the tensors backward() started from, read from torch's own frame."""
    if compat.lookup("torch.autograd.graph._engine_run_backward") is None:
        return []  # renamed in this torch: the frame to read is not known
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_engine_run_backward" and code.co_filename.endswith(os.path.join("autograd", "graph.py")):
            outputs = frame_locals(frame).get("t_outputs") or ()
            roots = []
            for tensor in outputs:
                grad_fn = getattr(tensor, "grad_fn", None)
                if grad_fn is not None:
                    roots.append(grad_fn)
            return roots
        frame = frame.f_back
    return []


def _inputs_of(node) -> list:
    try:
        return [child for child, _ in node.next_functions if child is not None]
    except Exception:
        return []


def snapshot_failure(node, record, recorder) -> GraphSnapshot:
    """Copy the graph around the failing `node` into plain data.

    Called by the doctor when backward() finds a stale saved tensor; `record` is that
    tensor's SavedRecord (full mode) or ProbedSave (light mode): see diagnose.ModifiedSave.
    Walks toward the inputs from `node` and, when the backward() call can be found on the
    stack, toward the root (the loss).

    Example::

        >>> import torch, autograd_doctor
        >>> x = torch.ones(3, requires_grad=True)
        >>> with autograd_doctor.watch():
        ...     y = torch.sigmoid(x)
        ...     y[0] = 0.0
        ...     try:
        ...         y.sum().backward()
        ...     except RuntimeError as error:
        ...         snapshot = autograd_doctor.diagnoses_of(error)[0].graph_data
        >>> snapshot.node(snapshot.failing_id).name
        'SigmoidBackward0'
    """
    names, frames = _user_names()
    if node is None:
        return _stand_in_snapshot(record, names)
    builder = _SnapshotBuilder(record, recorder, names, frames)
    try:
        return builder.build(node, _backward_roots())
    finally:
        builder.release()


def _stand_in_snapshot(record, names: dict[tuple, str]) -> GraphSnapshot:
    """No node: one stand-in for the tensor's saver, so the picture still shows the facts."""
    stand_in = NodeInfo(id="n0", name="(the node that saved it)", distance=0, failing=True)
    stand_in.saved.append(_slot_info("saved", record, names, record))
    stand_in.writes["saved"] = _writes_of(record)
    return GraphSnapshot(nodes=[stand_in], failing_id="n0", stale_slot="saved")


class _SnapshotBuilder:
    """The walk of one snapshot. It holds torch nodes only while it runs (`release()`), for
    stable ids; what it builds holds none."""

    def __init__(self, record, recorder, names: dict[tuple, str], frames: list):
        self.record, self.recorder, self.names, self.frames = record, recorder, names, frames
        self.snapshot = GraphSnapshot()
        self.ids: dict[int, str] = {}
        self.infos: dict[int, NodeInfo] = {}
        self.keep_alive: list = []  # torch nodes, only for the duration of the walk (stable ids)
        self.torch_nodes: dict[str, Any] = {}
        self.edges: set[tuple[str, str]] = set()
        self.beyond = 0  # nodes known to exist beyond those captured

    def build(self, node, roots: list) -> GraphSnapshot:
        snapshot = self.snapshot
        failing = self.info_for(node, 0)
        failing.failing = True
        snapshot.failing_id = failing.id
        self.walk_inputs(node)
        self.walk_consumers(node, self.consumers_from(roots))
        root_ids = {id(root) for root in roots}
        for key, info in self.infos.items():
            info.root = key in root_ids
        # Saved tensors: what each captured node holds, read without raising on stale slots.
        for info in snapshot.nodes:
            torch_node = self.torch_nodes.get(info.id)
            if torch_node is not None:
                self.describe_saved(torch_node, info, node)
        if snapshot.stale_slot is None:
            # The stale record was not found among the slots (e.g. a custom Function): still show it.
            failing.saved.append(_slot_info("saved", self.record, self.names, self.record))
            failing.writes["saved"] = _writes_of(self.record)
            snapshot.stale_slot = "saved"
        snapshot.edges = sorted(self.edges)
        snapshot.truncated = self.beyond
        return snapshot

    def release(self) -> None:
        self.keep_alive.clear()
        self.torch_nodes.clear()

    def info_for(self, torch_node, distance: int) -> NodeInfo | None:
        key = id(torch_node)
        if key in self.infos:
            found = self.infos[key]
            found.distance = min(found.distance, distance)
            return found
        if len(self.infos) >= MAX_SNAPSHOT_NODES:
            return None
        self.keep_alive.append(torch_node)
        self.ids[key] = f"n{len(self.ids)}"
        self.torch_nodes[self.ids[key]] = torch_node
        info = NodeInfo(id=self.ids[key], name=_node_name(torch_node), distance=distance)
        variable = getattr(torch_node, "variable", None) if info.name.endswith("AccumulateGrad") else None
        if variable is not None:
            info.leaf_name = parameter_path(variable, self.frames) or self.names.get(_tensor_key(variable))
            info.leaf_shape = list(variable.shape)
        self.infos[key] = info
        self.snapshot.nodes.append(info)
        return info

    def walk_inputs(self, node) -> None:
        """Breadth-first along next_functions, toward the leaves."""
        queue = deque([(node, 0)])
        while queue:
            current, depth = queue.popleft()
            for child in _inputs_of(current):
                known = id(child) in self.infos
                if not known and depth + 1 > INPUT_DEPTH:
                    self.beyond += 1
                    continue
                child_info = self.info_for(child, depth + 1)
                if child_info is None:
                    self.beyond += 1
                    self.snapshot.truncated_more = True
                    continue
                self.edges.add((self.ids[id(current)], child_info.id))
                if not known:
                    queue.append((child, depth + 1))

    def consumers_from(self, roots: list) -> dict[int, list]:
        """id of a node -> the nodes that consume its gradient, walking from backward()'s roots."""
        consumers: dict[int, list] = {}
        seen: set[int] = set()
        walk = deque(roots)
        visited = 0
        while walk and visited < MAX_ROOT_WALK:
            current = walk.popleft()
            if id(current) in seen:
                continue
            seen.add(id(current))
            self.keep_alive.append(current)
            visited += 1
            for child in _inputs_of(current):
                consumers.setdefault(id(child), []).append(current)
                if id(child) not in seen:
                    walk.append(child)
        if walk:
            self.snapshot.truncated_more = True
        return consumers

    def walk_consumers(self, node, consumers: dict[int, list]) -> None:
        """Breadth-first from the failing node toward the roots (the loss)."""
        queue = deque([(node, 0)])
        expanded: set[int] = set()
        while queue:
            current, depth = queue.popleft()
            if id(current) in expanded:
                continue
            expanded.add(id(current))
            for parent in consumers.get(id(current), ()):
                known = id(parent) in self.infos
                if not known and depth + 1 > CONSUMER_DEPTH:
                    self.beyond += 1
                    continue
                parent_info = self.info_for(parent, depth + 1)
                if parent_info is None:
                    self.beyond += 1
                    self.snapshot.truncated_more = True
                    continue
                self.edges.add((parent_info.id, self.ids[id(current)]))
                if not known:
                    queue.append((parent, depth + 1))

    def describe_saved(self, torch_node, info: NodeInfo, failing_node) -> None:
        record, names, snapshot = self.record, self.names, self.snapshot
        try:
            records = self.recorder.saved_records_of(torch_node)
        except Exception:
            records = {}
        for slot, saved in records.items():
            slot_info = _slot_info(slot, saved, names, record)
            info.saved.append(slot_info)
            if slot_info.stale:
                info.writes[slot] = _writes_of(saved)
            if saved is record:
                snapshot.stale_slot = slot
        try:
            raw = _raw_slot_infos(torch_node, set(records), names, record if torch_node is failing_node else None)
        except Exception:
            raw = []
        info.saved.extend(raw)
        for slot_info in raw:
            if slot_info.stale and snapshot.stale_slot is None:
                info.writes[slot_info.slot] = _writes_of(record)
                snapshot.stale_slot = slot_info.slot
