"""AD101 for an in-place method write into an entry of a Python dict or list that autograd saved:
`batch["reward"].copy_(reward)` (held-out set 26, pytorch/rl#322's rewards standardized back
into the batch). The help used to clone the container's name (`batch = batch.clone()`, which a
dict does not have); it now copies the entry, writes into the copy and puts the copy back, as it
already did for `c[k][index] = v`, and the program then computes what the accepted fix computes."""

import torch

from helpers import apply_help, run_plain, run_program

DICT_ENTRY = """
import torch
torch.manual_seed(0)
w = torch.randn(4, 1, requires_grad=True)
x = torch.randn(5, 4)

def rollout(x):
    return {"reward": torch.tanh(x @ w).squeeze(-1), "value": (x @ w).sum(-1)}

batch = rollout(x)
reward = batch["reward"] - batch["reward"].mean()
reward = reward / reward.std().clamp_min(1e-4)
batch["reward"].copy_(reward)  # WRITE
loss = (batch["reward"] * batch["value"]).sum()
loss.backward()
result = [w.grad.clone(), batch["reward"].detach().clone()]
"""

ANSWER = DICT_ENTRY.replace('batch["reward"].copy_(reward)  # WRITE', 'batch["reward"] = reward')

LIST_ENTRY = """
import torch
torch.manual_seed(0)
w = torch.randn(3, 3, requires_grad=True)
states = [torch.sigmoid(torch.randn(2, 3) @ w), torch.randn(2, 3)]
energy = (states[0] ** 2).sum()
states[0].mul_(0.5)  # WRITE
(energy + states[0].sum()).backward()
result = [w.grad.clone(), states[0].detach().clone()]
"""

LIST_ANSWER = LIST_ENTRY.replace("states[0].mul_(0.5)  # WRITE", "states[0] = states[0] * 0.5")


def _same(a, b) -> bool:
    return all(torch.allclose(x, y, rtol=1e-6, atol=1e-7) for x, y in zip(a, b))


def test_the_dict_entry_written_by_copy_is_named_and_copied_not_the_dict(tmp_path):
    outcome = run_program(tmp_path, DICT_ENTRY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == outcome.line("WRITE")
    replacement = diagnosis.help[0].replacement
    assert "batch = batch.clone()" not in replacement
    assert replacement.splitlines() == ['batch_reward = batch["reward"].clone()',
                                        "batch_reward.copy_(reward)",
                                        'batch["reward"] = batch_reward']


def test_the_help_applied_computes_what_the_accepted_fix_computes(tmp_path):
    outcome = run_program(tmp_path, DICT_ENTRY)
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")
    answer = run_plain(tmp_path, ANSWER, name="answer.py")
    assert _same(fixed["result"], answer["result"])


def test_silent_when_the_entry_is_rebound(tmp_path):
    assert not run_program(tmp_path, ANSWER).diagnoses


def test_a_list_entry_written_by_an_in_place_method_is_copied_and_put_back(tmp_path):
    outcome = run_program(tmp_path, LIST_ENTRY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert "states = states.clone()" not in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")
    answer = run_plain(tmp_path, LIST_ANSWER, name="answer.py")
    assert _same(fixed["result"], answer["result"])
    assert not run_program(tmp_path, LIST_ANSWER).diagnoses
