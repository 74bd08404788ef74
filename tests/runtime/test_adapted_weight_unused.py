"""AD243: a MAML inner loop whose layer ignores the adapted weights it is given and reads its own
parameter (HowToTrainYourMAMLPytorch#22's legacy layer norm): autograd.grad(..., allow_unused=True)
returns None for the adapted weight, the layer is never adapted, nothing fails. The forward's
statement that reads the parameter is named (held-out set 22 part B, silent and undiagnosed on
the first run)."""

import torch

from helpers import run_plain, run_program

MAML = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(3))

    def forward(self, x, params=None):
        return x * self.weight  # READS


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.scale = Scale()

    def forward(self, x, params=None):
        if params is None:
            return self.scale(self.lin(x))
        h = F.linear(x, params["lin.weight"], params["lin.bias"])
        return self.scale(h, {"weight": params["scale.weight"]})


net = Net()
x, y = torch.randn(8, 3), torch.randn(8, 3)
meta = torch.optim.SGD(net.parameters(), lr=0.1)
for outer in range(2):
    meta.zero_grad()
    fast = dict(net.named_parameters())
    for inner in range(2):
        loss = ((net(x, fast) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True, allow_unused=True)  # GRAD
        fast = {n: (w if g is None else w - 0.1 * g) for (n, w), g in zip(fast.items(), grads)}
    ((net(x, fast) - y) ** 2).mean().backward()
    meta.step()
params = [p.detach().clone() for p in net.parameters()]
"""

ANSWER = MAML.replace("        return x * self.weight  # READS",
                      '        return x * (self.weight if params is None else params["weight"])  # READS')


def test_the_forward_statement_that_reads_the_parameter_is_named(tmp_path):
    outcome = run_program(tmp_path, MAML)
    assert outcome.error is None
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD243")
    assert diagnosis.primary.line == outcome.line("READS")
    assert any(r.line == outcome.line("GRAD") and "net.scale.weight" in r.note for r in diagnosis.related)
    assert 'params["weight"]' in diagnosis.help[0].message


def test_the_advised_change_trains_differently_and_is_silent(tmp_path):
    answer = run_program(tmp_path, ANSWER, name="answer.py")
    assert answer.error is None
    assert not [d for d in answer.diagnoses if d.code == "AD243"]
    fixed = run_plain(tmp_path, ANSWER, name="answer_plain.py")["params"]
    buggy = run_plain(tmp_path, MAML, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(fixed, buggy))


def test_a_layer_skipped_at_a_call_or_a_first_order_loop_that_uses_its_weights_is_silent(tmp_path):
    skipped = ANSWER.replace('        return self.scale(h, {"weight": params["scale.weight"]})',
                             '        return h if params["scale.weight"].grad_fn is not None else '
                             'self.scale(h, {"weight": params["scale.weight"]})')
    first_order = ANSWER.replace("create_graph=True, allow_unused=True", "allow_unused=True")
    for source in (skipped, first_order):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        assert not [d for d in outcome.diagnoses if d.code == "AD243"]
