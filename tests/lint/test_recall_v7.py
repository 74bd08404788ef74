"""Recall on the causes of misses in the r140-r160 re-creations: each case the
linter now reports really fails (or, for a silent bug, shows it), its
corrected twin stays silent and computes what a reference computes, and a
similar correct pattern stays silent (and really runs)."""

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


# An LSTM's state unpacked as a nested tuple, `out, (h, c) = lstm(x, (h, c))`, is
# an output of the call like `out` is: carried into the next batch without
# `detach()`, the next backward goes back through the step's old weights.
LSTM_STATE_CARRIED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def train(batches):
        lstm = nn.LSTM(3, 4, batch_first=True)
        head = nn.Linear(4, 1)
        optimizer = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)
        h = torch.zeros(1, 2, 4)
        c = torch.zeros(1, 2, 4)
        for x, y in batches:
            out, (h, c) = lstm(x, (h, c))
            loss = ((head(out[:, -1]) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward(retain_graph=True)
            optimizer.step()
        return lstm, head
    """)

LSTM_STATE_DETACHED = LSTM_STATE_CARRIED.replace(
    "out, (h, c) = lstm(x, (h, c))", "out, (h, c) = lstm(x, (h.detach(), c.detach()))")

# The state drawn afresh for every batch: nothing is carried.
LSTM_STATE_PER_BATCH = LSTM_STATE_CARRIED.replace(
    "out, (h, c) = lstm(x, (h, c))", "out, (h, c) = lstm(x, (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4)))")


def _batches():
    torch.manual_seed(0)
    return [(torch.randn(2, 5, 3), torch.randn(2, 1)) for _ in range(3)]


def test_nested_tuple_state_carried_across_a_step_is_found():
    assert _findings(LSTM_STATE_CARRIED) == [(16, "ADL003")]
    with pytest.raises(RuntimeError, match="inplace operation"):
        _load(LSTM_STATE_CARRIED)["train"](_batches())


def test_nested_tuple_state_detached_is_silent_and_trains_like_truncated_bptt():
    assert _findings(LSTM_STATE_DETACHED) == []
    batches = _batches()
    torch.manual_seed(1)
    lstm, head = _load(LSTM_STATE_DETACHED)["train"](batches)
    # reference: the same loop written with the state detached by hand, same seed
    torch.manual_seed(1)
    ref_lstm = torch.nn.LSTM(3, 4, batch_first=True)
    ref_head = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(list(ref_lstm.parameters()) + list(ref_head.parameters()), lr=0.1)
    h, c = torch.zeros(1, 2, 4), torch.zeros(1, 2, 4)
    for x, y in batches:
        out, (h, c) = ref_lstm(x, (h.detach(), c.detach()))
        loss = ((ref_head(out[:, -1]) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    for p, q in zip(lstm.parameters(), ref_lstm.parameters()):
        assert torch.equal(p, q)


def test_nested_tuple_state_made_per_batch_is_silent_and_runs():
    assert _findings(LSTM_STATE_PER_BATCH) == []
    _load(LSTM_STATE_PER_BATCH)["train"](_batches())


# A helper that writes its parameter in place (`batch -= mean` on every path) writes
# what its caller passes: here the output of `tanh`, which tanh's backward needs.
HELPER_WRITES_ARGUMENT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def subtract_mean(batch):
        mean = torch.full_like(batch.detach(), 0.5)
        batch -= mean

    def train(x, target):
        net = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        y = net(x)
        subtract_mean(y)
        loss = ((y - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return net
    """)

# The helper returns the difference instead, and the caller uses it.
HELPER_RETURNS_DIFFERENCE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def subtract_mean(batch):
        mean = torch.full_like(batch.detach(), 0.5)
        return batch - mean

    def train(x, target):
        net = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        y = net(x)
        y = subtract_mean(y)
        loss = ((y - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return net
    """)

# The same in-place helper on a copy that nothing saved (`y.clone()` feeds only `-`),
# and a helper that writes only under a flag the caller leaves off.
HELPER_WRITES_A_COPY = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def subtract_mean(batch):
        mean = torch.full_like(batch.detach(), 0.5)
        batch -= mean

    def shift(batch, inplace=False):
        if inplace:
            batch += 1.0
        return batch

    def train(x, target):
        net = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        y = net(x)
        z = y.clone()
        subtract_mean(z)
        w = shift(y)
        loss = ((z - target) ** 2).mean() + w.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return net
    """)


def _data():
    torch.manual_seed(0)
    return torch.randn(4, 3), torch.randn(4, 3)


def test_helper_writing_its_argument_after_a_save_is_found_at_the_call():
    assert _findings(HELPER_WRITES_ARGUMENT) == [(13, "ADL001")]
    with pytest.raises(RuntimeError, match="inplace operation"):
        _load(HELPER_WRITES_ARGUMENT)["train"](*_data())


def test_helper_returning_the_difference_is_silent_and_matches_a_reference():
    assert _findings(HELPER_RETURNS_DIFFERENCE) == []
    x, target = _data()
    torch.manual_seed(1)
    net = _load(HELPER_RETURNS_DIFFERENCE)["train"](x, target)
    torch.manual_seed(1)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    loss = ((ref(x) - 0.5 - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    for p, q in zip(net.parameters(), ref.parameters()):
        assert torch.allclose(p, q)


def test_helper_writing_a_copy_or_only_under_a_flag_is_silent_and_runs():
    assert _findings(HELPER_WRITES_A_COPY) == []
    _load(HELPER_WRITES_A_COPY)["train"](*_data())


# A same-file module that writes its input (an in-place ReLU first) but returns
# `out + x`, an addition that keeps nothing: the in-place module after it in a
# Sequential breaks nothing.  One that returns the input it wrote does.
RESIDUAL_UNITS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class ResidualConvUnit(nn.Module):
        def __init__(self, features):
            super().__init__()
            self.conv = nn.Conv2d(features, features, 3, padding=1)
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            out = self.relu(x)
            out = self.conv(out)
            return out + x

    def run():
        torch.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), ResidualConvUnit(2), ResidualConvUnit(2))
        net(torch.randn(2, 1, 5, 5)).sum().backward()
    """)

INPLACE_UNITS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Swish(nn.Module):
        def forward(self, x):
            return x.mul_(torch.sigmoid(x))

    def run():
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), Swish())
        net(torch.randn(2, 3)).sum().backward()
    """)


def test_module_returning_a_sum_after_writing_its_input_keeps_nothing_for_the_next_layer():
    assert _findings(RESIDUAL_UNITS) == []
    _load(RESIDUAL_UNITS)["run"]()


def test_module_returning_the_input_it_wrote_is_still_taken_to_overwrite_what_was_kept():
    assert _findings(INPLACE_UNITS) == [(11, "ADL001")]
    with pytest.raises(RuntimeError, match="inplace operation"):
        _load(INPLACE_UNITS)["run"]()


# A trainer whose methods take the discriminator's predictions as arguments: the
# generator's update steps (over a filtered parameter list) before the
# discriminator's update backpropagates through the same predictions, whose graph
# saved the generator's old weights.
TRAINER_METHODS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class GAN(nn.Module):
        def __init__(self):
            super().__init__()
            self.gen = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 2))
            self.dis = nn.Linear(2, 1)
            gen_params = list(self.gen.parameters())
            self.gen_opt = torch.optim.SGD([p for p in gen_params if p.requires_grad], lr=0.1)
            self.dis_opt = torch.optim.SGD(self.dis.parameters(), lr=0.1)

        def gen_update(self, fake_preds):
            loss = -fake_preds.mean()
            loss.backward(retain_graph=True)
            self.gen_opt.step()

        def dis_update(self, real_preds, fake_preds):
            loss = fake_preds.mean() - real_preds.mean()
            loss.backward()
            self.dis_opt.step()

        def update(self, z, real):
            self.gen_opt.zero_grad()
            self.dis_opt.zero_grad()
            fake_preds = self.dis(self.gen(z))
            real_preds = self.dis(real)
            self.gen_update(fake_preds)
            self.dis_update(real_preds, fake_preds)
    """)

# The discriminator's update first, then the generator's on fresh predictions.
TRAINER_METHODS_FIXED = TRAINER_METHODS.replace(
    """        self.gen_update(fake_preds)
        self.dis_update(real_preds, fake_preds)""",
    """        self.dis_update(real_preds, self.dis(self.gen(z).detach()))
        self.gen_opt.zero_grad()
        self.gen_update(self.dis(self.gen(z)))""")
assert TRAINER_METHODS_FIXED != TRAINER_METHODS

# Methods that only compute (no step, no backward), called in the same order.
TRAINER_METHODS_COMPUTE_ONLY = TRAINER_METHODS.replace(
    "loss.backward(retain_graph=True)\n        self.gen_opt.step()", "return loss").replace(
    "loss.backward()\n        self.dis_opt.step()", "return loss")


def _gan_data():
    torch.manual_seed(0)
    return torch.randn(4, 2), torch.randn(4, 2)


def test_step_in_a_method_before_another_method_backpropagates_its_argument_is_found():
    assert _findings(TRAINER_METHODS) == [(17, "ADL003")]
    gan = _load(TRAINER_METHODS)["GAN"]()
    with pytest.raises(RuntimeError, match="inplace operation"):
        gan.update(*_gan_data())


def test_discriminator_update_first_is_silent_and_matches_a_reference():
    assert _findings(TRAINER_METHODS_FIXED) == []
    z, real = _gan_data()
    torch.manual_seed(1)
    gan = _load(TRAINER_METHODS_FIXED)["GAN"]()
    gan.update(z, real)
    torch.manual_seed(1)
    gen = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh(), torch.nn.Linear(2, 2))
    dis = torch.nn.Linear(2, 1)
    gen_opt = torch.optim.SGD(gen.parameters(), lr=0.1)
    dis_opt = torch.optim.SGD(dis.parameters(), lr=0.1)
    gen_opt.zero_grad()
    dis_opt.zero_grad()
    (dis(gen(z).detach()).mean() - dis(real).mean()).backward()
    dis_opt.step()
    gen_opt.zero_grad()
    (-dis(gen(z)).mean()).backward()
    gen_opt.step()
    for p, q in zip(list(gan.gen.parameters()) + list(gan.dis.parameters()),
                    list(gen.parameters()) + list(dis.parameters())):
        assert torch.allclose(p, q)


def test_methods_that_only_compute_are_silent_and_run():
    assert "self.gen_opt.step()" not in TRAINER_METHODS_COMPUTE_ONLY
    assert _findings(TRAINER_METHODS_COMPUTE_ONLY) == []
    _load(TRAINER_METHODS_COMPUTE_ONLY)["GAN"]().update(*_gan_data())


# An update method called once per batch that clears the critic's optimizer but
# steps the actor's without ever clearing it: each call adds to the old gradients.
UPDATE_CLEARS_ONE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Agent:
        def __init__(self):
            self.actor = nn.Linear(2, 2)
            self.critic = nn.Linear(2, 1)
            self.actor_optimizer = torch.optim.SGD(self.actor.parameters(), lr=0.0)
            self.critic_optimizer = torch.optim.SGD(self.critic.parameters(), lr=0.0)

        def update(self, states):
            critic_loss = self.critic(states).pow(2).mean()
            self.critic_optimizer.zero_grad()
            critic_loss.backward()
            self.critic_optimizer.step()
            actor_loss = -self.actor(states).log_softmax(-1)[:, 0].mean()
            actor_loss.backward()
            self.actor_optimizer.step()
    """)

UPDATE_CLEARS_BOTH = UPDATE_CLEARS_ONE.replace(
    "        actor_loss.backward()\n", "        self.actor_optimizer.zero_grad()\n        actor_loss.backward()\n")

# The actor's gradients cleared by the training loop that calls `update()`.
UPDATE_CLEARED_BY_ITS_CALLER = UPDATE_CLEARS_ONE + textwrap.dedent("""
    def train(agent, batches):
        for states in batches:
            agent.actor_optimizer.zero_grad()
            agent.update(states)
    """)


def test_update_that_clears_one_optimizer_and_steps_another_is_found_and_accumulates():
    assert _findings(UPDATE_CLEARS_ONE) == [(19, "ADL018")]
    torch.manual_seed(0)
    agent = _load(UPDATE_CLEARS_ONE)["Agent"]()
    states = torch.randn(3, 2)
    agent.update(states)
    first = agent.actor.weight.grad.clone()
    agent.update(states)  # learning rate 0: the same gradient again, added to the first
    assert torch.allclose(agent.actor.weight.grad, 2 * first)


def test_update_that_clears_both_is_silent_and_gives_one_batch_gradient():
    assert UPDATE_CLEARS_BOTH != UPDATE_CLEARS_ONE
    assert _findings(UPDATE_CLEARS_BOTH) == []
    torch.manual_seed(0)
    agent = _load(UPDATE_CLEARS_BOTH)["Agent"]()
    states = torch.randn(3, 2)
    agent.update(states)
    agent.update(states)
    reference = torch.autograd.grad(-agent.actor(states).log_softmax(-1)[:, 0].mean(), agent.actor.weight)[0]
    assert torch.allclose(agent.actor.weight.grad, reference)


def test_update_whose_caller_clears_is_silent_and_runs():
    assert _findings(UPDATE_CLEARED_BY_ITS_CALLER) == []
    namespace = _load(UPDATE_CLEARED_BY_ITS_CALLER)
    namespace["train"](namespace["Agent"](), [torch.randn(3, 2) for _ in range(2)])
