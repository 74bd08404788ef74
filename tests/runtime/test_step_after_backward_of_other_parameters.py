"""AD209 when the backward() before a step() filled none of the stepped optimizer's parameters:
one optimizer passed under two names (ESRGAN-PyTorch#39, set 27 part A: the generator's optimizer
given for the discriminator's). The step applies the gradients of its previous step again; clearing
them before the backward() (AD209's usual help) would not train the parameters the backward() filled,
so the help is to check which optimizer is stepped, not a zero_grad() (which was wrong by the oracle).
An ordinary loop without zero_grad() keeps its concrete help."""

import torch

from helpers import run_program

SWAPPED = """
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Linear(3, 1)
policy = nn.Linear(3, 3)
policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
critic_optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)


def update(policy_opt, critic_opt, states):
    policy_opt.zero_grad()
    (-critic(policy(states)).mean()).backward()
    policy_opt.step()
    critic.zero_grad()
    value_loss = (critic(states) - 1.0).pow(2).mean()
    value_loss.backward()  # CRITIC BACKWARD
    critic_opt.step()  # STEP


for _ in range(2):
    update(policy_optimizer, policy_optimizer, torch.randn(4, 3))
"""

PLAIN = """
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()  # BACKWARD
    optimizer.step()
"""


def test_a_step_after_a_backward_of_other_parameters_gets_advice_naming_the_optimizer(tmp_path):
    outcome = run_program(tmp_path, SWAPPED)
    assert outcome.error is None
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD209")
    assert diagnosis.primary.line == outcome.line("CRITIC BACKWARD")
    assert "fills none of the parameters this optimizer steps" in diagnosis.primary.note
    assert diagnosis.help[0].replacement is None
    assert diagnosis.help[0].message.startswith("check that critic_opt is the optimizer of the parameters")


def test_the_correct_call_is_silent(tmp_path):
    outcome = run_program(tmp_path, SWAPPED.replace("update(policy_optimizer, policy_optimizer,",
                                                    "update(policy_optimizer, critic_optimizer,"))
    assert outcome.error is None and [d.code for d in outcome.diagnoses] == []


def test_a_loop_without_zero_grad_keeps_its_concrete_help(tmp_path):
    outcome = run_program(tmp_path, PLAIN)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD209")
    assert diagnosis.help[0].replacement.startswith("optimizer.zero_grad()")
    assert torch.is_grad_enabled()
