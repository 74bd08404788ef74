"""Recall on the causes of misses in the r394-r413 re-creations: each case the
linter now reports really shows its bug when run, its corrected twin (the
change the finding asks for, applied) stays silent and computes what a
hand-written reference computes, and a similar correct pattern stays silent
(and really runs)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ADL003: a helper that backpropagates the loss it is given and steps the optimizer
# it is given (`update_params(optim, net, loss)`, a top-level function, or a base
# class's `take_optimisation_step`), called once per critic before it is called
# with the policy loss, which went through the critics (a held twin module whose
# `forward` returns one value per critic; r394, r395).
HELPER_STEPS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def update_params(optim, network, loss):
        optim.zero_grad()
        loss.backward()
        optim.step()

    class Twin(nn.Module):
        def __init__(self):
            super().__init__()
            self.Q1 = nn.Linear(5, 1)
            self.Q2 = nn.Linear(5, 1)

        def forward(self, s, a):
            x = torch.cat([s, a], 1)
            return self.Q1(x), self.Q2(x)

    class Base:
        def make_policy(self):
            return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))

    class Agent(Base):
        def __init__(self):
            self.policy = self.make_policy()
            self.critic = Twin()
            self.q1_optim = torch.optim.SGD(self.critic.Q1.parameters(), lr=0.1)
            self.q2_optim = torch.optim.SGD(self.critic.Q2.parameters(), lr=0.1)
            self.pi_optim = torch.optim.SGD(self.policy.parameters(), lr=0.1)

        def critic_losses(self, s, a, target):
            q1, q2 = self.critic(s, a)
            return ((q1 - target) ** 2).mean(), ((q2 - target) ** 2).mean()

        def policy_loss(self, s):
            q1, q2 = self.critic(s, torch.tanh(self.policy(s)))
            return -torch.min(q1, q2).mean()

        def learn(self, s, a, target):
            q1_loss, q2_loss = self.critic_losses(s, a, target)
            pi_loss = self.policy_loss(s)
            update_params(self.q1_optim, self.critic.Q1, q1_loss)
            update_params(self.q2_optim, self.critic.Q2, q2_loss)
            update_params(self.pi_optim, self.policy, pi_loss)

    def main():
        torch.manual_seed(0)
        agent = Agent()
        s, a, target = torch.randn(4, 3), torch.rand(4, 2), torch.randn(4, 1)
        agent.learn(s, a, target)
        return agent
""")

# the change asked for: the policy loss computed after the critics' steps
HELPER_STEPS_FIXED = HELPER_STEPS.replace(
    "        pi_loss = self.policy_loss(s)\n", "").replace(
    "        update_params(self.pi_optim, self.policy, pi_loss)",
    "        update_params(self.pi_optim, self.policy, self.policy_loss(s))")

# correct: each critic's own loss only, no value shared across the steps
CRITICS_ONLY = HELPER_STEPS.replace("        pi_loss = self.policy_loss(s)\n", "").replace(
    "        update_params(self.pi_optim, self.policy, pi_loss)\n", "")


def test_helper_that_steps_the_optimizer_it_is_given_is_a_step_at_its_call():
    assert _findings(HELPER_STEPS) == [
        (_line(HELPER_STEPS, "update_params(self.q1_optim"), "ADL003"),
        (_line(HELPER_STEPS, "update_params(self.q2_optim"), "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(HELPER_STEPS)["main"]()


def _reference_agent():
    """The fixed update written by hand: both critics stepped on their losses,
    then the policy stepped on a loss computed with the stepped critics."""
    agent = _load(HELPER_STEPS)["Agent"]
    torch.manual_seed(0)
    reference = agent()
    s, a, target = torch.randn(4, 3), torch.rand(4, 2), torch.randn(4, 1)
    for critic in (reference.critic.Q1, reference.critic.Q2):
        loss = ((critic(torch.cat([s, a], 1)) - target) ** 2).mean()
        grads = torch.autograd.grad(loss, list(critic.parameters()))
        with torch.no_grad():
            for p, g in zip(critic.parameters(), grads):
                p -= 0.1 * g
    x = torch.cat([s, torch.tanh(reference.policy(s))], 1)
    loss = -torch.min(reference.critic.Q1(x), reference.critic.Q2(x)).mean()
    grads = torch.autograd.grad(loss, list(reference.policy.parameters()))
    with torch.no_grad():
        for p, g in zip(reference.policy.parameters(), grads):
            p -= 0.1 * g
    return reference


def test_policy_loss_computed_after_the_helper_steps_is_silent_and_right():
    assert HELPER_STEPS_FIXED != HELPER_STEPS
    assert _findings(HELPER_STEPS_FIXED) == []
    agent = _load(HELPER_STEPS_FIXED)["main"]()
    reference = _reference_agent()
    for net in ("policy", "critic"):
        for p, q in zip(getattr(agent, net).parameters(), getattr(reference, net).parameters()):
            assert torch.allclose(p, q)


def test_helper_steps_on_separate_losses_are_silent():
    assert "pi_loss" not in CRITICS_ONLY
    assert _findings(CRITICS_ONLY) == []
    _load(CRITICS_ONLY)["main"]()


# ADL020: a non-leaf made from a leaf that requires grad, kept on the object
# (`self.positions = torch.linspace(..., requires_grad=True).view(...)` in `__init__`)
# or returned by a top-level helper (`return torch.randn(n * m, requires_grad=True).view(n, m)`),
# whose `.grad` is read after a backward (r412, r413).
NON_LEAF_ATTRIBUTE = textwrap.dedent("""
    import torch

    class Field:
        def __init__(self):
            self.positions = torch.linspace(1, 8, steps=8, requires_grad=True).view(2, 4)

        def step(self, target, lr=0.1):
            ((self.positions - target) ** 2).sum().backward()
            with torch.no_grad():
                self.positions = self.positions - lr * self.positions.grad
            return self.positions

    def main():
        return Field().step(torch.zeros(2, 4))
""")

NON_LEAF_HELPER = textwrap.dedent("""
    import torch

    def init_weight(n_in, n_out):
        return torch.randn(n_in * n_out, requires_grad=True).view(n_in, n_out)

    def fit(x, y, lr=0.1):
        w = init_weight(x.size(1), y.size(1))
        loss = ((x.mm(w) - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        return w

    def main():
        torch.manual_seed(0)
        return fit(torch.randn(4, 3), torch.randn(4, 1))
""")

# correct: the leaf itself kept and returned (`.requires_grad_()` at the end)
LEAF_ATTRIBUTE = NON_LEAF_ATTRIBUTE.replace(
    "torch.linspace(1, 8, steps=8, requires_grad=True).view(2, 4)",
    "torch.linspace(1, 8, steps=8).view(2, 4).requires_grad_()")
LEAF_HELPER = NON_LEAF_HELPER.replace(
    "torch.randn(n_in * n_out, requires_grad=True).view(n_in, n_out)",
    "torch.randn(n_in * n_out).view(n_in, n_out).requires_grad_()")


@pytest.mark.filterwarnings("ignore::UserWarning")  # the .grad of a non-leaf, read on purpose
def test_non_leaf_kept_on_the_object_is_reported_at_the_grad_read():
    assert _findings(NON_LEAF_ATTRIBUTE) == [(_line(NON_LEAF_ATTRIBUTE, "lr * self.positions.grad"), "ADL020")]
    with pytest.raises(TypeError):
        _load(NON_LEAF_ATTRIBUTE)["main"]()


@pytest.mark.filterwarnings("ignore::UserWarning")  # the .grad of a non-leaf, read on purpose
def test_non_leaf_returned_by_a_helper_is_reported_at_the_grad_read():
    assert _findings(NON_LEAF_HELPER) == [(_line(NON_LEAF_HELPER, "w -= lr * w.grad"), "ADL020")]
    with pytest.raises(TypeError):
        _load(NON_LEAF_HELPER)["main"]()


def test_the_fix_on_the_attribute_applied_is_silent_and_steps():
    from autograd_doctor.lint.fixes import apply_edits
    findings = lint_source(NON_LEAF_ATTRIBUTE, "case.py")
    fixed, applied = apply_edits(NON_LEAF_ATTRIBUTE, findings, unsafe=True)
    assert applied == 1
    assert fixed == LEAF_ATTRIBUTE
    assert _findings(fixed) == []
    start = torch.linspace(1, 8, steps=8).view(2, 4)
    assert torch.allclose(_load(fixed)["main"](), start - 0.1 * 2 * start)


def test_leaf_returned_by_a_helper_is_silent_and_steps():
    assert _findings(LEAF_HELPER) == []
    torch.manual_seed(0)
    x, y = torch.randn(4, 3), torch.randn(4, 1)  # drawn in main's order: the data, then the weight
    w0 = torch.randn(3).view(3, 1)
    expected = w0 - 0.1 * (2 * x.t().mm(x.mm(w0) - y) / 4)
    assert torch.allclose(_load(LEAF_HELPER)["main"](), expected, atol=1e-6)


# ADL023: a field of a model's result object (`output.loss`) summed across the loop
# that backpropagates it (the cause of r401; r401 itself resets its sum every
# `logging_step` steps, a window's sum, which stays silent as in test_set_t_links).
OUTPUT_LOSS_SUM = textwrap.dedent("""
    from types import SimpleNamespace

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class QA(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(4, 2)

        def forward(self, x, y):
            logits = self.head(x)
            return SimpleNamespace(loss=F.cross_entropy(logits, y), logits=logits)

    def train(model, optimizer, batches, log_every=10):
        train_loss = 0
        logged = []
        for step, (x, y) in enumerate(batches, 1):
            output = model(x, y)
            train_loss += output.loss
            output.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step % log_every == 0:
                logged.append(float(train_loss) / log_every)
        return train_loss, logged

    def main():
        torch.manual_seed(0)
        model = QA()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randn(3, 4), torch.tensor([0, 1, 1])) for _ in range(3)]
        return model, train(model, optimizer, batches)
""")

OUTPUT_LOSS_SUM_FIXED = OUTPUT_LOSS_SUM.replace("train_loss += output.loss\n", "train_loss += output.loss.item()\n")
# correct: the sum starts again on every iteration, or with each logging window
OUTPUT_LOSS_PER_STEP = OUTPUT_LOSS_SUM.replace(
    "        output = model(x, y)\n", "        output = model(x, y)\n        train_loss = 0\n")
OUTPUT_LOSS_PER_WINDOW = OUTPUT_LOSS_SUM.replace(
    "            logged.append(float(train_loss) / log_every)\n",
    "            logged.append(float(train_loss) / log_every)\n            train_loss = 0\n")


def test_result_field_summed_across_the_loop_is_reported():
    assert _findings(OUTPUT_LOSS_SUM) == [(_line(OUTPUT_LOSS_SUM, "train_loss += output.loss"), "ADL023")]
    _, (running, _) = _load(OUTPUT_LOSS_SUM)["main"]()
    assert running.grad_fn is not None  # the running sum holds the iterations' graphs


def test_result_field_summed_as_a_number_is_silent_and_right():
    assert OUTPUT_LOSS_SUM_FIXED != OUTPUT_LOSS_SUM
    assert _findings(OUTPUT_LOSS_SUM_FIXED) == []
    model, (running, _) = _load(OUTPUT_LOSS_SUM_FIXED)["main"]()
    namespace = _load(OUTPUT_LOSS_SUM)
    torch.manual_seed(0)
    reference = namespace["QA"]()
    batches = [(torch.randn(3, 4), torch.tensor([0, 1, 1])) for _ in range(3)]
    expected = 0.0
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(reference.head(x), y)
        expected += loss.item()
        grads = torch.autograd.grad(loss, list(reference.parameters()))
        with torch.no_grad():
            for p, g in zip(reference.parameters(), grads):
                p -= 0.1 * g
    assert abs(running - expected) < 1e-6
    assert all(torch.allclose(p, q) for p, q in zip(model.parameters(), reference.parameters()))


def test_result_field_sum_started_again_each_iteration_or_window_is_silent():
    for source in (OUTPUT_LOSS_PER_STEP, OUTPUT_LOSS_PER_WINDOW):
        assert source != OUTPUT_LOSS_SUM
        assert _findings(source) == []
        _load(source)["main"]()


# ADL003: losses returned by a method of the trainer (`self._calc_loss(fake, real)`)
# computed from what the caller passed it (the generator's output): the
# discriminator's loss goes back through the generator, stepped between the two
# backward passes (r397).
LOSSES_FROM_ARGUMENTS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Trainer:
        def __init__(self):
            self.generator = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
            self.discriminator = nn.Linear(3, 1)
            self.e_opt = torch.optim.SGD(self.generator.parameters(), lr=0.1)
            self.d_opt = torch.optim.SGD(self.discriminator.parameters(), lr=0.1)

        def _calc_loss(self, fake, real):
            d_fake, d_real = self.discriminator(fake), self.discriminator(real)
            e_loss = ((d_fake - 1) ** 2).mean()
            d_loss = (d_fake ** 2).mean() + ((d_real - 1) ** 2).mean()
            return e_loss, d_loss

        def train(self, batches):
            for x, real in batches:
                fake = self.generator(x)
                e_loss, d_loss = self._calc_loss(fake, real)
                self.e_opt.zero_grad()
                e_loss.backward(retain_graph=True)
                self.e_opt.step()
                self.d_opt.zero_grad()
                d_loss.backward()
                self.d_opt.step()

    def main():
        torch.manual_seed(0)
        trainer = Trainer()
        trainer.train([(torch.randn(5, 4), torch.randn(5, 3))])
        return trainer
""")

# the change asked for: both backward passes before the steps
LOSSES_FROM_ARGUMENTS_FIXED = LOSSES_FROM_ARGUMENTS.replace(
    "            self.e_opt.step()\n            self.d_opt.zero_grad()\n            d_loss.backward()\n",
    "            self.d_opt.zero_grad()\n            d_loss.backward()\n            self.e_opt.step()\n")
# correct: the discriminator's loss on the detached output
LOSSES_ON_DETACHED = LOSSES_FROM_ARGUMENTS.replace(
    "d_loss = (d_fake ** 2).mean()", "d_loss = (self.discriminator(fake.detach()) ** 2).mean()")


def test_loss_computed_by_a_method_from_its_argument_is_followed_to_the_caller():
    assert _findings(LOSSES_FROM_ARGUMENTS) == [(_line(LOSSES_FROM_ARGUMENTS, "self.e_opt.step()"), "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(LOSSES_FROM_ARGUMENTS)["main"]()


def test_both_backward_passes_before_the_steps_are_silent_and_right():
    assert LOSSES_FROM_ARGUMENTS_FIXED != LOSSES_FROM_ARGUMENTS
    assert _findings(LOSSES_FROM_ARGUMENTS_FIXED) == []
    trainer = _load(LOSSES_FROM_ARGUMENTS_FIXED)["main"]()
    torch.manual_seed(0)
    generator = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3))
    discriminator = torch.nn.Linear(3, 1)
    x, real = torch.randn(5, 4), torch.randn(5, 3)
    d_fake, d_real = discriminator(generator(x)), discriminator(real)
    e_loss = ((d_fake - 1) ** 2).mean()
    d_loss = (d_fake ** 2).mean() + ((d_real - 1) ** 2).mean()
    g_params, d_params = list(generator.parameters()), list(discriminator.parameters())
    e_grads = torch.autograd.grad(e_loss, g_params, retain_graph=True)
    d_grads = torch.autograd.grad(d_loss, d_params)
    # the generator's step applies the encoder loss's gradient plus what the
    # discriminator's backward added to it; the discriminator's only its own loss's
    d_loss_g = torch.autograd.grad((discriminator(generator(x)) ** 2).mean(), g_params)
    with torch.no_grad():
        expected_g = [p - 0.1 * (a + b) for p, a, b in zip(g_params, e_grads, d_loss_g)]
        expected_d = [p - 0.1 * g for p, g in zip(d_params, d_grads)]
    assert all(torch.allclose(p, q, atol=1e-6) for p, q in zip(trainer.generator.parameters(), expected_g))
    assert all(torch.allclose(p, q, atol=1e-6) for p, q in zip(trainer.discriminator.parameters(), expected_d))


def test_discriminator_loss_on_the_detached_output_is_silent():
    assert LOSSES_ON_DETACHED != LOSSES_FROM_ARGUMENTS
    assert _findings(LOSSES_ON_DETACHED) == []
    _load(LOSSES_ON_DETACHED)["main"]()


# ADL026 (new): an optimizer cleared and stepped with no backward pass between, in a
# method whose only calls between compute values (r405).
STEP_WITHOUT_BACKWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class EpisodicNovelty:
        def __init__(self):
            self.model = nn.Linear(6, 3)
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

        def update(self, obs, actions):
            logits = self.model(obs)
            self.opt.zero_grad()
            loss = F.cross_entropy(logits, actions.to(torch.int64).squeeze())
            loss = loss.mean()
            self.opt.step()
            return loss.item()

    def main():
        torch.manual_seed(0)
        novelty = EpisodicNovelty()
        novelty.update(torch.randn(4, 6), torch.tensor([[0], [1], [2], [1]]))
        return novelty
""")

STEP_WITHOUT_BACKWARD_FIXED = STEP_WITHOUT_BACKWARD.replace(
    "        loss = loss.mean()\n", "        loss = loss.mean()\n        loss.backward()\n")
# correct: a helper of the file between the clear and the step may backpropagate
STEP_AFTER_A_HELPER = STEP_WITHOUT_BACKWARD.replace(
    "        loss = loss.mean()\n", "        loss = loss.mean()\n        backpropagate(loss)\n") + \
    "\ndef backpropagate(loss):\n    loss.backward()\n"


def test_step_with_no_backward_since_the_clear_is_reported():
    assert _findings(STEP_WITHOUT_BACKWARD) == [(_line(STEP_WITHOUT_BACKWARD, "self.opt.step()"), "ADL026")]
    namespace = _load(STEP_WITHOUT_BACKWARD)
    torch.manual_seed(0)
    before = [p.detach().clone() for p in namespace["EpisodicNovelty"]().model.parameters()]
    after = namespace["main"]().model.parameters()
    assert all(torch.equal(a, b) for a, b in zip(before, after))  # the network never moves


def test_step_after_the_backward_is_silent_and_right():
    assert STEP_WITHOUT_BACKWARD_FIXED != STEP_WITHOUT_BACKWARD
    assert _findings(STEP_WITHOUT_BACKWARD_FIXED) == []
    novelty = _load(STEP_WITHOUT_BACKWARD_FIXED)["main"]()
    torch.manual_seed(0)
    reference = torch.nn.Linear(6, 3)
    torch.optim.SGD(reference.parameters(), lr=0.1)
    obs, actions = torch.randn(4, 6), torch.tensor([0, 1, 2, 1])
    grads = torch.autograd.grad(torch.nn.functional.cross_entropy(reference(obs), actions),
                                list(reference.parameters()))
    with torch.no_grad():
        expected = [p - 0.1 * g for p, g in zip(reference.parameters(), grads)]
    assert all(torch.allclose(p, q) for p, q in zip(novelty.model.parameters(), expected))


def test_step_after_a_helper_that_may_backpropagate_is_silent():
    assert _findings(STEP_AFTER_A_HELPER) == []
    _load(STEP_AFTER_A_HELPER)["main"]()


# correct (FQF, tests/bug_reports/fresh/set14): the optimizer handed to the helper
# updates one part of a network (`net.fraction_net`); the later loss comes from another
# method of the same network that uses other parts only, so the step is no claim on it.
HELPER_STEPS_ONE_PART = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 6)
            self.fraction_net = nn.Linear(6, 3)
            self.head = nn.Linear(6, 2)

        def fractions(self, h):
            return torch.softmax(self.fraction_net(h), dim=1)

        def values(self, h):
            return self.head(h)

    def update_params(optim, loss, retain_graph=False):
        optim.zero_grad()
        loss.backward(retain_graph=retain_graph)
        optim.step()

    def main():
        torch.manual_seed(0)
        net = Net()
        fraction_optim = torch.optim.SGD(net.fraction_net.parameters(), lr=0.1)
        value_optim = torch.optim.SGD(list(net.body.parameters()) + list(net.head.parameters()), lr=0.1)
        h = net.body(torch.randn(5, 4))
        fraction_loss = net.fractions(h.detach()).pow(2).sum()
        value_loss = net.values(h).pow(2).mean()
        update_params(fraction_optim, fraction_loss, retain_graph=True)
        update_params(value_optim, value_loss)
        return net
""")


def test_helper_step_of_one_part_before_a_loss_of_other_parts_is_silent():
    assert _findings(HELPER_STEPS_ONE_PART) == []
    _load(HELPER_STEPS_ONE_PART)["main"]()
