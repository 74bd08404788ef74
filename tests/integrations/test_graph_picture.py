"""The picture of a failure: snapshot (plain data), DOT text, SVG through Graphviz."""

from __future__ import annotations

import dataclasses
import gc
import os
import pickle
import subprocess
import weakref

import pytest
import torch

import autograd_doctor
from autograd_doctor.report.graph import (
    GraphPicture, GraphSnapshot, NodeInfo, dot_quote, picture_for, to_dot,
)
from autograd_doctor.report.render import renderer
from programs import PYTHON, artifact_path, line_of, BUGGY_PROGRAM

needs_dot = pytest.mark.skipif(renderer() is None,
                               reason="neither Graphviz `dot` nor pygraphviz is installed (make install brings pygraphviz)")


def failing_diagnosis(mode: str = "full"):
    """sigmoid saves its output; writing into it breaks backward (inputs: a product of two leaves).

    The full mode records each save (its site) and snapshots inside the failing backward()
    (so the path from the loss is there too); the light mode knows neither."""
    weights = torch.randn(3, requires_grad=True)
    inputs = torch.randn(3, requires_grad=True)
    with autograd_doctor.watch(mode=mode):
        product = weights * inputs
        scores = torch.sigmoid(product)
        loss = (scores * 2).exp().sum()
        scores[1] = 2.0
        try:
            loss.backward()
        except RuntimeError as error:
            return autograd_doctor.diagnoses_of(error)[0]
    raise AssertionError("backward did not fail")


def torch_objects_in(value, seen=None) -> list:
    """Every torch object reachable through the snapshot's plain fields."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, (str, int, float, bool, type(None))):
        return []
    if type(value).__module__.startswith("torch"):
        return [value]
    found = []
    if dataclasses.is_dataclass(value):
        for item in dataclasses.fields(value):
            found += torch_objects_in(getattr(value, item.name), seen)
    elif isinstance(value, dict):
        for key, item in value.items():
            found += torch_objects_in(key, seen) + torch_objects_in(item, seen)
    elif isinstance(value, (list, tuple, set)):
        for item in value:
            found += torch_objects_in(item, seen)
    else:
        found.append(value)  # anything else is unexpected in a snapshot
    return found


def test_snapshot_has_the_failing_node_its_stale_slot_and_the_write():
    diagnosis = failing_diagnosis()
    snapshot = diagnosis.graph_data
    assert isinstance(snapshot, GraphSnapshot)
    failing = snapshot.node(snapshot.failing_id)
    assert failing.name == "SigmoidBackward0" and failing.failing
    assert snapshot.stale_slot == "result"
    stale = [slot for slot in failing.saved if slot.stale]
    assert [(s.slot, s.name, s.version_saved, s.version_now, s.shape) for s in stale] == [("result", "scores", 0, 1, [3])]
    write = failing.writes["result"][0]
    assert write.location.source == "scores[1] = 2.0" and write.location.line > 0
    assert (write.version_before, write.version_after) == (0, 1)
    names = {node.name for node in snapshot.nodes}
    # Inputs side (toward the leaves) and root side (toward the loss) are both there.
    assert {"MulBackward0", "AccumulateGrad", "ExpBackward0", "SumBackward0"} <= names
    assert any(node.root and node.name == "SumBackward0" for node in snapshot.nodes)
    leaves = {node.leaf_name for node in snapshot.nodes if node.name == "AccumulateGrad"}
    assert leaves == {"weights", "inputs"}
    product = next(node for node in snapshot.nodes if node.name == "MulBackward0" and node.saved)
    assert {(slot.slot, slot.name) for slot in product.saved} == {("self", "weights"), ("other", "inputs")}


def test_light_mode_snapshot_marks_the_stale_slot_it_found_in_the_graph():
    diagnosis = failing_diagnosis(mode="light")
    snapshot = diagnosis.graph_data
    failing = snapshot.node(snapshot.failing_id)
    assert failing.name == "SigmoidBackward0" and snapshot.stale_slot == "result"
    assert [(s.slot, s.name, s.version_saved, s.version_now, s.stale) for s in failing.saved] == [
        ("result", "scores", 0, 1, True)]
    assert failing.writes["result"][0].location.source == "scores[1] = 2.0"
    assert "saved result: scores\\nfloat32[3]\\nsaved v0, now v1\\nSTALE" in diagnosis.graph().dot


class Probe:
    """Stored in a node's metadata: it lives exactly as long as the node."""


def test_snapshot_keeps_no_torch_object_and_does_not_keep_the_graph_alive():
    def run():
        leaf = torch.randn(3, requires_grad=True)
        probe = Probe()
        with autograd_doctor.watch():
            scores = torch.sigmoid(leaf)
            scores.grad_fn.metadata["probe"] = probe
            scores[0] = 0.0
            try:
                scores.sum().backward()
            except RuntimeError as error:
                diagnosis = autograd_doctor.diagnoses_of(error)[0]
        return diagnosis, weakref.ref(leaf), weakref.ref(probe)

    diagnosis, leaf_ref, node_ref = run()
    gc.collect()
    assert leaf_ref() is None and node_ref() is None
    assert torch_objects_in(diagnosis.graph_data) == []
    assert pickle.loads(pickle.dumps(diagnosis.graph_data)) == diagnosis.graph_data


def test_dot_text_shows_names_versions_write_and_save_with_the_stale_tensor_in_red():
    picture = failing_diagnosis().graph()
    dot = picture.dot
    assert dot.startswith("digraph autograd_doctor {")
    assert "SigmoidBackward0\\nfailed" in dot
    assert "saved result: scores\\nfloat32[3]\\nsaved v0, now v1\\nSTALE" in dot
    stale_line = next(line for line in dot.splitlines() if "STALE" in line)
    assert 'color="#d62728"' in stale_line
    assert "Tensor.__setitem__ at test_graph_picture.py:" in dot and "scores[1] = 2.0" in dot
    assert "saved at test_graph_picture.py:" in dot and "scores = torch.sigmoid(product)" in dot
    assert "leaf weights [3]" in dot and "backward() started here" in dot


def test_dot_quote_escapes_quotes_backslashes_newlines_and_control_characters():
    assert dot_quote('say "hi"') == '"say \\"hi\\""'
    assert dot_quote("a\\b") == '"a\\\\b"'
    assert dot_quote("one\ntwo\r") == '"one\\ntwo"'
    assert dot_quote("bell\x07") == '"bell?"'


@needs_dot
def test_dot_parses_labels_with_every_special_character():
    node = NodeInfo(id="n0", name='Weird"Backward\\0 <b>&{x}|y', distance=0, failing=True)
    picture = GraphPicture(to_dot(GraphSnapshot(nodes=[node], failing_id="n0")))
    svg = picture.svg()
    assert "Weird&quot;Backward\\0 &lt;b&gt;&amp;{x}|y" in svg or 'Weird"Backward\\0 &lt;b&gt;&amp;{x}|y' in svg


@needs_dot
def test_svg_renders_and_displays_inline():
    picture = failing_diagnosis().graph()
    svg = picture.svg()
    assert "<svg" in svg and "SigmoidBackward0" in svg and "#d62728" in svg
    assert picture._repr_svg_().startswith("<svg")
    bundle = picture._repr_mimebundle_()
    assert bundle["image/svg+xml"].startswith("<svg") and bundle["text/vnd.graphviz"] == picture.dot
    with open(artifact_path("graph.svg"), "w", encoding="utf-8") as stream:
        stream.write(svg)


def test_large_graph_is_collapsed_around_the_failure():
    leaf = torch.randn(4, requires_grad=True)
    with autograd_doctor.watch():
        hidden = leaf
        for _ in range(60):
            hidden = hidden * 1.01 + 0.1
        scores = torch.sigmoid(hidden)
        loss = scores
        for _ in range(60):
            loss = loss * 0.99 + 0.01
        scores[0] = 0.0
        with pytest.raises(RuntimeError) as caught:
            loss.sum().backward()
    diagnosis = autograd_doctor.diagnoses_of(caught.value)[0]
    picture = diagnosis.graph(max_nodes=12)
    node_lines = [line for line in picture.dot.splitlines()
                  if line.startswith('  "n') and "[" in line and "->" not in line and "_saved_" not in line]
    assert len(node_lines) <= 12
    assert "more nodes" in picture.dot
    assert "SigmoidBackward0" in picture.dot


def test_picture_without_a_snapshot_is_drawn_from_the_diagnosis():
    diagnosis = failing_diagnosis()
    diagnosis.graph_data = None
    dot = picture_for(diagnosis).dot
    assert "SigmoidBackward0" in dot and "scores" in dot and "scores[1] = 2.0" in dot


def run_cli(*args, cwd, env=None):
    return subprocess.run([PYTHON, "-m", "autograd_doctor", "run", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@needs_dot
def test_run_graph_svg_writes_svg(buggy_script, tmp_path):
    result = run_cli("--graph", "out.svg", buggy_script, cwd=tmp_path)
    assert result.returncode == 1
    svg = (tmp_path / "out.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "SigmoidBackward0" in svg and "scores[1] = 2.0" in svg
    assert "graph of the failure written to out.svg" in result.stderr


def test_run_graph_dot_writes_dot(buggy_script, tmp_path):
    result = run_cli("--graph", "out.dot", buggy_script, cwd=tmp_path)
    assert result.returncode == 1
    dot = (tmp_path / "out.dot").read_text()
    assert dot.startswith("digraph") and f"buggy.py:{line_of(BUGGY_PROGRAM, 'WRITE')}" in dot


def test_run_graph_svg_without_graphviz_writes_dot_and_says_so(buggy_script, tmp_path):
    # No /usr/bin (no `dot`), and the pygraphviz wheel is not to be used either.
    env = dict(os.environ, PATH=os.path.dirname(PYTHON), AUTOGRAD_DOCTOR_GRAPHVIZ="dot")
    result = run_cli("--graph", "out.svg", buggy_script, cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert not (tmp_path / "out.svg").exists()
    assert (tmp_path / "out.dot").read_text().startswith("digraph")
    message = [line for line in result.stderr.splitlines() if "Graphviz" in line]
    assert len(message) == 1 and "out.dot" in message[0]
