"""AD176: one optimizer's backward() adds into another optimizer's gradients before that one steps.

Optimizer X's own backward() fills its gradients; then optimizer Y is cleared and Y's loss, computed
through X's model (an actor's loss through the critic, a generator's through the discriminator), is
backpropagated: it adds into X's gradients too, and X's step() applies both. The report names the
second backward(); the advice (freeze X's parameters while Y's loss goes through them, or
backward() Y's loss with `inputs=` Y's parameters) is checked here by applying it by hand: it gives
a hand-written reference's parameters. Found on set 15's TQC learner
(https://github.com/ray-project/ray/pull/65125); these programs are other shapes of the same cause.
"""

import torch

from helpers import run_plain, run_program

# A GAN trainer whose update clears each optimizer before its own loss's backward(), and steps both
# at the end: the generator's loss goes through the discriminator into its gradients.
GAN_TRAINER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class GanTrainer:
        def __init__(self):
            self.gen = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
            self.disc = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
            self.opt_g = torch.optim.Adam(self.gen.parameters(), lr=1e-2)
            self.opt_d = torch.optim.Adam(self.disc.parameters(), lr=1e-2)

        def losses(self, real, noise):
            fake = self.gen(noise)
            d_loss = F.softplus(-self.disc(real)).mean() + F.softplus(self.disc(fake.detach())).mean()
            g_loss = F.softplus(-self.disc(fake)).mean()  # G_LOSS
            return d_loss, g_loss

        def update(self, real, noise):
            d_loss, g_loss = self.losses(real, noise)
            self.opt_d.zero_grad()
            d_loss.backward()
            self.opt_g.zero_grad()
            g_loss.backward()  # PRIMARY
            self.opt_d.step()
            self.opt_g.step()


    trainer = GanTrainer()
    real = torch.randn(32, 2) * 0.5 + 1.0
    for step in range(5):
        trainer.update(real, torch.randn(32, 4))
    result = [p.detach().clone() for p in [*trainer.gen.parameters(), *trainer.disc.parameters()]]
"""

# The discriminator frozen while the generator's loss is computed through it.
GAN_REFERENCE = GAN_TRAINER.replace(
    "            g_loss = F.softplus(-self.disc(fake)).mean()  # G_LOSS\n",
    "            self.disc.requires_grad_(False)\n"
    "            g_loss = F.softplus(-self.disc(fake)).mean()  # G_LOSS\n"
    "            self.disc.requires_grad_(True)\n")

# The advice's other form: the generator's backward() with inputs= the generator's parameters.
GAN_WITH_INPUTS = GAN_TRAINER.replace(
    "g_loss.backward()  # PRIMARY", "g_loss.backward(inputs=list(self.gen.parameters()))  # PRIMARY")

# Model-based RL: one helper clears an optimizer and backpropagates its loss; the policy's loss
# is taken through the learned dynamics model, whose gradients its backward() adds to.
DYNAMICS_AND_POLICY = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(1)
    STATE, ACTION = 3, 2
    dynamics = nn.Sequential(nn.Linear(STATE + ACTION, 24), nn.Tanh(), nn.Linear(24, STATE))
    policy = nn.Sequential(nn.Linear(STATE, 24), nn.Tanh(), nn.Linear(24, ACTION))
    model_optimizer = torch.optim.SGD(dynamics.parameters(), lr=0.05)
    policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.05)


    def backward_for(optimizer, loss):
        optimizer.zero_grad()
        loss.backward()  # PRIMARY


    states, actions = torch.randn(40, STATE), torch.randn(40, ACTION)
    next_states = states + 0.3 * actions.sum(-1, keepdim=True)
    goal = torch.ones(STATE)
    for iteration in range(5):
        model_loss = F.mse_loss(dynamics(torch.cat([states, actions], -1)), next_states)
        imagined = dynamics(torch.cat([states, policy(states)], -1))  # IMAGINED
        policy_loss = (imagined - goal).pow(2).sum(-1).mean()
        backward_for(model_optimizer, model_loss)
        backward_for(policy_optimizer, policy_loss)
        model_optimizer.step()
        policy_optimizer.step()
    result = [p.detach().clone() for p in [*dynamics.parameters(), *policy.parameters()]]
"""

DYNAMICS_REFERENCE = DYNAMICS_AND_POLICY.replace(
    "        imagined = dynamics(torch.cat([states, policy(states)], -1))  # IMAGINED\n",
    "        dynamics.requires_grad_(False)\n"
    "        imagined = dynamics(torch.cat([states, policy(states)], -1))  # IMAGINED\n"
    "        dynamics.requires_grad_(True)\n")

DYNAMICS_WITH_INPUTS = DYNAMICS_AND_POLICY.replace(
    "        loss.backward()  # PRIMARY",
    "        loss.backward(inputs=[p for group in optimizer.param_groups for p in group['params']])  # PRIMARY")


def _close(first, second) -> bool:
    return len(first) == len(second) and all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(first, second))


def _the_diagnosis(outcome):
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD176"]
    return diagnosis


def test_the_generators_backward_into_the_discriminators_gradients_is_reported(tmp_path):
    outcome = run_program(tmp_path, GAN_TRAINER)
    assert outcome.error is None
    diagnosis = _the_diagnosis(outcome)
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("PRIMARY")
    assert "opt_d" in diagnosis.primary.note
    (advice,) = diagnosis.help
    assert advice.replacement is None
    assert "requires_grad_(False)" in advice.message and "inputs=" in advice.message
    assert len(outcome.warnings) == 1  # once, not at every step


def test_the_policy_loss_through_the_dynamics_model_is_reported_in_the_helper(tmp_path):
    outcome = run_program(tmp_path, DYNAMICS_AND_POLICY)
    assert outcome.error is None
    diagnosis = _the_diagnosis(outcome)
    assert diagnosis.primary.line == outcome.line("PRIMARY")
    assert diagnosis.help[0].replacement is None


def test_the_advice_applied_either_way_gives_the_references_parameters(tmp_path):
    for buggy, reference, with_inputs in ((GAN_TRAINER, GAN_REFERENCE, GAN_WITH_INPUTS),
                                          (DYNAMICS_AND_POLICY, DYNAMICS_REFERENCE, DYNAMICS_WITH_INPUTS)):
        expected = run_plain(tmp_path, reference, "reference.py")["result"]
        assert not _close(run_plain(tmp_path, buggy, "buggy.py")["result"], expected)  # the bug changes training
        for fixed in (reference, with_inputs):
            outcome = run_program(tmp_path, fixed, "fixed.py")
            assert outcome.error is None and not outcome.diagnoses
            assert _close(outcome.namespace["result"], expected)


def test_each_optimizer_stepping_right_after_its_own_backward_is_silent(tmp_path):
    in_order = GAN_TRAINER.replace(
        "            self.opt_d.zero_grad()\n            d_loss.backward()\n",
        "            self.opt_d.zero_grad()\n            d_loss.backward()\n            self.opt_d.step()\n"
        "            g_loss = self.losses(real, noise)[1]\n").replace(
        "            self.opt_d.step()\n            self.opt_g.step()\n", "            self.opt_g.step()\n")
    assert in_order.count("self.opt_d.step()") == 1
    outcome = run_program(tmp_path, in_order)
    assert outcome.error is None and not outcome.diagnoses


def test_two_losses_of_one_optimizer_summed_on_purpose_are_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        encoder, head = nn.Linear(4, 8), nn.Linear(8, 2)
        optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
        head_optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
        x, y = torch.randn(16, 4), torch.randn(16, 2)
        for step in range(5):
            optimizer.zero_grad()
            F.mse_loss(head(encoder(x)), y).backward()
            encoder(x).pow(2).mean().backward()
            optimizer.step()
            head_optimizer.zero_grad()
            F.mse_loss(head(encoder(x).detach()), y).backward()
            head_optimizer.step()
    """)
    assert outcome.error is None and not outcome.diagnoses
