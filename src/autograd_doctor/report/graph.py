"""Pictures of the autograd graph around a failure: a plain-data snapshot, DOT text, SVG.

`snapshot_failure()` runs inside the failing backward() and copies what the picture
needs into plain objects (names, versions, shapes, Locations). It keeps no tensor
and no autograd node, so a stored diagnosis does not keep the user's graph alive.
`picture_for()` turns a diagnosis into a `GraphPicture`: DOT text always, SVG when
Graphviz is there (the system's `dot`, or the pygraphviz wheel: see render.py),
displayed inline in Jupyter.
"""

from __future__ import annotations

import os
import re
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from autograd_doctor import compat
from autograd_doctor.diagnosis.model import Diagnosis, Location
from autograd_doctor.report.render import GraphvizMissing, RenderFailed, dot_executable, render_with_dot

# How far the snapshot walks from the failing node, and how much it keeps at most.
INPUT_DEPTH = 8
CONSUMER_DEPTH = 6
MAX_SNAPSHOT_NODES = 400
# Nodes visited when searching from the backward() root for the failing node.
MAX_ROOT_WALK = 20000

STALE_COLOR = "#d62728"
STALE_FILL = "#fde0e0"


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
    from autograd_doctor.analysis.naming import user_frames

    import torch

    frames = user_frames(limit=12)
    names: dict[tuple, str] = {}
    for frame in frames:
        try:
            items = list(frame.f_locals.items())
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
    from autograd_doctor.diagnosis.source import location_of

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
            outputs = frame.f_locals.get("t_outputs") or ()
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
    tensor's SavedRecord. Walks toward the inputs from `node` and, when the backward()
    call can be found on the stack, toward the root (the loss).

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
    snapshot = GraphSnapshot()
    names, _frames = _user_names()
    if node is None:
        # No node: one stand-in for the tensor's saver, so the picture still shows the facts.
        stand_in = NodeInfo(id="n0", name="(the node that saved it)", distance=0, failing=True)
        stand_in.saved.append(_slot_info("saved", record, names, record))
        stand_in.writes["saved"] = _writes_of(record)
        snapshot.nodes.append(stand_in)
        snapshot.failing_id = "n0"
        snapshot.stale_slot = "saved"
        return snapshot

    ids: dict[int, str] = {}
    infos: dict[int, NodeInfo] = {}
    keep_alive: list = []  # torch nodes, only for the duration of this call (stable ids)
    torch_nodes: dict[str, Any] = {}

    def info_for(torch_node, distance: int) -> NodeInfo | None:
        key = id(torch_node)
        if key in infos:
            found = infos[key]
            found.distance = min(found.distance, distance)
            return found
        if len(infos) >= MAX_SNAPSHOT_NODES:
            return None
        keep_alive.append(torch_node)
        ids[key] = f"n{len(ids)}"
        torch_nodes[ids[key]] = torch_node
        info = NodeInfo(id=ids[key], name=_node_name(torch_node), distance=distance)
        variable = getattr(torch_node, "variable", None) if info.name.endswith("AccumulateGrad") else None
        if variable is not None:
            from autograd_doctor.analysis.naming import parameter_path

            info.leaf_name = parameter_path(variable, _frames) or names.get(_tensor_key(variable))
            info.leaf_shape = list(variable.shape)
        infos[key] = info
        snapshot.nodes.append(info)
        return info

    def describe_saved(torch_node, info: NodeInfo) -> None:
        try:
            records = recorder.saved_records_of(torch_node)
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
            raw = _raw_slot_infos(torch_node, set(records), names, record if torch_node is node else None)
        except Exception:
            raw = []
        info.saved.extend(raw)
        for slot_info in raw:
            if slot_info.stale and snapshot.stale_slot is None:
                info.writes[slot_info.slot] = _writes_of(record)
                snapshot.stale_slot = slot_info.slot

    edges: set[tuple[str, str]] = set()
    failing = info_for(node, 0)
    failing.failing = True
    snapshot.failing_id = failing.id

    # Inputs side: breadth-first along next_functions.
    queue = deque([(node, 0)])
    beyond = 0
    while queue:
        current, depth = queue.popleft()
        for child in _inputs_of(current):
            known = id(child) in infos
            if not known and depth + 1 > INPUT_DEPTH:
                beyond += 1
                continue
            child_info = info_for(child, depth + 1)
            if child_info is None:
                beyond += 1
                snapshot.truncated_more = True
                continue
            edges.add((ids[id(current)], child_info.id))
            if not known:
                queue.append((child, depth + 1))

    # Root side: find who consumes the failing node's gradient, starting from backward()'s roots.
    consumers: dict[int, list] = {}
    roots = _backward_roots()
    seen: set[int] = set()
    walk = deque(roots)
    visited = 0
    while walk and visited < MAX_ROOT_WALK:
        current = walk.popleft()
        if id(current) in seen:
            continue
        seen.add(id(current))
        keep_alive.append(current)
        visited += 1
        for child in _inputs_of(current):
            consumers.setdefault(id(child), []).append(current)
            if id(child) not in seen:
                walk.append(child)
    if walk:
        snapshot.truncated_more = True
    root_ids = {id(root) for root in roots}
    queue = deque([(node, 0)])
    expanded: set[int] = set()
    while queue:
        current, depth = queue.popleft()
        if id(current) in expanded:
            continue
        expanded.add(id(current))
        for parent in consumers.get(id(current), ()):
            known = id(parent) in infos
            if not known and depth + 1 > CONSUMER_DEPTH:
                beyond += 1
                continue
            parent_info = info_for(parent, depth + 1)
            if parent_info is None:
                beyond += 1
                snapshot.truncated_more = True
                continue
            edges.add((parent_info.id, ids[id(current)]))
            if not known:
                queue.append((parent, depth + 1))
    for key, info in infos.items():
        info.root = key in root_ids

    # Saved tensors: what each captured node holds, read without raising on stale slots.
    for info in snapshot.nodes:
        torch_node = torch_nodes.get(info.id)
        if torch_node is not None:
            describe_saved(torch_node, info)
    if snapshot.stale_slot is None:
        # The stale record was not found among the slots (e.g. a custom Function): still show it.
        slot_info = _slot_info("saved", record, names, record)
        failing.saved.append(slot_info)
        failing.writes["saved"] = _writes_of(record)
        snapshot.stale_slot = "saved"

    snapshot.edges = sorted(edges)
    snapshot.truncated = beyond
    keep_alive.clear()
    torch_nodes.clear()
    return snapshot


# ---- DOT ----------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def dot_quote(text: Any) -> str:
    """A DOT double-quoted string for any text: backslashes, quotes and newlines escaped.

    Example::

        >>> dot_quote('a "b"\\nc')
        '"a \\\\"b\\\\"\\\\nc"'
    """
    text = _CONTROL.sub("?", str(text).replace("\r\n", "\n").replace("\r", ""))
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\n", "\\n") + '"'


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where(location: Location | None) -> str:
    if location is None:
        return "unknown place"
    return f"{os.path.basename(location.file) or location.file}:{location.line}"


def _shape_text(dtype: str, shape: list[int]) -> str:
    return f"{dtype}{list(shape)}" if dtype else str(list(shape))


def _select(snapshot: GraphSnapshot, max_nodes: int) -> tuple[list[NodeInfo], int]:
    """The nodes to draw: the closest to the failure first; the rest are counted."""
    max_nodes = max(1, max_nodes)
    ordered = sorted(snapshot.nodes, key=lambda n: (not n.failing, n.distance, int(n.id[1:]) if n.id[1:].isdigit() else 0))
    shown = ordered[:max_nodes]
    return shown, len(ordered) - len(shown)


def to_dot(snapshot: GraphSnapshot, diagnosis: Diagnosis | None = None, max_nodes: int = 40) -> str:
    """DOT text for a snapshot; `diagnosis` supplies the user's name for the stale tensor.

    Example::

        >>> snapshot = GraphSnapshot(nodes=[NodeInfo(id="n0", name="SigmoidBackward0", distance=0,
        ...                                          failing=True)], failing_id="n0")
        >>> print(to_dot(snapshot).splitlines()[0])
        digraph autograd_doctor {
    """
    tensor_name = None
    if diagnosis is not None and diagnosis.tensor is not None:
        tensor_name = diagnosis.tensor.parameter or diagnosis.tensor.name
    save_site = _reported_save_site(diagnosis)
    shown, hidden = _select(snapshot, max_nodes)
    shown_ids = {node.id for node in shown}
    lines = [
        "digraph autograd_doctor {",
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, labelloc=t, '
        + f"label={dot_quote(_title(diagnosis))}];",
        '  node [fontname="Helvetica", fontsize=10, shape=box, style="rounded,filled", fillcolor="#f4f6f8", color="#7a8794"];',
        '  edge [fontname="Helvetica", fontsize=9, color="#7a8794"];',
    ]
    for node in shown:
        lines.extend(_node_lines(node, snapshot, tensor_name, save_site))
    cut_edges = 0
    for source, target in snapshot.edges:
        if source in shown_ids and target in shown_ids:
            lines.append(f"  {dot_quote(source)} -> {dot_quote(target)};")
        elif source in shown_ids or target in shown_ids:
            cut_edges += 1
    more = hidden + snapshot.truncated
    if more or snapshot.truncated_more:
        count = f"{more}{'+' if snapshot.truncated_more else ''}"
        lines.append(f"  more [label={dot_quote(f'… {count} more nodes')}, shape=plaintext, style=\"\"];")
        # Attach the summary to the farthest shown nodes that lost an edge.
        anchors = [node.id for node in shown if any(
            (node.id == s and t not in shown_ids) or (node.id == t and s not in shown_ids)
            for s, t in snapshot.edges)]
        for anchor in anchors[:3] or [shown[-1].id]:
            lines.append(f"  {dot_quote(anchor)} -> more [style=dotted, arrowhead=none];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _title(diagnosis: Diagnosis | None) -> str:
    if diagnosis is None:
        return "autograd graph around the failure"
    where = f" at {_where(diagnosis.primary)}" if diagnosis.primary is not None else ""
    return f"{diagnosis.code}: {diagnosis.title}{where}"


def _reported_save_site(diagnosis: Diagnosis | None) -> Location | None:
    """The save line the text report shows. The light mode's snapshot has none (it records no
    saves); a second run under the full mode adds it to the diagnosis, and the picture shows it too."""
    if diagnosis is None:
        return None
    return next((loc for loc in [diagnosis.primary, *diagnosis.related] if loc is not None and loc.role == "saved"),
                None)


def _node_lines(node: NodeInfo, snapshot: GraphSnapshot, tensor_name: str | None,
                reported_save_site: Location | None = None) -> list[str]:
    label = node.name
    if node.leaf_name or node.leaf_shape is not None:
        shape = str(node.leaf_shape) if node.leaf_shape is not None else ""
        label += "\nleaf " + " ".join(part for part in (node.leaf_name, shape) if part)
    if node.root:
        label += "\n(backward() started here)"
    attributes = [f"label={dot_quote(label)}"]
    if node.failing:
        attributes += [f'color="{STALE_COLOR}"', "penwidth=2.5", 'fillcolor="#fff4f4"']
        label_extra = "\nfailed: needs a saved tensor that changed"
        attributes[0] = f"label={dot_quote(label + label_extra)}"
    elif node.name.endswith("AccumulateGrad"):
        attributes += ['fillcolor="#e8f1fb"']
    lines = [f"  {dot_quote(node.id)} [{', '.join(attributes)}];"]
    draw_slots = node.failing or any(slot.stale for slot in node.saved)
    quiet = []
    for index, slot in enumerate(node.saved):
        if not draw_slots:
            quiet.append(f"{slot.slot}" + (f"={slot.name}" if slot.name else "") + f" {slot.version_text()}")
            continue
        slot_id = f"{node.id}_saved_{index}"
        name = slot.name
        is_the_stale = slot.stale and node.failing and slot.slot == snapshot.stale_slot
        if is_the_stale and tensor_name:
            name = tensor_name
        text = f"saved {slot.slot}" + (f": {name}" if name else "")
        text += f"\n{_shape_text(slot.dtype, slot.shape)}\n{slot.version_text()}"
        slot_attributes = [f"label={dot_quote(text)}", "shape=note"]
        if slot.stale:
            text += "\nSTALE"
            slot_attributes = [f"label={dot_quote(text)}", "shape=note", f'color="{STALE_COLOR}"',
                               f'fillcolor="{STALE_FILL}"', f'fontcolor="{STALE_COLOR}"', "penwidth=2"]
        else:
            slot_attributes.append('fillcolor="#ffffff"')
        lines.append(f"  {dot_quote(slot_id)} [{', '.join(slot_attributes)}];")
        lines.append(f"  {dot_quote(node.id)} -> {dot_quote(slot_id)} [style=dashed, arrowhead=none, label=\"saves\"];")
        site = slot.save_site
        if site is None and is_the_stale:
            site = reported_save_site
        if site is not None and slot.stale:
            site_id = f"{slot_id}_site"
            site_text = f"saved at {_where(site)}\n{_short(site.source)}"
            lines.append(f"  {dot_quote(site_id)} [label={dot_quote(site_text)}, shape=box, style=\"filled\", "
                         f"fillcolor=\"#ffffff\", color=\"#7a8794\"];")
            lines.append(f"  {dot_quote(site_id)} -> {dot_quote(slot_id)} [style=dashed, label=\"save\"];")
        for write_index, write in enumerate(node.writes.get(slot.slot, ()) if slot.stale else ()):
            write_id = f"{slot_id}_write_{write_index}"
            versions = f"version {write.version_before} -> {write.version_after}"
            source = _short(write.location.source) if write.location is not None else ""
            write_text = f"{write.op} at {_where(write.location)}\n{source}\n{versions}".replace("\n\n", "\n")
            lines.append(f"  {dot_quote(write_id)} [label={dot_quote(write_text)}, shape=box, style=\"filled,bold\", "
                         f"fillcolor=\"{STALE_FILL}\", color=\"{STALE_COLOR}\", fontcolor=\"{STALE_COLOR}\"];")
            lines.append(f"  {dot_quote(write_id)} -> {dot_quote(slot_id)} [color=\"{STALE_COLOR}\", "
                         f"fontcolor=\"{STALE_COLOR}\", label=\"wrote in place\"];")
    if quiet:
        quiet_label = label + "\nsaved: " + ", ".join(quiet)
        lines[0] = lines[0].replace(f"label={dot_quote(label)}", f"label={dot_quote(quiet_label)}", 1)
    return lines


def _fallback_snapshot(diagnosis: Diagnosis) -> GraphSnapshot:
    """A one-node picture from the diagnosis alone (no snapshot was taken)."""
    extra = diagnosis.extra or {}
    node = NodeInfo(id="n0", name=str(extra.get("node") or "(the node that saved it)"), distance=0, failing=True)
    tensor = diagnosis.tensor
    slot = str(extra.get("slot") or "saved")
    save_site = next((loc for loc in diagnosis.related if loc.role == "saved"), None)
    node.saved.append(SavedSlotInfo(
        slot=slot, name=(tensor.parameter or tensor.name) if tensor else None,
        shape=list(tensor.shape) if tensor else [], dtype=tensor.dtype if tensor else "",
        version_saved=extra.get("version_saved"), version_now=extra.get("version_found"),
        stale=True, save_site=save_site))
    if diagnosis.primary is not None and diagnosis.primary.role in ("modified", ""):
        node.writes[slot] = [WriteInfo(op=str(extra.get("op") or "in-place write"), location=diagnosis.primary,
                                       version_before=extra.get("version_saved"),
                                       version_after=extra.get("version_found"))]
    return GraphSnapshot(nodes=[node], failing_id="n0", stale_slot=slot)


# ---- SVG and the picture object ----------------------------------------------------------

def svg_body(svg: str) -> str:
    """SVG text without the XML declaration and DOCTYPE, ready to inline in HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


class GraphPicture:
    """A drawing of the graph around a failure.

    `.dot` is the DOT text; `.svg()` renders it with Graphviz; `.save(path)` writes by
    extension; in Jupyter the object shows itself inline.

    Example::

        >>> picture = GraphPicture("digraph { a -> b }")
        >>> picture.dot.startswith("digraph")
        True
    """

    def __init__(self, dot: str, snapshot: GraphSnapshot | None = None):
        self.dot = dot
        self.snapshot = snapshot
        self._svg: str | None = None

    def svg(self) -> str:
        """The SVG text (raises GraphvizMissing when neither `dot` nor pygraphviz is installed)."""
        if self._svg is None:
            self._svg = render_with_dot(self.dot, "svg").decode("utf-8")
        return self._svg

    def save(self, path: str) -> str:
        """Write `.dot`/`.gv` as DOT, `.svg`/`.png`/`.pdf` through Graphviz; returns the path written.

        Without Graphviz (or when it fails), a picture asked for as SVG is written as DOT
        next to it (`out.svg` -> `out.dot`), then GraphvizMissing (or RenderFailed) is raised.
        """
        root, extension = os.path.splitext(path)
        extension = extension.lower().lstrip(".")
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        if extension in ("svg", "png", "pdf"):
            try:
                data = render_with_dot(self.dot, extension)
            except (GraphvizMissing, RenderFailed) as problem:
                fallback = root + ".dot"
                with open(fallback, "w", encoding="utf-8") as stream:
                    stream.write(self.dot)
                problem.written = fallback
                raise
            with open(path, "wb") as stream:
                stream.write(data)
            return path
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(self.dot)
        return path

    def _repr_svg_(self) -> str | None:
        try:
            return svg_body(self.svg())
        except Exception:
            return None

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        bundle = {"text/plain": self.__repr__(), "text/vnd.graphviz": self.dot}
        svg = self._repr_svg_()
        if svg is not None:
            bundle["image/svg+xml"] = svg
        return bundle

    def __repr__(self) -> str:
        count = len(self.snapshot.nodes) if self.snapshot is not None else 0
        return f"<GraphPicture: {count} node(s); .dot for DOT text, .svg() for SVG, .save(path) to write>"


def picture_for(diagnosis: Diagnosis, max_nodes: int = 40) -> GraphPicture:
    """The picture of one diagnosis (what `Diagnosis.graph()` returns).

    Works from the snapshot taken at the failure; without one (e.g. a diagnosis read
    back from JSON or raised in strict mode) it draws the saved tensor, the save and
    the write from the diagnosis alone.

    Example::

        >>> import torch, autograd_doctor
        >>> x = torch.ones(3, requires_grad=True)
        >>> with autograd_doctor.watch():
        ...     y = torch.sigmoid(x)
        ...     y[0] = 0.0
        ...     try:
        ...         y.sum().backward()
        ...     except RuntimeError as error:
        ...         picture = autograd_doctor.diagnoses_of(error)[0].graph()
        >>> "SigmoidBackward0" in picture.dot
        True
    """
    snapshot = diagnosis.graph_data if isinstance(diagnosis.graph_data, GraphSnapshot) else None
    if snapshot is None:
        snapshot = _fallback_snapshot(diagnosis)
    return GraphPicture(to_dot(snapshot, diagnosis, max_nodes=max_nodes), snapshot)


__all__ = [
    "snapshot_failure", "picture_for", "to_dot", "dot_quote", "GraphPicture", "GraphSnapshot",
    "NodeInfo", "SavedSlotInfo", "WriteInfo", "GraphvizMissing", "dot_executable", "render_with_dot",
    "svg_body",
]
