"""ADL025: an in-place write to the output of a module with a full backward hook.

The buggy programs are the four re-creations (r332, r362, r369, r371) and two
fresh programs (tests/lint/adl025_programs/, written before the rule was run on
them): each really raises PyTorch's "is a view and is being modified inplace"
error, and the rule reports exactly the line marked `# expect: ADL025`.  The
correct forms run and are silent; the unsafe fix, applied, gives a program that
runs and computes what a hand-written non-in-place version computes."""

from __future__ import annotations

import importlib.util
import re
import textwrap
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection, lint_file
from autograd_doctor.lint.fixes import fix_source

HERE = Path(__file__).parent
BUGGY = [HERE / "recreations" / name for name in (
    "r332_full_backward_hooks_with_in_place_relu.py",
    "r362_densenet_features_hook_then_functional_inplace_relu.py",
    "r369_yolov5_gradcam_hook_with_inplace_activations.py",
    "r371_naslib_hooks_on_cell_ops_with_inplace_relu.py",
)] + sorted((HERE / "adl025_programs").glob("*.py"))
EXPECT = re.compile(r"#\s*expect:\s*ADL025")
ADL025 = Selection(("ADL025",))
# the programs' inputs need no gradient: torch says the hooks then fire for the outputs only
pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing")


def load_source(source: str, name: str = "case"):
    namespace: dict = {"__name__": name}
    exec(compile(source, f"{name}.py", "exec"), namespace)
    return namespace


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def marked_lines(text: str) -> set[int]:
    return {n for n, line in enumerate(text.splitlines(), 1) if EXPECT.search(line)}


def adl025_lines(source: str) -> set[int]:
    return {f.line for f in lint_source(source, "case.py", ADL025)}


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_buggy_program_raises_and_is_found_at_the_marked_line(path):
    findings, _ = lint_file(str(path))
    assert {f.line for f in findings if f.code == "ADL025"} == marked_lines(path.read_text(encoding="utf-8"))
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        load(path).run()


def test_the_message_names_the_hook_registration():
    path = HERE / "recreations" / "r362_densenet_features_hook_then_functional_inplace_relu.py"
    (finding,) = [f for f in lint_file(str(path))[0] if f.code == "ADL025"]
    assert "`self.features`" in finding.message and "registered at line 39" in finding.message
    assert finding.related[0][0] == 39


# A full backward *pre* hook wraps the outputs too (torch's `_call_impl` sets up
# `BackwardHook` for either), so it fails the same way.
PRE_HOOK = """
import torch
import torch.nn as nn


def run():
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))  # expect: ADL025
    for m in model.modules():
        if isinstance(m, nn.Linear):
            m.register_full_backward_pre_hook(lambda module, grad_output: None)
    model(torch.rand(2, 3)).sum().backward()
"""


def test_full_backward_pre_hook_is_found_and_raises():
    assert adl025_lines(PRE_HOOK) == marked_lines(PRE_HOOK)
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        load_source(PRE_HOOK)["run"]()


# `model[0]` of a `model = nn.Sequential(...)`: the element after it writes its output
INDEXED = """
import torch
import torch.nn as nn


def run():
    layers = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True), nn.Linear(3, 1))  # expect: ADL025
    layers[0].register_full_backward_hook(lambda module, gi, go: None)
    layers(torch.rand(2, 3)).sum().backward()
"""


def test_indexed_element_of_a_sequential_is_found_and_raises():
    assert adl025_lines(INDEXED) == marked_lines(INDEXED)
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        load_source(INDEXED)["run"]()


def test_a_hooked_inplace_layer_writes_its_own_wrapped_input():
    """A full backward hook wraps the module's inputs as well: hooking the in-place
    ReLU itself fails the same way."""
    source = INDEXED.replace("layers[0]", "layers[1]")
    assert adl025_lines(source) == marked_lines(source)
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        load_source(source)["run"]()


CORRECT = {
    # the hooked element is the last layer: nothing writes its output or its input
    "indexed_element_not_written": INDEXED.replace("layers[0]", "layers[2]").replace("  # expect: ADL025", ""),
    # nothing writes the hooked layer's output in place
    "not_in_place": """
import torch
import torch.nn as nn


def run():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten())
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            m.register_full_backward_hook(lambda module, gi, go: None)
    model(torch.rand(1, 1, 4, 4)).sum().backward()
""",
    # the in-place layer follows a layer of a kind that is not hooked
    "other_kind_hooked": """
import torch
import torch.nn as nn


def run():
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True), nn.Linear(3, 1))
    model[2].register_full_backward_hook(lambda module, gi, go: None)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            m.register_full_backward_hook(lambda module, gi, go: None)
    model(torch.rand(2, 3)).sum().backward()
""",
    # `inplace=False` on the activation after the hooked attribute
    "inplace_false": """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(3, 3)

    def forward(self, x):
        return F.relu(self.features(x), inplace=False).sum()


def run():
    model = Net()
    model.features.register_full_backward_hook(lambda module, gi, go: None)
    model(torch.rand(2, 3)).backward()
""",
    # the old `register_backward_hook` does not wrap the outputs
    "old_backward_hook": """
import warnings
import torch
import torch.nn as nn


def run():
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))
    model[0].register_backward_hook(lambda module, gi, go: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model(torch.rand(2, 3)).sum().backward()
""",
    # the hooked output is re-bound before the in-place write
    "rebound_before_write": """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 3)

    def forward(self, x):
        h = self.encoder(x)
        h = h * 2
        h += 1
        return h.sum()


def run():
    model = Net()
    model.encoder.register_full_backward_hook(lambda module, gi, go: None)
    model(torch.rand(2, 3)).backward()
""",
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_form_is_silent_and_runs(name):
    assert adl025_lines(CORRECT[name]) == set()
    load_source(CORRECT[name])["run"]()


def test_a_hook_chosen_by_name_is_unknown_and_silent():
    """`if name == target:` picks one module whose kind the file does not say: silent,
    not every module taken as hooked."""
    source = """
import torch.nn as nn


def attach(model, target, hook):
    for name, m in model.named_modules():
        if name == target:
            m.register_full_backward_hook(hook)


model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))
"""
    assert adl025_lines(source) == set()
    narrowed = source.replace("if name == target:", "if isinstance(m, nn.Linear) and name == target:")
    assert "isinstance" in narrowed and adl025_lines(narrowed) == set()
    by_kind = source.replace("if name == target:", "if isinstance(m, nn.Linear):")
    assert adl025_lines(by_kind) == {11}


FIXABLE = """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.conv(x))


def grads(x):
    torch.manual_seed(0)
    block = Block()
    seen = []
    block.conv.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].clone()))
    out = block(x)
    out.sum().backward()
    return out.detach(), block.conv.weight.grad, seen[0]
"""


def test_unsafe_fix_makes_the_program_run_and_equal_to_a_reference():
    source = textwrap.dedent(FIXABLE)
    findings = lint_source(source, "case.py", ADL025)
    assert [f.fix.applicability for f in findings] == ["unsafe"]
    text, count = fix_source(source, lambda t: lint_source(t, "case.py", ADL025), unsafe=True)
    assert count == 1 and "nn.ReLU(inplace=False)" in text
    assert adl025_lines(text) == set()
    x = torch.rand(1, 2, 4, 4)
    out, weight_grad, hooked_grad = load_source(text)["grads"](x)
    # the reference: the same block written out of place by hand, no hook
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(2, 2, 3, padding=1)
    reference = torch.relu(conv(x))
    reference.sum().backward()
    assert torch.equal(out, reference.detach())
    assert torch.equal(weight_grad, conv.weight.grad)
    assert torch.equal(hooked_grad, (reference > 0).to(x.dtype))


def test_statement_call_gets_no_fix():
    """`self.act(h)` as a statement: its only effect is the write, so `inplace=False`
    would make it dead code; the finding stays, with no fix."""
    source = textwrap.dedent("""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = nn.Linear(3, 3)
                self.act = nn.ReLU(inplace=True)

            def forward(self, x):
                h = self.encoder(x)
                self.act(h)
                return h


        model = Net()
        model.encoder.register_full_backward_hook(print)
    """)
    (finding,) = lint_source(source, "case.py", ADL025)
    assert finding.fix is None
