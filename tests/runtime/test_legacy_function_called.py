"""AD174: an old-style custom autograd.Function (instance forward/backward, `self.save_for_backward`)
instantiated and called, `Sign()(x)`, which PyTorch refuses since 1.5. Every call in the user's
file is named; where the class has no `__init__` and takes no constructor argument, the change
(`Sign.apply(x)` at each call) trains as the hand-written static-method version does. A Function
built with arguments gets advice only; a new-style Function is silent."""

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

LEGACY = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class ClippedSign(torch.autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x.sign()

    def backward(self, grad_output):
        x, = self.saved_tensors
        return grad_output * (x.abs() < 1).to(grad_output.dtype)


class BinaryNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(6, 8)
        self.second = nn.Linear(8, 3)

    def forward(self, x):
        x = ClippedSign()(self.first(x))  # FIRST
        return self.second(x) + ClippedSign()(x).sum(1, keepdim=True)  # SECOND


model = BinaryNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs, labels = torch.randn(10, 6), torch.randint(0, 3, (10,))
losses = []
for step in range(3):
    loss = nn.functional.cross_entropy(model(inputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""

NEW_STYLE = LEGACY.replace("    def forward(self, x):\n        self.save", "    @staticmethod\n    def forward(ctx, x):\n        ctx.save") \
    .replace("    def backward(self, grad_output):\n        x, = self.saved", "    @staticmethod\n    def backward(ctx, grad_output):\n        x, = ctx.saved") \
    .replace("ClippedSign()(", "ClippedSign.apply(")


def test_an_old_style_function_called_as_an_instance_gets_apply_at_each_call(tmp_path):
    outcome = run_as_script(tmp_path, LEGACY)
    assert "Legacy autograd function" in str(outcome.error)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD174"]
    assert diagnosis.primary.line == outcome.line("FIRST")
    assert [h.location.line for h in diagnosis.help] == [outcome.line("FIRST"), outcome.line("SECOND")]
    assert diagnosis.help[0].replacement.strip() == "x = ClippedSign.apply(self.first(x))"
    assert "@staticmethod" in diagnosis.help[0].message
    fixed = LEGACY
    for index in range(len(diagnosis.help)):
        outcome.source = fixed
        fixed = apply_help(outcome, index)
    assert "ClippedSign()(" not in fixed
    result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    reference = run_plain(tmp_path, NEW_STYLE, "reference.py")["result"]
    assert torch.equal(result["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(result["params"], reference["params"]))


def test_a_function_built_with_arguments_gets_advice_only(tmp_path):
    source = LEGACY.replace("class ClippedSign(torch.autograd.Function):\n",
                            "class ClippedSign(torch.autograd.Function):\n"
                            "    def __init__(self, limit):\n        super().__init__()\n        self.limit = limit\n\n") \
        .replace("ClippedSign()(", "ClippedSign(1.0)(")
    outcome = run_as_script(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD174"]
    assert [h.replacement for h in diagnosis.help] == [None]


def test_a_new_style_function_is_silent(tmp_path):
    outcome = run_program(tmp_path, NEW_STYLE)
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == []
