"""AD113 where the NumPy result comes back into torch on the same line
(`torch.from_numpy(fkine(q.numpy()))`, forward kinematics from a NumPy toolbox inside a loss):
detaching `q` would make the error go away and leave the loss with no path to the network, so
the help is advice (write the computation with torch operations), not the detach change. A
`.numpy()` whose result stays in NumPy keeps the detach change, which keeps the values."""

import torch

from helpers import apply_help, run_as_script, run_plain

ROUND_TRIP = """
import numpy as np
import torch
import torch.nn as nn
torch.manual_seed(0)


def reach(q):
    return np.stack([np.cos(q[:, 0]) + np.cos(q[:, 0] + q[:, 1]), np.sin(q[:, 0]) + np.sin(q[:, 0] + q[:, 1])], 1)


net = nn.Linear(2, 2)
targets = torch.rand(8, 2)
q = net(targets)
reached = torch.from_numpy(reach(q.numpy())).float()  # TRIP
loss = (reached - targets).abs().mean()
loss.backward()
"""

LOGGED = """
import numpy as np
import torch
import torch.nn as nn
torch.manual_seed(0)

net = nn.Linear(2, 2)
q = net(torch.rand(8, 2))
history = np.round(q.numpy(), 3)  # LOG
loss = q.pow(2).mean()
loss.backward()
result = {"history": torch.from_numpy(history), "grad": net.weight.grad.clone()}
"""


def test_a_numpy_round_trip_inside_the_loss_gets_advice_not_detach(tmp_path):
    outcome = run_as_script(tmp_path, ROUND_TRIP)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD113"]
    assert diagnosis.primary.line == outcome.line("TRIP")
    (help_,) = diagnosis.help
    assert help_.replacement is None
    assert "torch operations" in help_.message and "torch.from_numpy" in help_.message
    assert "no gradient path to q" in help_.message


def test_a_numpy_value_kept_in_numpy_keeps_the_detach_change(tmp_path):
    outcome = run_as_script(tmp_path, LOGGED)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD113"]
    assert diagnosis.help[0].replacement.strip() == "history = np.round(q.detach().numpy(), 3)"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    reference = run_plain(tmp_path, LOGGED.replace("q.numpy()", "q.detach().numpy()"), "reference.py")["result"]
    assert torch.equal(fixed["history"], reference["history"]) and torch.equal(fixed["grad"], reference["grad"])
