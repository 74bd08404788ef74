"""Stop 44's seventh silence sweep (docs/real-code.md, "Seventh sweep, after stop 44's first
round"): AD228's check reads `.grad_fn` of every live local tensor, and PyTorch raises on that read
for a view made under `no_grad` whose base was modified since (`col = w[:, 0]` in a `no_grad`
block, then the optimizer's step). The doctor failed inside (an internal error, the check lost
for that backward()). Such a view has no graph to be stale: it is skipped, and AD228 is still
found beside one."""

import pytest

import autograd_doctor
from helpers import grads_equal, run_plain, run_program
from test_steps_inside_backward import STALE_SCALE

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

COLUMN_ZEROED_THROUGH_A_NO_GRAD_VIEW = """
    import torch

    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(5, 3))
    opt = torch.optim.SGD([w], lr=0.1)
    x = torch.randn(10, 5)
    losses = []
    for step in range(3):
        out = (x @ w).tanh()
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        with torch.no_grad():
            col = w[:, 0]
            col.zero_()
    grads = losses + [w.detach().clone(), w.grad.clone()]
"""


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_live_view_made_under_no_grad_is_silent_and_no_internal_error(tmp_path, mode):
    plain = run_plain(tmp_path, COLUMN_ZEROED_THROUGH_A_NO_GRAD_VIEW, "plain.py")
    before = autograd_doctor.doctor.internal_error_count()
    outcome = run_program(tmp_path, COLUMN_ZEROED_THROUGH_A_NO_GRAD_VIEW, **MODES[mode])
    assert autograd_doctor.doctor.internal_error_count() == before
    assert outcome.error is None and outcome.diagnoses == [] and outcome.warnings == []
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def test_a_stale_value_beside_a_no_grad_view_is_still_reported(tmp_path):
    source = STALE_SCALE.replace(
        "        loss.backward(retain_graph=True)\n",
        "        loss.backward(retain_graph=True)\n"
        "        with torch.no_grad():\n"
        "            col = model.linear.weight[:, 0]\n"
        "            col.mul_(1.0)\n",
    )
    assert source != STALE_SCALE
    before = autograd_doctor.doctor.internal_error_count()
    outcome = run_program(tmp_path, source)
    assert autograd_doctor.doctor.internal_error_count() == before
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == ["AD228"]
    assert outcome.diagnoses[0].primary.line == outcome.line("PRIMARY")
