"""Pictures of the autograd graph around a failure: DOT text and SVG.

`analysis.graph_snapshot.snapshot_failure()` captures the graph as plain data
(`diagnosis.graph_data.GraphSnapshot`) inside the failing backward(); this module draws it.
`picture_for()` turns a diagnosis into a `GraphPicture`: DOT text always, SVG when
Graphviz is there (the system's `dot`, or the pygraphviz wheel: see render.py),
displayed inline in Jupyter.
"""

from __future__ import annotations

import os
import re
from typing import Any

from autograd_doctor.diagnosis.graph_data import GraphSnapshot, NodeInfo, SavedSlotInfo, WriteInfo
from autograd_doctor.diagnosis.model import Diagnosis, Location
from autograd_doctor.report.render import GraphvizMissing, RenderFailed, dot_executable, render_with_dot

STALE_COLOR = "#d62728"
STALE_FILL = "#fde0e0"


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

    Works from the snapshot taken at the failure (or, in strict mode, before the engine
    runs); without one (e.g. a diagnosis read back from JSON) it draws the saved tensor, the save and
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
    "picture_for", "to_dot", "dot_quote", "GraphPicture", "GraphSnapshot",
    "NodeInfo", "SavedSlotInfo", "WriteInfo", "GraphvizMissing", "dot_executable", "render_with_dot",
    "svg_body",
]
