"""AD101/AD103: a saved tensor modified in place; the write, the save, the fix.

Every test runs in both modes: the light (default) mode names the write, the tensor and
the fix; only the full mode also names the line that saved the tensor.
"""

import os

import pytest
import torch

from helpers import apply_help, run_plain, run_program


@pytest.fixture(autouse=True, params=["light", "full"])
def doctor_mode(request, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_DOCTOR_MODE", request.param)
    return request.param


def full_mode() -> bool:
    return os.environ.get("AUTOGRAD_DOCTOR_MODE") == "full"


def assert_save_site(diagnosis, outcome):
    """The full mode names the save line; the light mode says it does not record saves."""
    roles = {loc.role: loc.line for loc in diagnosis.related}
    if diagnosis.mode == "full":  # asked for, or implied (capture="mode", strict)
        assert roles.get("saved") == outcome.line("SAVE")
    else:
        assert "saved" not in roles
        assert diagnosis.mode == "light"
        assert any('mode="full"' in note for note in diagnosis.notes)


def assert_located(outcome, code="AD101"):
    diagnosis = outcome.diagnosis
    assert isinstance(outcome.error, RuntimeError)
    assert "modified by an inplace operation" in str(outcome.error)
    assert diagnosis.code == code
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.primary.file == outcome.path
    roles = {loc.role: loc.line for loc in diagnosis.related}
    assert_save_site(diagnosis, outcome)
    assert roles.get("backward") == outcome.line("BACKWARD")
    # The report is attached to the user's exception as a note.
    assert any("AD101" in note or "AD103" in note for note in outcome.error.__notes__)
    return diagnosis


def test_index_assignment_after_sigmoid(tmp_path):
    source = """
        import torch
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = torch.sigmoid(x)  # SAVE
        b[1] = 2  # WRITE
        b.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert diagnosis.tensor.name == "b"
    assert diagnosis.tensor.shape == [3] and diagnosis.tensor.dtype == "float32"
    assert (diagnosis.tensor.version_saved, diagnosis.tensor.version_found) == (0, 1)
    assert diagnosis.extra["node"] == "SigmoidBackward0" and diagnosis.extra["slot"] == "result"
    assert diagnosis.help[0].replacement == "b = b.index_fill(0, torch.tensor([1]), 2.0)"
    namespace = run_plain(tmp_path, apply_help(outcome))
    s = torch.sigmoid(torch.tensor([1.0, 2.0, 3.0]))
    expected = s * (1 - s)
    expected[1] = 0.0
    assert torch.allclose(namespace["x"].grad, expected)


def test_clone_before_write_help_works(tmp_path):
    source = """
        import torch
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = torch.sigmoid(x)  # SAVE
        b[1] = 2  # WRITE
        b.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    clone_help = [i for i, h in enumerate(outcome.diagnosis.help) if "clone" in (h.replacement or "")]
    assert clone_help
    namespace = run_plain(tmp_path, apply_help(outcome, clone_help[0]))
    assert namespace["x"].grad is not None and namespace["x"].grad[1] == 0.0


def test_a_write_whose_value_reads_the_written_tensor_computes_the_value_before_the_copy(tmp_path):
    """`h[0][j] = layer(h[0][j])`: the layer saved the piece it read. A copy made before the statement
    would be read and written by it alike; the help computes the value first, then copies, then
    writes, and the changed program computes what a loop that stacks the rows computes."""
    source = """
        import torch
        torch.manual_seed(0)
        layer = torch.nn.Linear(2, 2)
        w = torch.randn(1, 3, 2, requires_grad=True)
        h = w * 2  # SAVE
        for j in range(3):
            h[0][j] = layer(h[0][j])  # WRITE
        h.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101" and diagnosis.primary.line == outcome.line("WRITE")
    clone_help = next(h for h in diagnosis.help if "clone" in (h.replacement or ""))
    assert clone_help.replacement == "new_h = layer(h[0][j])\nh = h.clone()\nh[0][j] = new_h"
    assert clone_help.location.line == outcome.line("WRITE")
    namespace = run_plain(tmp_path, apply_help(outcome, diagnosis.help.index(clone_help)))
    torch.manual_seed(0)
    layer = torch.nn.Linear(2, 2)
    w = torch.randn(1, 3, 2, requires_grad=True)
    torch.stack([layer(row) for row in (w * 2)[0]]).sum().backward()
    assert torch.equal(namespace["w"].grad, w.grad)
    assert torch.equal(namespace["layer"].weight.grad, layer.weight.grad)


def test_masked_assignment_suggests_where(tmp_path):
    source = """
        import torch
        x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
        y = torch.exp(x)  # SAVE
        mask = x < 0
        y[mask] = 0.0  # WRITE
        y.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert diagnosis.help[0].replacement == "y = torch.where(mask, 0.0, y)"
    namespace = run_plain(tmp_path, apply_help(outcome))
    x = torch.tensor([-1.0, 2.0, -3.0])
    assert torch.allclose(namespace["x"].grad, torch.where(x < 0, 0.0, torch.exp(x)))


def test_augmented_assignment_on_saved_output(tmp_path):
    source = """
        import torch
        x = torch.randn(4, requires_grad=True)
        residual = torch.randn(4)
        out = torch.tanh(x)  # SAVE
        out += residual  # WRITE
        out.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert diagnosis.tensor.name == "out"
    assert diagnosis.help[0].replacement == "out = out + residual"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert torch.allclose(namespace["x"].grad, 1 - torch.tanh(namespace["x"].detach()) ** 2)


def test_underscore_method_on_saved_input(tmp_path):
    source = """
        import torch
        w = torch.randn(3, requires_grad=True)
        h = torch.randn(3)
        s = 0.5
        y = w * h  # SAVE
        h.mul_(s)  # WRITE
        y.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert diagnosis.extra["node"] == "MulBackward0"
    assert diagnosis.extra["slot"] == "other"
    assert diagnosis.help[0].replacement == "h = h.mul(s)"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(namespace["w"].grad, namespace["y"].detach() / namespace["w"].detach()) or \
        torch.allclose(namespace["w"].grad, namespace["y"].detach() / namespace["w"].detach())


def test_inplace_relu_module_points_at_definition(tmp_path):
    source = """
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.act = nn.ReLU(inplace=True)  # DEFINE

            def forward(self, x):
                h = torch.sigmoid(self.fc(x))  # SAVE
                return self.act(h) + h  # WRITE

        torch.manual_seed(0)
        model = Block()
        out = model(torch.randn(2, 4))
        out.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == outcome.line("DEFINE")
    roles = {loc.role: loc.line for loc in diagnosis.related}
    assert roles["modified"] == outcome.line("WRITE")
    assert_save_site(diagnosis, outcome)
    assert diagnosis.help[0].replacement == "self.act = nn.ReLU(inplace=False)"
    assert any("ReLU" in note for note in diagnosis.notes)
    run_plain(tmp_path, apply_help(outcome))


def test_functional_inplace_relu(tmp_path):
    source = """
        import torch
        import torch.nn.functional as F
        x = torch.randn(5, requires_grad=True)
        y = torch.tanh(x)  # SAVE
        z = F.relu(y, inplace=True)  # WRITE
        (z * 2).sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert diagnosis.help[0].replacement == "z = F.relu(y, inplace=False)"
    run_plain(tmp_path, apply_help(outcome))


@pytest.mark.parametrize("view_expression,write", [
    ("a, b = h.chunk(2)", "a.mul_(2)"),
    ("a, b = h.unbind(0)", "a.zero_()"),
    ("a, b = h.split(1)", "a.add_(1)"),
    ("a = h.select(0, 1)", "a.fill_(3.0)"),
    ("a = h.narrow(1, 0, 2)", "a.mul_(0.5)"),
    ("a = h.t()", "a.add_(1)"),
])
def test_writes_through_views(tmp_path, view_expression, write):
    """h does not require grad but mul saves it for w's gradient; a view of h is written."""
    source = f"""
        import torch
        w = torch.randn(2, 3, requires_grad=True)
        h = torch.randn(2, 3)
        y = w * h  # SAVE
        {view_expression}
        {write}  # WRITE
        y.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert diagnosis.extra["node"] == "MulBackward0" and diagnosis.extra["slot"] == "other"
    fixed = apply_help(outcome)
    namespace = run_plain(tmp_path, fixed)
    assert torch.equal(namespace["w"].grad, namespace["h"])


def test_inplace_write_to_multi_output_view(tmp_path):
    source = """
        import torch
        x = torch.randn(4, 3, requires_grad=True)
        h = x * 2
        a, b = h.chunk(2)
        a.mul_(2)  # WRITE
        h.sum().backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD104"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.help[0].replacement == "a = a.mul(2)"
    run_plain(tmp_path, apply_help(outcome))


def test_an_inplace_chain_on_a_view_whose_result_is_used_is_written_out_of_place(tmp_path):
    """`gate = piece.sigmoid_().mul_(2)` on a chunk() piece: the writes only serve to compute `gate`
    (the piece is not read again), so the help writes the chain out of place."""
    source = """
        import torch
        x = torch.randn(4, 3, requires_grad=True)
        value, piece = (x * 2).chunk(2, dim=0)
        gate = piece.sigmoid_().mul_(2)  # WRITE
        (value * gate).sum().backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD104" and diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.help[0].replacement == "gate = piece.sigmoid().mul(2)"
    assert diagnosis.help[0].message.startswith("compute out of place: piece is not read again")
    namespace = run_plain(tmp_path, apply_help(outcome))
    x = namespace["x"].detach().requires_grad_()
    value, piece = (x * 2).chunk(2, dim=0)
    (value * (torch.sigmoid(piece) * 2)).sum().backward()
    assert torch.equal(namespace["x"].grad, x.grad)


def test_an_inplace_chain_on_a_view_read_again_gets_no_out_of_place_rewrite(tmp_path):
    """The piece is read after the write: writing out of place would change what that read sees,
    so no rewrite of the chain is offered."""
    source = """
        import torch
        x = torch.randn(4, 3, requires_grad=True)
        value, piece = (x * 2).chunk(2, dim=0)
        gate = piece.sigmoid_().mul_(2)  # WRITE
        (value * gate + piece).sum().backward()
    """
    outcome = run_program(tmp_path, source)
    assert outcome.diagnosis.code == "AD104"
    assert not any((h.replacement or "").startswith("gate = piece.sigmoid()") for h in outcome.diagnosis.help)


def test_a_loop_writing_into_the_rows_a_tensor_is_unbound_into_loops_over_indexed_views(tmp_path):
    # Iterating a tensor unbinds it; `row.mul_(s).add_(m)` is then refused. The change loops over
    # views made by indexing, which may be written in place, and computes what writing each row
    # back out of place computes.
    source = """
        import torch
        torch.manual_seed(0)
        image = torch.randn(2, 3, 4, requires_grad=True)
        scales, shifts = [0.5, 2.0, 3.0], [0.1, 0.2, 0.3]
        shown = image * 1.0
        for row, scale, shift in zip(shown[0], scales, shifts):  # LOOP
            row.mul_(scale).add_(shift)  # WRITE
        shown.sum().backward()
        result = [shown.detach(), image.grad]
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    # The line that made the views is the loop's header (stop 43); the write is named with it.
    assert diagnosis.code == "AD104" and diagnosis.primary.line == outcome.line("LOOP")
    assert [loc.line for loc in diagnosis.related if loc.role == "modified"] == [outcome.line("WRITE")]
    help_ = diagnosis.help[0]
    assert help_.message.startswith("loop over views made by indexing, not over the outputs of unbind")
    assert help_.location.line == outcome.line("LOOP")
    assert help_.replacement == (
        "for row, scale, shift in zip((shown[0][index] for index in range(len(shown[0]))), scales, shifts):  # LOOP\n"
        "    row.mul_(scale).add_(shift)  # WRITE")
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, outcome.source.replace(
        "for row, scale, shift in zip(shown[0], scales, shifts):  # LOOP\n    row.mul_(scale).add_(shift)  # WRITE",
        "for i, (scale, shift) in enumerate(zip(scales, shifts)):\n    shown[0][i] = shown[0][i].mul(scale).add(shift)"),
        "reference.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], reference["result"]))


def test_a_loop_over_unbind_with_a_dimension_loops_over_select(tmp_path):
    source = """
        import torch
        weights = torch.ones(3, 2, requires_grad=True)
        columns = weights * 2
        for column in columns.unbind(1):
            column.add_(1.0)  # WRITE
        columns.sum().backward()
        result = [columns.detach(), weights.grad]
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD104"
    assert diagnosis.help[0].replacement.startswith(
        "for column in (columns.select(1, index) for index in range(columns.shape[1])):")
    fixed = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(fixed["result"][0], torch.full((3, 2), 3.0))
    assert torch.equal(fixed["result"][1], torch.full((3, 2), 2.0))


def test_a_loop_over_a_list_of_unbound_rows_gets_no_loop_rewrite(tmp_path):
    # Indexing a tuple of unbind outputs gives the same outputs: rewriting that loop would not help.
    source = """
        import torch
        base = torch.ones(3, 2, requires_grad=True) * 2
        rows = base.unbind(0)
        for row in rows:
            row.add_(1.0)  # WRITE
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD104"
    assert not any(h.message.startswith("loop over views made by indexing") for h in diagnosis.help)


def test_optimizer_step_between_forward_and_backward(tmp_path):
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 2))
        D = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
        opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
        fake = G(torch.randn(8, 2))
        out = D(fake)  # SAVE
        d_loss = out.mean()
        d_loss.backward(retain_graph=True)
        opt_D.step()  # WRITE
        g_loss = -out.mean()
        g_loss.backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.extra["optimizer"] == "SGD"
    assert diagnosis.tensor.parameter == "D.2.weight"
    roles = {loc.role: loc.line for loc in diagnosis.related}
    assert_save_site(diagnosis, outcome)
    assert roles["backward"] == outcome.line("BACKWARD")
    assert "opt_D.step()" in diagnosis.help[0].message


def test_optimizer_help_applied_recompute_forward(tmp_path):
    """Following the help (step after the last backward) makes the program run."""
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        D = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
        opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
        out = D(torch.randn(8, 2))
        d_loss = out.mean()
        d_loss.backward(retain_graph=True)
        g_loss = -out.mean()
        g_loss.backward()
        opt_D.step()
    """
    run_plain(tmp_path, source)


def test_write_inside_loop_names_iteration(tmp_path):
    source = """
        import torch
        x = torch.randn(4, 3, requires_grad=True)
        h = torch.sigmoid(x)  # SAVE
        for i in range(4):
            if i == 2:
                h[i] = 0.0  # WRITE
        h.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert any("i = 2" in note for note in diagnosis.notes)
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["x"].grad[2].abs().sum() == 0


def test_out_argument_seen_with_mode_capture(tmp_path):
    source = """
        import torch
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)  # SAVE
        a = torch.ones(3)
        torch.add(a, a, out=y.detach())  # WRITE
        y.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source, capture="mode")
    assert_located(outcome)


def test_mul_then_write_output_is_not_a_failure(tmp_path):
    source = """
        import torch
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        y[0] = 0.0
        y.sum().backward()
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None
    assert outcome.diagnoses == []
    assert torch.equal(outcome.namespace["x"].grad, torch.tensor([0.0, 4.0, 6.0]))


def test_unseen_write_still_names_save_and_window(tmp_path):
    """A write through torch.ops is not wrapped: the report still names the save."""
    source = """
        import torch
        import torch.nn.functional as F
        w = torch.randn(3, requires_grad=True)
        running_mean, running_var = torch.zeros(3), torch.ones(3)
        y = w * running_mean  # SAVE
        torch.ops.aten.add_.Scalar(running_mean, 1.0)  # an op called through torch.ops
        y.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    if full_mode():
        assert diagnosis.primary.line == outcome.line("SAVE")
        assert {loc.role: loc.line for loc in diagnosis.related}["backward"] == outcome.line("BACKWARD")
    else:  # neither the write nor the save was seen: the report stands on the backward() line
        assert diagnosis.primary.line == outcome.line("BACKWARD")
        assert diagnosis.tensor.shape == [3] and diagnosis.extra["slot"] == "other"
    assert any("not seen" in note for note in diagnosis.notes)


def test_custom_function_saved_input_modified(tmp_path):
    source = """
        import torch

        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        a = torch.randn(3, requires_grad=True)
        b = a * 1
        y = Square.apply(b)  # SAVE
        b.add_(1)  # WRITE
        y.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert diagnosis.extra["node"] == "SquareBackward"
    assert diagnosis.extra["slot"] == "saved_tensors[0]"
    assert diagnosis.help[0].replacement == "b = b.add(1)"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert torch.allclose(namespace["a"].grad, 2 * namespace["a"].detach())


def test_rnn_output_buffer_written_in_loop(tmp_path):
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        cell = nn.RNNCell(4, 8)
        x = torch.randn(5, 3, 4)
        outputs = torch.zeros(5, 3, 8)
        h = torch.zeros(3, 8)
        for t in range(5):
            h = cell(x[t], outputs[t - 1] if t > 0 else h)  # SAVE
            outputs[t] = h  # WRITE
        outputs.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert any("t = 4" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement == "outputs = outputs.select_scatter(h, 0, t)"
    assert any("torch.stack" in h.message for h in diagnosis.help)
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert all(p.grad is not None for p in namespace["cell"].parameters())


@pytest.mark.parametrize("setup,write", [
    ("out = torch.sigmoid(x)", "out[:, :2].copy_(torch.zeros(3, 2))"),
    ("out = torch.tanh(x)", "out[0].mul_(2)"),
    ("out = torch.softmax(x, dim=1)", "out[torch.arange(3), torch.tensor([0, 1, 2])] -= 1"),
    ("out = torch.exp(x)", "out.view(-1)[0] = 1.0"),
])
def test_writes_into_part_of_a_saved_tensor_get_a_valid_fix(tmp_path, setup, write):
    """When the written expression is not a plain name, the help copies the tensor first
    (an assignment to `out.view(-1)` or `out[0]` would not be valid or would still write)."""
    source = f"""
        import torch
        x = torch.randn(3, 4, requires_grad=True)
        {setup}  # SAVE
        {write}  # WRITE
        out.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    replacement = diagnosis.help[0].replacement
    assert replacement.startswith("out = out.clone()\n")
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["x"].grad is not None and namespace["x"].grad.shape == (3, 4)


def test_positional_inplace_flag(tmp_path):
    source = """
        import torch
        import torch.nn.functional as F
        x = torch.randn(5, requires_grad=True)
        y = torch.tanh(x)  # SAVE
        z = F.relu(y, True)  # WRITE
        (z * 2).sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    diagnosis = assert_located(outcome)
    assert diagnosis.help[0].replacement == "z = F.relu(y, False)"
    run_plain(tmp_path, apply_help(outcome))
