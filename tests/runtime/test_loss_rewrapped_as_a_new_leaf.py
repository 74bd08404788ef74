"""AD214 names the statement that rebuilt the loss as a new leaf (`loss = Variable(loss,
requires_grad=True)`, `torch.tensor(loss.item(), requires_grad=True)`) when the last backward()
before the empty step started from a leaf: set 28's torchMoji#21, where the model returned
`outputs.data` and the reporter wrapped the loss so that backward() would run; nothing trained.
Before, the report named the step with advice about functional inner loops. The help is advice
(removing the wrap alone makes backward() raise at the upstream cut, which the user then keeps).

Another shape, written before the change was run on it: a regression loop that computes its loss
in NumPy and wraps the number with torch.tensor(..., requires_grad=True). Near-twins that train
(the loss backpropagated itself) stay silent."""

from __future__ import annotations

from helpers import run_program

WRAPPED = """
    import torch
    from torch import nn
    from torch.autograd import Variable

    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
    for epoch in range(3):
        optimizer.zero_grad()
        output = model(x).data
        loss = nn.functional.cross_entropy(output, y)
        loss = Variable(loss, requires_grad=True)  # WRAP
        loss.backward()
        optimizer.step()  # STEP
"""

NUMPY_LOSS = """
    import numpy as np
    import torch
    from torch import nn

    torch.manual_seed(0)
    regressor = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    opt = torch.optim.SGD(regressor.parameters(), lr=0.1)
    inputs, targets = torch.randn(8, 3), torch.randn(8, 1)


    def train_step():
        opt.zero_grad()
        prediction = regressor(inputs).detach().numpy()
        value = float(np.mean((prediction - targets.numpy()) ** 2))
        mse = torch.tensor(value, requires_grad=True)  # WRAP
        mse.backward()
        opt.step()  # STEP


    for _ in range(3):
        train_step()
"""

TRAINS = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
    losses = []
    for epoch in range(3):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
"""


def _gradientless(outcome):
    return next(d for d in outcome.diagnoses if d.code == "AD214")


def test_the_wrap_is_named_as_the_cut(tmp_path):
    outcome = run_program(tmp_path, WRAPPED)
    diagnosis = _gradientless(outcome)
    assert diagnosis.primary.line == outcome.line("WRAP")
    assert "makes the loss a new leaf here" in diagnosis.primary.note
    assert any(location.line == outcome.line("STEP") for location in diagnosis.related)
    # the `.data` upstream of the wrap is named with it (tests/runtime/test_set28_misses.py)
    assert diagnosis.help[0].message.startswith("remove the wrap and the cut at line ")
    assert "`model(x).data`" in diagnosis.help[0].message
    assert diagnosis.help[0].replacement is None


def test_a_number_wrapped_with_torch_tensor_is_named(tmp_path):
    outcome = run_program(tmp_path, NUMPY_LOSS)
    diagnosis = _gradientless(outcome)
    assert diagnosis.primary.line == outcome.line("WRAP")
    assert diagnosis.help[0].message.startswith("compute the loss with torch operations on the model's output instead of wrapping value")


def test_a_loss_backpropagated_itself_trains_silently(tmp_path):
    outcome = run_program(tmp_path, TRAINS)
    assert outcome.error is None
    assert not outcome.diagnoses
    losses = outcome.namespace["losses"]
    assert losses[-1] < losses[0]
