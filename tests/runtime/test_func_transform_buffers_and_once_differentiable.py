"""AD178, a batch norm's running statistics updated in place under torch.func.grad (MAML written
with torch.func, set 18's functorch MAML), and AD179, a custom Function marked
@once_differentiable differentiated twice (second-order MAML, set 18's higher#137): the line the
accepted fix changes is named, and the change, applied, gives the hand-written version's values."""

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

MAML_WITH_BATCH_NORM = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad
torch.manual_seed(0)

net = nn.Sequential(nn.Linear(4, 16), LAYER, nn.ReLU(), nn.Linear(16, 2))  # NET
meta_optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)


def support_loss(params, x, y):
    return F.cross_entropy(functional_call(net, params, (x,)), y)  # CALL


losses = []
for step in range(4):
    params = dict(net.named_parameters())
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    grads = grad(support_loss)(params, x, y)
    adapted = {name: value - 0.1 * grads[name] for name, value in params.items()}
    loss = F.cross_entropy(functional_call(net, adapted, (torch.randn(8, 4),)), torch.randint(0, 2, (8,)))
    meta_optimizer.zero_grad()
    loss.backward()
    meta_optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.parameters()]}
"""


def test_batch_norm_statistics_under_func_grad_name_the_layer_and_keep_no_running_statistics(tmp_path):
    outcome = run_as_script(tmp_path, MAML_WITH_BATCH_NORM.replace("LAYER", "nn.BatchNorm1d(16)"))
    assert "would mutate a captured Tensor" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD178"
    assert diagnosis.primary.line == outcome.line("NET")
    assert "tracks running statistics" in diagnosis.primary.note
    assert any(location.line == outcome.line("CALL") for location in diagnosis.related)
    assert "nn.BatchNorm1d(16, track_running_stats=False)" in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    reference = run_plain(tmp_path, MAML_WITH_BATCH_NORM.replace(
        "LAYER", "nn.BatchNorm1d(16, track_running_stats=False)"), "reference.py")["result"]
    assert torch.equal(fixed["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(fixed["params"], reference["params"]))


def test_a_batch_norm_without_running_statistics_under_func_grad_is_silent(tmp_path):
    outcome = run_program(tmp_path, MAML_WITH_BATCH_NORM.replace(
        "LAYER", "nn.BatchNorm1d(16, track_running_stats=False)"))
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == []


def test_another_captured_write_under_func_grad_gets_advice_at_the_raising_line(tmp_path):
    outcome = run_as_script(tmp_path, """
        import torch
        from torch.func import grad
        counter = torch.zeros(())

        def loss_of(x):
            counter.add_(1)  # WRITE
            return (x * x).sum()

        grad(loss_of)(torch.randn(3))
        """)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD178"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert all(s.replacement is None for s in diagnosis.help)


SECOND_ORDER = """
import torch
import torch.nn.functional as F
from torch.autograd.function import once_differentiable
torch.manual_seed(0)


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    @once_differentiable  # DECORATOR
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        sig = torch.sigmoid(x)
        return BACKWARD


w = torch.randn(1, 8, requires_grad=True)
v = torch.randn(8, 1, requires_grad=True)
optimizer = torch.optim.SGD([w, v], lr=0.1)
losses = []
for step in range(3):
    x, y = torch.randn(6, 1), torch.randn(6, 1)
    inner = F.mse_loss(Swish.apply(x @ w) @ v, y)
    gw, gv = torch.autograd.grad(inner, [w, v], create_graph=True)
    outer = F.mse_loss(Swish.apply(x @ (w - 0.1 * gw)) @ (v - 0.1 * gv), y)
    optimizer.zero_grad()
    outer.backward()  # BACKWARD
    optimizer.step()
    losses.append(outer.detach())
result = {"losses": torch.stack(losses), "w": w.detach().clone(), "v": v.detach().clone()}
"""

TORCH_BACKWARD = "grad_output * (sig * (1 + x * (1 - sig)))"


def test_a_once_differentiable_backward_written_with_torch_operations_loses_its_decorator(tmp_path):
    outcome = run_as_script(tmp_path, SECOND_ORDER.replace("BACKWARD\n", TORCH_BACKWARD + "\n", 1))
    assert "@once_differentiable" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD179"
    assert diagnosis.primary.line == outcome.line("DECORATOR")
    assert any(location.line == outcome.line("BACKWARD") for location in diagnosis.related)
    assert diagnosis.help[0].replacement == "def backward(ctx, grad_output):"
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    reference = run_plain(tmp_path, SECOND_ORDER.replace("BACKWARD\n", TORCH_BACKWARD + "\n", 1).replace(
        "    @once_differentiable  # DECORATOR\n", ""), "reference.py")["result"]
    assert all(torch.equal(fixed[key], reference[key]) for key in ("losses", "w", "v"))


def test_a_once_differentiable_backward_through_numpy_gets_advice_only(tmp_path):
    through_numpy = "torch.from_numpy((grad_output * sig * (1 + x * (1 - sig))).numpy())"
    outcome = run_as_script(tmp_path, SECOND_ORDER.replace("BACKWARD\n", through_numpy + "\n", 1))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD179"
    assert diagnosis.primary.line == outcome.line("DECORATOR")
    assert all(s.replacement is None for s in diagnosis.help)
