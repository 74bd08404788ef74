"""Recall on two causes of misses that recur in every held-out set of
re-creations (docs/lint.md, r240-r259): values handed between methods and
objects, and a layer configured away from its constructor call.  Each case the
linter now reports really fails, its corrected twin stays silent and computes
what a reference computes, and a similar correct pattern stays silent (and
runs)."""

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


def _replace(source: str, old: str, new: str) -> str:
    """A variant of ``source``; ``old`` must be there."""
    assert old in source, old
    return source.replace(old, new)


# ---------------------------------------------------------------------------
# A value kept on `self` by one method and backpropagated in another: `act()`
# keeps the critic's value, `learn()` steps the critic, then backpropagates the
# actor's loss through that value, whose graph saved the critic's old weights.
ATTRIBUTE_FROM_ANOTHER_METHOD = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Agent:
        def __init__(self):
            self.actor = nn.Linear(3, 2)
            self.critic = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
            self.actor_opt = torch.optim.SGD(self.actor.parameters(), lr=0.1)
            self.critic_opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)

        def act(self, states):
            self.value = self.critic(states)
            self.logits = self.actor(states)

        def learn(self, returns):
            advantage = returns - self.value
            critic_loss = advantage.pow(2).mean()
            self.critic_opt.zero_grad()
            critic_loss.backward(retain_graph=True)
            self.critic_opt.step()
            actor_loss = -(self.logits.log_softmax(-1)[:, 0] * advantage.squeeze(1)).mean()
            self.actor_opt.zero_grad()
            actor_loss.backward()
            self.actor_opt.step()

    def main():
        torch.manual_seed(0)
        agent = Agent()
        agent.act(torch.ones(5, 3))
        agent.learn(torch.ones(5, 1))
        return agent.actor.weight.detach().clone(), agent.critic[0].weight.detach().clone()
    """)

# The fix: the actor's loss takes the advantage without the critic's graph.
ATTRIBUTE_DETACHED = _replace(ATTRIBUTE_FROM_ANOTHER_METHOD,
    "(self.logits.log_softmax(-1)[:, 0] * advantage.squeeze(1))",
    "(self.logits.log_softmax(-1)[:, 0] * advantage.detach().squeeze(1))")

# Similar and correct: `learn()` computes a fresh value with `act()` after the step.
ATTRIBUTE_RECOMPUTED = _replace(_replace(_replace(
    ATTRIBUTE_FROM_ANOTHER_METHOD,
    "        actor_loss = -(self.logits", "        self.act(self.states)\n        actor_loss = -(self.logits"),
    "advantage.squeeze(1)).mean()", "(returns - self.value).squeeze(1)).mean()"),
    "        self.value = self.critic(states)", "        self.states = states\n"
    "        self.value = self.critic(states)")


def test_attribute_computed_in_another_method_is_found_and_fails():
    line = _line(ATTRIBUTE_FROM_ANOTHER_METHOD, "self.critic_opt.step()")
    assert _findings(ATTRIBUTE_FROM_ANOTHER_METHOD) == [(line, "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(ATTRIBUTE_FROM_ANOTHER_METHOD)["main"]()


def test_attribute_detached_twin_is_silent_and_matches_a_reference():
    assert _findings(ATTRIBUTE_DETACHED) == []
    actor_weight, critic_weight = _load(ATTRIBUTE_DETACHED)["main"]()
    torch.manual_seed(0)
    actor = torch.nn.Linear(3, 2)
    critic = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    actor_opt = torch.optim.SGD(actor.parameters(), lr=0.1)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    states, returns = torch.ones(5, 3), torch.ones(5, 1)
    advantage = returns - critic(states)
    logits = actor(states)
    critic_opt.zero_grad()
    advantage.pow(2).mean().backward()
    critic_opt.step()
    actor_opt.zero_grad()
    (-(logits.log_softmax(-1)[:, 0] * advantage.detach().squeeze(1)).mean()).backward()
    actor_opt.step()
    assert torch.equal(actor_weight, actor.weight.detach()) and torch.equal(critic_weight, critic[0].weight.detach())


def test_attribute_recomputed_after_the_step_is_silent_and_runs():
    assert _findings(ATTRIBUTE_RECOMPUTED) == []
    _load(ATTRIBUTE_RECOMPUTED)["main"]()


# ---------------------------------------------------------------------------
# A method that backpropagates through a value handed in by keyword and steps,
# called twice with one encoding: the second call's backward goes through the
# encoder's graph, which the first call's step changed.
KEYWORD_ARGUMENT_TO_A_STEPPING_METHOD = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Matcher:
        def __init__(self):
            self.encoder = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
            self.opt = torch.optim.SGD(self.encoder.parameters(), lr=0.1)

        def pull(self, other, anchor=None):
            loss = (anchor - self.encoder(other)).pow(2).sum()
            self.opt.zero_grad()
            loss.backward(retain_graph=True)
            self.opt.step()

        def fit(self, x, partners):
            anchor = self.encoder(x)
            self.pull(partners[0], anchor=anchor)
            self.pull(partners[1], anchor=anchor)
            return self.encoder[0].weight.detach().clone()

    def main():
        torch.manual_seed(0)
        return Matcher().fit(torch.ones(1, 3), [torch.zeros(1, 3), torch.full((1, 3), 2.0)])
    """)

# The fix: each call gets a fresh encoding.
KEYWORD_ARGUMENT_RECOMPUTED = _replace(KEYWORD_ARGUMENT_TO_A_STEPPING_METHOD,
    "self.pull(partners[1], anchor=anchor)", "self.pull(partners[1], anchor=self.encoder(x))")

# Similar and correct: a method that only backpropagates (the caller steps once).
KEYWORD_ARGUMENT_NO_STEP = _replace(_replace(_replace(
    KEYWORD_ARGUMENT_TO_A_STEPPING_METHOD,
    "        self.opt.zero_grad()\n        loss.backward", "        loss.backward"),
    "        self.opt.step()\n", ""),
    "        return self.encoder[0]", "        self.opt.step()\n        return self.encoder[0]")
KEYWORD_ARGUMENT_NO_STEP = _replace(KEYWORD_ARGUMENT_NO_STEP, "        anchor = self.encoder(x)",
                                    "        self.opt.zero_grad()\n        anchor = self.encoder(x)")


def test_keyword_argument_of_a_stepping_method_is_found_and_fails():
    line = _line(KEYWORD_ARGUMENT_TO_A_STEPPING_METHOD, "self.opt.step()")
    assert _findings(KEYWORD_ARGUMENT_TO_A_STEPPING_METHOD) == [(line, "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(KEYWORD_ARGUMENT_TO_A_STEPPING_METHOD)["main"]()


def test_keyword_argument_recomputed_is_silent_and_matches_a_reference():
    assert _findings(KEYWORD_ARGUMENT_RECOMPUTED) == []
    weight = _load(KEYWORD_ARGUMENT_RECOMPUTED)["main"]()
    torch.manual_seed(0)
    encoder = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 4))
    opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
    x = torch.ones(1, 3)
    for other in (torch.zeros(1, 3), torch.full((1, 3), 2.0)):
        opt.zero_grad()
        (encoder(x) - encoder(other)).pow(2).sum().backward()
        opt.step()
    assert torch.equal(weight, encoder[0].weight.detach())


def test_keyword_argument_without_step_is_silent_and_runs():
    assert _findings(KEYWORD_ARGUMENT_NO_STEP) == []
    _load(KEYWORD_ARGUMENT_NO_STEP)["main"]()


# ---------------------------------------------------------------------------
# Per-head losses taken from a list of outputs with `for ... in zip(...)`, one
# step per head, with parameter groups given as a list: the next head's backward
# goes through the trunk's graph, computed before the loop and changed by the step.
STEP_PER_ELEMENT_OF_A_ZIP = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
            self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])

        def forward(self, x):
            h = torch.tanh(self.trunk(x))
            return [head(h) for head in self.heads]

    def train(x, targets):
        torch.manual_seed(0)
        model = Heads()
        groups = [{"params": model.trunk.parameters()}, {"params": model.heads.parameters(), "lr": 0.05}]
        optimizer = torch.optim.SGD(groups, lr=0.1)
        outputs = model(x)
        for output, target in zip(outputs, targets):
            loss = F.mse_loss(output, target)
            optimizer.zero_grad()
            loss.backward(retain_graph=True)
            optimizer.step()
        return model.trunk[0].weight.detach().clone()

    def main():
        return train(torch.ones(2, 3), [torch.zeros(2, 1), torch.ones(2, 1)])
    """)

# The fix: the outputs are computed again for each head.
STEP_PER_ELEMENT_RECOMPUTED = _replace(
    STEP_PER_ELEMENT_OF_A_ZIP,
    "    outputs = model(x)\n    for output, target in zip(outputs, targets):\n",
    "    for i, target in enumerate(targets):\n        output = model(x)[i]\n")

# Similar and correct: the per-head losses summed, one backward and one step.
ONE_STEP_AFTER_THE_ZIP = _replace(
    STEP_PER_ELEMENT_OF_A_ZIP,
    "    for output, target in zip(outputs, targets):\n"
    "        loss = F.mse_loss(output, target)\n"
    "        optimizer.zero_grad()\n"
    "        loss.backward(retain_graph=True)\n"
    "        optimizer.step()\n",
    "    loss = 0\n"
    "    for output, target in zip(outputs, targets):\n"
    "        loss = loss + F.mse_loss(output, target)\n"
    "    optimizer.zero_grad()\n"
    "    loss.backward()\n"
    "    optimizer.step()\n")


def test_step_per_element_of_a_zip_is_found_and_fails():
    line = _line(STEP_PER_ELEMENT_OF_A_ZIP, "optimizer.step()")
    assert _findings(STEP_PER_ELEMENT_OF_A_ZIP) == [(line, "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(STEP_PER_ELEMENT_OF_A_ZIP)["main"]()


def test_step_per_element_recomputed_is_silent_and_matches_a_reference():
    assert _findings(STEP_PER_ELEMENT_RECOMPUTED) == []
    namespace = _load(STEP_PER_ELEMENT_RECOMPUTED)
    weight = namespace["main"]()
    torch.manual_seed(0)
    model = namespace["Heads"]()
    optimizer = torch.optim.SGD([{"params": model.trunk.parameters()},
                                 {"params": model.heads.parameters(), "lr": 0.05}], lr=0.1)
    x = torch.ones(2, 3)
    for i, target in enumerate([torch.zeros(2, 1), torch.ones(2, 1)]):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x)[i], target).backward()
        optimizer.step()
    assert torch.equal(weight, model.trunk[0].weight.detach())


def test_one_step_after_the_zip_is_silent_and_runs():
    assert _findings(ONE_STEP_AFTER_THE_ZIP) == []
    _load(ONE_STEP_AFTER_THE_ZIP)["main"]()


# ---------------------------------------------------------------------------
# An activation chosen by name from a dict of classes, the name handed down
# through two constructors: the block's ReLU keeps its output, which `h += x`
# then overwrites.
ACTIVATION_CHOSEN_BY_NAME = textwrap.dedent("""
    import torch
    import torch.nn as nn

    ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "tanh": nn.Tanh}

    class Block(nn.Module):
        def __init__(self, dim, act="gelu"):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.act = ACTIVATIONS[act]()

        def forward(self, x):
            h = self.act(self.fc(x))
            h += x
            return h

    class Net(nn.Module):
        def __init__(self, dim, depth, act="gelu"):
            super().__init__()
            self.blocks = nn.Sequential(*[Block(dim, act=act) for _ in range(depth)])

        def forward(self, x):
            return self.blocks(x)

    def main():
        torch.manual_seed(0)
        net = Net(3, 2, act="relu")
        x = torch.ones(2, 3)
        net(x).sum().backward()
        return [p.grad.clone() for p in net.parameters()]
    """)

# The fix: the residual added out of place.
ACTIVATION_CHOSEN_OUT_OF_PLACE = _replace(ACTIVATION_CHOSEN_BY_NAME,"h += x", "h = h + x")

# Similar and correct: the same network built with GELU, which keeps its input.
ACTIVATION_CHOSEN_GELU = _replace(ACTIVATION_CHOSEN_BY_NAME,'Net(3, 2, act="relu")', 'Net(3, 2)')

# Unknown: a name computed at run time.
ACTIVATION_CHOSEN_AT_RUN_TIME = _replace(
    ACTIVATION_CHOSEN_BY_NAME, 'Net(3, 2, act="relu")', 'Net(3, 2, act=sorted(ACTIVATIONS)[0])')


def test_activation_chosen_by_name_is_found_and_fails():
    line = _line(ACTIVATION_CHOSEN_BY_NAME, "h += x")
    assert _findings(ACTIVATION_CHOSEN_BY_NAME) == [(line, "ADL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(ACTIVATION_CHOSEN_BY_NAME)["main"]()


def test_activation_chosen_by_name_fixed_is_silent_and_matches_a_reference():
    assert _findings(ACTIVATION_CHOSEN_OUT_OF_PLACE) == []
    grads = _load(ACTIVATION_CHOSEN_OUT_OF_PLACE)["main"]()
    torch.manual_seed(0)
    layers = [torch.nn.Linear(3, 3) for _ in range(2)]
    h = torch.ones(2, 3)
    for layer in layers:
        h = torch.relu(layer(h)) + h
    h.sum().backward()
    reference = [p.grad for layer in layers for p in layer.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(grads, reference)) and len(grads) == len(reference)


def test_activation_that_keeps_its_input_or_is_unknown_is_silent_and_runs():
    assert _findings(ACTIVATION_CHOSEN_GELU) == []
    _load(ACTIVATION_CHOSEN_GELU)["main"]()
    assert _findings(ACTIVATION_CHOSEN_AT_RUN_TIME) == []
    _load(ACTIVATION_CHOSEN_AT_RUN_TIME)["main"]()


# An activation kept as a function, its default `torch.sigmoid` (which keeps its
# output): `h *= 2` overwrites it.
ACTIVATION_KEPT_AS_A_FUNCTION = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Gate(nn.Module):
        def __init__(self, dim, activation=torch.sigmoid):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.activation = activation

        def forward(self, x):
            h = self.activation(self.fc(x))
            h *= 2
            return h

    def main():
        torch.manual_seed(0)
        gate = Gate(3)
        gate(torch.ones(2, 3)).sum().backward()
        return [p.grad.clone() for p in gate.parameters()]
    """)

ACTIVATION_FUNCTION_OUT_OF_PLACE = _replace(ACTIVATION_KEPT_AS_A_FUNCTION,"h *= 2", "h = h * 2")

# Similar and correct: every construction gives `F.silu`, which keeps its input.
ACTIVATION_FUNCTION_SILU = _replace(ACTIVATION_KEPT_AS_A_FUNCTION,"gate = Gate(3)", "gate = Gate(3, F.silu)")


def test_activation_kept_as_a_function_is_found_and_fails():
    line = _line(ACTIVATION_KEPT_AS_A_FUNCTION, "h *= 2")
    assert _findings(ACTIVATION_KEPT_AS_A_FUNCTION) == [(line, "ADL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(ACTIVATION_KEPT_AS_A_FUNCTION)["main"]()


def test_activation_function_fixed_is_silent_and_matches_a_reference():
    assert _findings(ACTIVATION_FUNCTION_OUT_OF_PLACE) == []
    grads = _load(ACTIVATION_FUNCTION_OUT_OF_PLACE)["main"]()
    torch.manual_seed(0)
    fc = torch.nn.Linear(3, 3)
    (torch.sigmoid(fc(torch.ones(2, 3))) * 2).sum().backward()
    assert torch.equal(grads[0], fc.weight.grad) and torch.equal(grads[1], fc.bias.grad)


def test_activation_function_that_keeps_its_input_is_silent_and_runs():
    assert _findings(ACTIVATION_FUNCTION_SILU) == []
    _load(ACTIVATION_FUNCTION_SILU)["main"]()


# ---------------------------------------------------------------------------
# Log-probabilities collected in a list and handed to an update function that
# steps once per element: the next element's graph saved the policy's old weights.
LIST_HANDED_TO_A_STEPPING_FUNCTION = textwrap.dedent("""
    import torch
    import torch.nn as nn

    policy = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)

    def update(log_probs, rewards):
        for log_prob, reward in zip(log_probs, rewards):
            loss = -log_prob * reward
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def main():
        torch.manual_seed(0)
        log_probs = []
        for t in range(3):
            logits = policy(torch.full((3,), float(t)))
            log_probs.append(logits.log_softmax(-1)[0])
        update(log_probs, [1.0, 0.5, 0.2])
        return policy[0].weight.detach().clone()
    """)

# The fix: one step for the episode's summed loss.
LIST_SUMMED_BEFORE_THE_STEP = _replace(
    LIST_HANDED_TO_A_STEPPING_FUNCTION,
    "    for log_prob, reward in zip(log_probs, rewards):\n"
    "        loss = -log_prob * reward\n"
    "        optimizer.zero_grad()\n"
    "        loss.backward()\n"
    "        optimizer.step()\n",
    "    loss = sum(-log_prob * reward for log_prob, reward in zip(log_probs, rewards))\n"
    "    optimizer.zero_grad()\n"
    "    loss.backward()\n"
    "    optimizer.step()\n")

# Similar and correct: the list holds the states, and the update computes each
# log-probability after the previous step.
LIST_OF_STATES = _replace(_replace(
    LIST_HANDED_TO_A_STEPPING_FUNCTION,
    "        logits = policy(torch.full((3,), float(t)))\n"
    "        log_probs.append(logits.log_softmax(-1)[0])\n",
    "        log_probs.append(torch.full((3,), float(t)))\n"),
    "        loss = -log_prob * reward\n",
    "        loss = -policy(log_prob).log_softmax(-1)[0] * reward\n")

# The same hazard with the list computed at the call, each element from its own
# forward pass before the function's first step: found too.
LIST_COMPUTED_AT_THE_CALL = _replace(_replace(
    LIST_HANDED_TO_A_STEPPING_FUNCTION,
    "        logits = policy(torch.full((3,), float(t)))\n"
    "        log_probs.append(logits.log_softmax(-1)[0])\n",
    "        log_probs.append(torch.full((3,), float(t)))\n"),
    "    update(log_probs, [1.0, 0.5, 0.2])\n",
    "    update([policy(s).log_softmax(-1)[0] for s in log_probs], [1.0, 0.5, 0.2])\n")


def test_list_handed_to_a_stepping_function_is_found_and_fails():
    line = _line(LIST_HANDED_TO_A_STEPPING_FUNCTION, "optimizer.step()")
    assert _findings(LIST_HANDED_TO_A_STEPPING_FUNCTION) == [(line, "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(LIST_HANDED_TO_A_STEPPING_FUNCTION)["main"]()
    assert _findings(LIST_COMPUTED_AT_THE_CALL) == [(line, "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(LIST_COMPUTED_AT_THE_CALL)["main"]()


def test_list_summed_before_the_step_is_silent_and_matches_a_reference():
    assert _findings(LIST_SUMMED_BEFORE_THE_STEP) == []
    torch.manual_seed(0)  # the program builds its policy when loaded: the reference's weights
    namespace = _load(LIST_SUMMED_BEFORE_THE_STEP)
    weight = namespace["main"]()
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    torch.manual_seed(0)
    log_probs = [policy(torch.full((3,), float(t))).log_softmax(-1)[0] for t in range(3)]
    optimizer.zero_grad()
    sum(-lp * r for lp, r in zip(log_probs, [1.0, 0.5, 0.2])).backward()
    optimizer.step()
    assert torch.equal(weight, policy[0].weight.detach())


def test_list_of_states_is_silent_and_runs():
    assert _findings(LIST_OF_STATES) == []
    _load(LIST_OF_STATES)["main"]()


# ---------------------------------------------------------------------------
# The pix2pix layout: `optimize()` calls `forward()`, then `backward_D()` and the
# discriminator's step, then `backward_G()`, whose backward goes through
# `self.d_fake`, kept by `forward()` with the discriminator's old weights.
ATTRIBUTE_BACKPROPAGATED_BY_A_HELPER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class GAN:
        def __init__(self):
            self.G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 2))
            self.D = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
            self.opt_G = torch.optim.SGD(self.G.parameters(), lr=0.1)
            self.opt_D = torch.optim.SGD(self.D.parameters(), lr=0.1)

        def forward(self, z):
            self.fake = self.G(z)
            self.d_fake = self.D(self.fake)

        def backward_D(self, real):
            self.loss_D = F.softplus(self.d_fake).mean() + F.softplus(-self.D(real)).mean()
            self.loss_D.backward(retain_graph=True)

        def backward_G(self):
            self.loss_G = F.softplus(-self.d_fake).mean()
            self.loss_G.backward()

        def optimize(self, z, real):
            self.forward(z)
            self.opt_D.zero_grad()
            self.backward_D(real)
            self.opt_D.step()
            self.opt_G.zero_grad()
            self.backward_G()
            self.opt_G.step()

    def main():
        torch.manual_seed(0)
        gan = GAN()
        gan.optimize(torch.ones(3, 2), torch.zeros(3, 2))
        return gan.G[0].weight.detach().clone()
    """)

# The fix: the generator's loss asks the stepped discriminator again.
ATTRIBUTE_ASKED_AGAIN = _replace(ATTRIBUTE_BACKPROPAGATED_BY_A_HELPER,
                                 "self.loss_G = F.softplus(-self.d_fake).mean()",
                                 "self.loss_G = F.softplus(-self.D(self.fake)).mean()")

# Similar and correct: the discriminator's loss on a detached fake, computed in
# `backward_D` itself (pix2pix as written).
ATTRIBUTE_DETACHED_FOR_THE_DISCRIMINATOR = _replace(_replace(
    ATTRIBUTE_ASKED_AGAIN,
    "        self.d_fake = self.D(self.fake)\n", ""),
    "F.softplus(self.d_fake).mean()", "F.softplus(self.D(self.fake.detach())).mean()")


def test_attribute_backpropagated_by_a_helper_is_found_and_fails():
    line = _line(ATTRIBUTE_BACKPROPAGATED_BY_A_HELPER, "self.opt_D.step()")
    assert _findings(ATTRIBUTE_BACKPROPAGATED_BY_A_HELPER) == [(line, "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(ATTRIBUTE_BACKPROPAGATED_BY_A_HELPER)["main"]()


def test_attribute_asked_again_is_silent_and_matches_a_reference():
    assert _findings(ATTRIBUTE_ASKED_AGAIN) == []
    weight = _load(ATTRIBUTE_ASKED_AGAIN)["main"]()
    torch.manual_seed(0)
    G = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    D = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    opt_G, opt_D = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)
    softplus = torch.nn.functional.softplus
    fake = G(torch.ones(3, 2))
    opt_D.zero_grad()
    (softplus(D(fake)).mean() + softplus(-D(torch.zeros(3, 2))).mean()).backward(retain_graph=True)
    opt_D.step()
    opt_G.zero_grad()
    softplus(-D(fake)).mean().backward()
    opt_G.step()
    assert torch.equal(weight, G[0].weight.detach())


def test_attribute_detached_for_the_discriminator_is_silent_and_runs():
    assert _findings(ATTRIBUTE_DETACHED_FOR_THE_DISCRIMINATOR) == []
    _load(ATTRIBUTE_DETACHED_FOR_THE_DISCRIMINATOR)["main"]()
