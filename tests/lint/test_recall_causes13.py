"""Recall causes of r566-r580 (docs/lint.md, "Recall causes worked on (r566-r580)").

* ADL020 (r574, r554): an optimizer handed tensors computed from tensors that
  require grad (`[p * gain for p in leaves]`, a cast after `requires_grad=True`).
* ADL001 (r580): a write to an input that the file's own `torch.autograd.Function`
  saves (`ctx.save_for_backward(x)` in its `forward`), after `Fn.apply(x)`.
* ADL017 (r573): an LSTM's state stored into a tuple of attributes, directly
  (`out, (self.h, self.c) = self.lstm(x, (self.h, self.c))`) or through a name.
* ADL014 (r576): a leaf made with `requires_grad=True` in `__init__` and written in
  place later in the same `__init__` (`self.keys[:] += offset`), the class built
  in the file with gradients on.
* ADL032 (r569, r579): a TD target built in a helper method of the class that
  returns the loss (`critic_loss()`, `losses()`), backpropagated and stepped by
  another method of the same class (`update()`, `learn()`).

Each cause: a fresh shape (written before the rule was run on it), buggy -> the
finding at its line with its help, the help applied -> correct (checked with
torch against a hand-written version), correct near twins silent."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _found(source: str, code: str, name: str = "prog.py"):
    return [(f.line, f.message) for f in lint_source(source, name) if f.code == code]


def _run(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<prog>", "exec"), namespace)
    return namespace


# ----- ADL032: the TD target in a helper method, backward and step in the caller -----

TD_HELPER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class DQNLearner:
        def __init__(self, n_obs=5, n_act=3, discount=0.9):
            self.q_net = nn.Sequential(nn.Linear(n_obs, 16), nn.ReLU(), nn.Linear(16, n_act))
            self.opt = torch.optim.SGD(self.q_net.parameters(), lr=0.1)
            self.discount = discount

        def compute_loss(self, obs, act, rew, next_obs, dones):
            q_pred = self.q_net(obs).gather(1, act[:, None]).squeeze(1)
            q_next = self.q_net(next_obs).max(1)[0]
            q_target = rew + self.discount * q_next * (1 - dones)
            loss = F.mse_loss(q_pred, q_target)
            return {"loss": loss, "q": q_pred.mean().item()}

        def train_step(self, batch):
            out = self.compute_loss(*batch)
            self.opt.zero_grad()
            out["loss"].backward()
            self.opt.step()
            return out["q"]
""")

TD_NO_GRAD = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class DQNLearner:
        def __init__(self, n_obs=5, n_act=3, discount=0.9):
            self.q_net = nn.Sequential(nn.Linear(n_obs, 16), nn.ReLU(), nn.Linear(16, n_act))
            self.opt = torch.optim.SGD(self.q_net.parameters(), lr=0.1)
            self.discount = discount

        def compute_loss(self, obs, act, rew, next_obs, dones):
            q_pred = self.q_net(obs).gather(1, act[:, None]).squeeze(1)
            with torch.no_grad():
                q_next = self.q_net(next_obs).max(1)[0]
                q_target = rew + self.discount * q_next * (1 - dones)
            loss = F.mse_loss(q_pred, q_target)
            return {"loss": loss, "q": q_pred.mean().item()}

        def train_step(self, batch):
            out = self.compute_loss(*batch)
            self.opt.zero_grad()
            out["loss"].backward()
            self.opt.step()
            return out["q"]
""")

TD_ONLY_DETACHED_PART = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Agent:
        def __init__(self, gamma=0.99):
            self.actor = nn.Linear(4, 2)
            self.critic = nn.Linear(4, 1)
            self.actor_opt = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()))
            self.gamma = gamma

        def losses(self, s, a, r, s2):
            value = self.critic(s).squeeze(-1)
            td_target = r + self.gamma * self.critic(s2).squeeze(-1)
            advantage = td_target - value
            logp = torch.log_softmax(self.actor(s), -1).gather(1, a[:, None]).squeeze(1)
            actor_loss = -(logp * advantage.detach()).mean()
            critic_err = advantage.pow(2).mean()
            return actor_loss, critic_err

        def learn(self, s, a, r, s2):
            actor_loss, critic_err = self.losses(s, a, r, s2)
            self.actor_opt.zero_grad()
            actor_loss.backward()
            self.actor_opt.step()
            return critic_err.item()
""")

TD_NOT_BACKPROPAGATED = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Agent:
        def __init__(self, gamma=0.99):
            self.critic = nn.Linear(4, 1)
            self.opt = torch.optim.Adam(self.critic.parameters())
            self.gamma = gamma

        def td_error(self, s, r, s2):
            target = r + self.gamma * self.critic(s2).squeeze(-1)
            return target - self.critic(s).squeeze(-1)

        def fit(self, s, r, s2, y):
            err = self.td_error(s, r, s2)
            loss = (self.critic(s).squeeze(-1) - y).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return err.abs().mean().item()
""")


def test_adl032_helper_target_found_with_help():
    found = _found(TD_HELPER, "ADL032")
    assert [line for line, _ in found] == [_line_of(TD_HELPER, "loss = F.mse_loss(q_pred, q_target)")]
    message = found[0][1]
    assert "`q_target`" in message and "`train_step()` steps" in message and "`compute_loss()` returns" in message
    assert "torch.no_grad()" in message


def _batch():
    torch.manual_seed(3)
    return (torch.randn(6, 5), torch.randint(0, 3, (6,)), torch.randn(6), torch.randn(6, 5), torch.zeros(6))


def test_adl032_helper_claim_and_help_with_torch():
    """Buggy: the step differs from the semi-gradient one.  The help applied (the
    target under `torch.no_grad()`, TD_NO_GRAD) gives the hand-written TD update."""
    def step(source):
        torch.manual_seed(0)
        learner = _run(source)["DQNLearner"]()
        learner.train_step(_batch())
        return [p.detach().clone() for p in learner.q_net.parameters()]

    torch.manual_seed(0)
    ref = _run(TD_HELPER)["DQNLearner"]()
    obs, act, rew, nxt, dones = _batch()
    q_pred = ref.q_net(obs).gather(1, act[:, None]).squeeze(1)
    with torch.no_grad():
        target = rew + ref.discount * ref.q_net(nxt).max(1)[0] * (1 - dones)
    loss = ((q_pred - target) ** 2).mean()
    grads = torch.autograd.grad(loss, list(ref.q_net.parameters()))
    want = [p.detach() - 0.1 * g for p, g in zip(ref.q_net.parameters(), grads)]
    buggy, fixed = step(TD_HELPER), step(TD_NO_GRAD)
    assert any(not torch.allclose(b, w) for b, w in zip(buggy, want))
    assert all(torch.allclose(f, w) for f, w in zip(fixed, want))
    assert not _found(TD_NO_GRAD, "ADL032")


def test_adl032_helper_twins_silent():
    # the caller backpropagates only the actor's loss, which reads the advantage detached
    assert not _found(TD_ONLY_DETACHED_PART, "ADL032")
    # the helper's TD error is only logged; the backward is of another loss
    assert not _found(TD_NOT_BACKPROPAGATED, "ADL032")
    # the helper is decorated `torch.no_grad()`
    decorated = TD_HELPER.replace("    def compute_loss", "    @torch.no_grad()\n    def compute_loss")
    assert decorated != TD_HELPER and not _found(decorated, "ADL032")


# ----- ADL020: an optimizer handed non-leaf tensors across methods (r574, r554) ----

NL_COPIES = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def main():
        base = [nn.Parameter(torch.randn(4, 4)), nn.Parameter(torch.zeros(4))]
        params = [w.clone() for w in base]
        opt = torch.optim.SGD(params, lr=0.1)
        x = torch.randn(2, 4)
        loss = (x @ params[0] + params[1]).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return base
""")

NL_CAST = textwrap.dedent("""
    import torch


    class Scaler:
        def __init__(self):
            self.a = torch.ones(2, requires_grad=True).double()
            self.opt = torch.optim.Adam([self.a], lr=0.1)

        def fit(self, x):
            loss = (self.a * x).sum() ** 2
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
""")

NL_NO_GRAD = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def main():
        base = [nn.Parameter(torch.randn(4, 4)), nn.Parameter(torch.zeros(4))]
        with torch.no_grad():
            params = [w.clone() for w in base]
        opt = torch.optim.SGD(params, lr=0.1)
        x = torch.randn(2, 4)
        loss = (x @ params[0] + params[1]).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return base
""")

NL_FLOAT = textwrap.dedent("""
    import torch


    class Scaler:
        def __init__(self):
            self.a = torch.ones(2, requires_grad=True).float()
            self.opt = torch.optim.Adam([self.a], lr=0.1)

        def fit(self, x):
            loss = (self.a * x).sum() ** 2
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
""")

NL_SAME_DTYPE = textwrap.dedent("""
    import torch


    class Scaler:
        def __init__(self):
            self.a = torch.ones(2, dtype=torch.float64, requires_grad=True).double()
            self.opt = torch.optim.Adam([self.a], lr=0.1)

        def fit(self, x):
            loss = (self.a * x).sum() ** 2
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
""")

NL_PLAIN = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def main():
        base = [nn.Parameter(torch.randn(4, 4)), nn.Parameter(torch.zeros(4))]
        params = [w for w in base]
        opt = torch.optim.SGD(params, lr=0.1)
        x = torch.randn(2, 4)
        loss = (x @ params[0] + params[1]).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return base
""")

NL_DEVICE = textwrap.dedent("""
    import torch


    class Scaler:
        def __init__(self):
            self.a = torch.ones(2, requires_grad=True).to("cpu")
            self.opt = torch.optim.Adam([self.a], lr=0.1)

        def fit(self, x):
            loss = (self.a * x).sum() ** 2
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
""")


def test_adl020_optimizer_found_with_help():
    found = _found(NL_COPIES, "ADL020")
    assert [line for line, _ in found] == [_line_of(NL_COPIES, "params = [w.clone() for w in base]")]
    assert "`w.clone()`" in found[0][1] and "can't optimize a non-leaf Tensor" in found[0][1]
    assert f"`SGD(...)` on line {_line_of(NL_COPIES, 'opt = torch.optim.SGD')}" in found[0][1]
    found = _found(NL_CAST, "ADL020")
    assert [line for line, _ in found] == [_line_of(NL_CAST, "self.a = torch.ones")]
    assert "set `requires_grad` last" in found[0][1]


def test_adl020_optimizer_claim_and_help_with_torch():
    """Buggy: the constructor raises.  The help applied (the leaves to the optimizer,
    the operation in the forward pass; the tensor made in its final dtype) runs and
    gives the hand-written update."""
    for source in (NL_COPIES, NL_CAST):
        ns = _run(source)
        with pytest.raises(ValueError, match="non-leaf"):
            ns["main"]() if "main" in ns else ns["Scaler"]()
    fixed = NL_COPIES.replace("opt = torch.optim.SGD(params, lr=0.1)", "opt = torch.optim.SGD(base, lr=0.1)")
    assert not _found(fixed, "ADL020")
    torch.manual_seed(0)
    base = _run(fixed)["main"]()
    torch.manual_seed(0)
    w, b = torch.randn(4, 4, requires_grad=True), torch.zeros(4, requires_grad=True)
    x = torch.randn(2, 4)
    (x @ w + b).pow(2).sum().backward()
    assert torch.allclose(base[0], w - 0.1 * w.grad) and torch.allclose(base[1], b - 0.1 * b.grad)
    fixed = NL_CAST.replace("torch.ones(2, requires_grad=True).double()", "torch.ones(2, dtype=torch.float64, requires_grad=True)")
    assert not _found(fixed, "ADL020")
    model = _run(fixed)["Scaler"]()
    model.fit(torch.ones(2, dtype=torch.float64))
    assert model.a.is_leaf and not torch.equal(model.a, torch.ones(2, dtype=torch.float64))


def test_adl020_optimizer_twins_silent():
    for source in (NL_NO_GRAD, NL_FLOAT, NL_SAME_DTYPE, NL_PLAIN, NL_DEVICE):
        assert not _found(source, "ADL020"), source
    # the optimizer is built (no raise) in each of them
    torch.optim.SGD(_run(NL_FLOAT)["Scaler"]().opt.param_groups[0]["params"], lr=0.1)
    retained = NL_COPIES.replace("    opt = torch", "    [p.retain_grad() for p in params]\n    opt = torch")
    assert retained != NL_COPIES and not _found(retained, "ADL020")


# ----- ADL001: a write to an input a custom autograd Function saved (r580) ------------

CF_SAVED = textwrap.dedent("""
    import torch
    from torch.autograd import Function


    class ScaledExp(Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return torch.exp(x * scale)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * ctx.scale * torch.exp(x * ctx.scale), None


    def objective(inp):
        w = torch.randn(3, requires_grad=True)
        x = w * inp
        y = ScaledExp.apply(x, 0.5)
        x.clamp_(min=0.0)
        return y.sum() + x.sum()


    def train_step(inp):
        loss = objective(inp)
        loss.backward()
        return loss
""")

CF_NO_EVIDENCE = textwrap.dedent("""
    import torch
    from torch.autograd import Function


    class ScaledExp(Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return torch.exp(x * scale)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * ctx.scale * torch.exp(x * ctx.scale), None


    def objective(w, inp):
        x = w * inp
        y = ScaledExp.apply(x, 0.5)
        x.clamp_(min=0.0)
        return y.sum() + x.sum()


    def train_step(w, inp):
        loss = objective(w, inp)
        loss.backward()
        return w.grad
""")

CF_CLONE = textwrap.dedent("""
    import torch
    from torch.autograd import Function


    class ScaledExp(Function):
        @staticmethod
        def forward(ctx, x, scale):
            kept = x.clone()
            ctx.save_for_backward(kept)
            ctx.scale = scale
            return torch.exp(x * scale)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * ctx.scale * torch.exp(x * ctx.scale), None


    def objective(w, inp):
        x = w * inp
        y = ScaledExp.apply(x, 0.5)
        x.clamp_(min=0.0)
        return y.sum() + x.sum()


    def train_step(w, inp):
        loss = objective(w, inp)
        loss.backward()
        return w.grad
""")

CF_BEFORE = textwrap.dedent("""
    import torch
    from torch.autograd import Function


    class ScaledExp(Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return torch.exp(x * scale)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * ctx.scale * torch.exp(x * ctx.scale), None


    def objective(w, inp):
        x = w * inp
        x.clamp_(min=0.0)
        y = ScaledExp.apply(x, 0.5)
        return y.sum() + x.sum()


    def train_step(w, inp):
        loss = objective(w, inp)
        loss.backward()
        return w.grad
""")

CF_REBOUND = textwrap.dedent("""
    import torch
    from torch.autograd import Function


    class ScaledExp(Function):
        @staticmethod
        def forward(ctx, x, scale):
            x = x * 1.0
            ctx.save_for_backward(x)
            ctx.scale = scale
            return torch.exp(x * scale)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * ctx.scale * torch.exp(x * ctx.scale), None


    def objective(w, inp):
        x = w * inp
        y = ScaledExp.apply(x, 0.5)
        x.clamp_(min=0.0)
        return y.sum() + x.sum()


    def train_step(w, inp):
        loss = objective(w, inp)
        loss.backward()
        return w.grad
""")


def test_adl001_custom_function_found_with_help():
    found = _found(CF_SAVED, "ADL001")
    assert [line for line, _ in found] == [_line_of(CF_SAVED, "x.clamp_(min=0.0)")]
    assert "`ScaledExp.apply`" in found[0][1] and "ctx.save_for_backward" in found[0][1]


def test_adl001_custom_function_claim_and_help_with_torch():
    """Buggy: backward raises.  The help applied (the write made out of place,
    `x = x.clamp(min=0.0)`) gives the gradient of a hand-written version."""
    ns = _run(CF_SAVED)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ns["train_step"](torch.randn(3))
    fixed = CF_SAVED.replace("    x.clamp_(min=0.0)", "    x = x.clamp(min=0.0)")
    assert not _found(fixed, "ADL001")
    ns = _run(fixed)
    torch.manual_seed(1)
    inp = torch.randn(3)
    loss = ns["objective"](inp)
    torch.manual_seed(1)
    inp2 = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    x = w * inp2
    want = torch.exp(x * 0.5).sum() + x.clamp(min=0.0).sum()
    assert torch.allclose(loss, want)


def test_adl001_custom_function_twins_silent():
    for source in (CF_CLONE, CF_BEFORE, CF_REBOUND):
        assert not _found(source, "ADL001"), source
        _run(source)["train_step"](torch.randn(3, requires_grad=True), torch.randn(3))  # runs
    # no graph evidence in the file (a parameter's tensor of unknown origin): silent
    assert not _found(CF_NO_EVIDENCE, "ADL001")
    # `backward` does not read `ctx.saved_tensors`: autograd checks nothing
    unread = CF_SAVED.replace("        x, = ctx.saved_tensors\n", "        x = ctx.x\n").replace(
        "        ctx.scale = scale\n", "        ctx.scale = scale\n        ctx.x = x\n")
    assert unread != CF_SAVED and not _found(unread, "ADL001")


# ----- ADL017: a recurrent state kept through a tuple of attributes (r573) -------------

RNN_TUPLE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 5)
            self.head = nn.Linear(5, 2)
            self.hx = torch.zeros(1, 2, 5)
            self.cx = torch.zeros(1, 2, 5)

        def forward(self, x):
            out, (self.hx, self.cx) = self.rnn(x, (self.hx, self.cx))
            return self.head(out)


    def train(steps=2):
        torch.manual_seed(0)
        model = Tagger()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            x = torch.randn(4, 2, 3)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return model
""")

RNN_NAME = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 5)
            self.head = nn.Linear(5, 2)
            self.hx = torch.zeros(1, 2, 5)
            self.cx = torch.zeros(1, 2, 5)

        def forward(self, x):
            out, state = self.rnn(x, (self.hx, self.cx))
            self.hx, self.cx = state
            return self.head(out)


    def train(steps=2):
        torch.manual_seed(0)
        model = Tagger()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            x = torch.randn(4, 2, 3)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return model
""")

RNN_DETACH = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 5)
            self.head = nn.Linear(5, 2)
            self.hx = torch.zeros(1, 2, 5)
            self.cx = torch.zeros(1, 2, 5)

        def forward(self, x):
            out, (hx, cx) = self.rnn(x, (self.hx, self.cx))
            self.hx, self.cx = hx.detach(), cx.detach()
            return self.head(out)


    def train(steps=2):
        torch.manual_seed(0)
        model = Tagger()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            x = torch.randn(4, 2, 3)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return model
""")

RNN_DETACH_LIST = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 5)
            self.head = nn.Linear(5, 2)
            self.hx = torch.zeros(1, 2, 5)
            self.cx = torch.zeros(1, 2, 5)

        def forward(self, x):
            out, state = self.rnn(x, (self.hx, self.cx))
            self.hx, self.cx = [t.detach() for t in state]
            return self.head(out)


    def train(steps=2):
        torch.manual_seed(0)
        model = Tagger()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            x = torch.randn(4, 2, 3)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return model
""")

RNN_RESET = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 5)
            self.head = nn.Linear(5, 2)
            self.hx = torch.zeros(1, 2, 5)
            self.cx = torch.zeros(1, 2, 5)

        def forward(self, x):
            out, (self.hx, self.cx) = self.rnn(x, (self.hx, self.cx))
            return self.head(out)


    def train(steps=2):
        torch.manual_seed(0)
        model = Tagger()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            x = torch.randn(4, 2, 3)
            model.hx, model.cx = torch.zeros(1, 2, 5), torch.zeros(1, 2, 5)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return model
""")


def test_adl017_tuple_of_attributes_found_with_help():
    for source, text in ((RNN_TUPLE, "out, (self.hx, self.cx) = self.rnn"), (RNN_NAME, "self.hx, self.cx = state")):
        found = _found(source, "ADL017")
        assert [line for line, _ in found] == [_line_of(source, text)]
        assert "`self.hx`" in found[0][1] and "`.detach()`ed values" in found[0][1]


def test_adl017_tuple_of_attributes_claim_and_help_with_torch():
    """Buggy: the second backward raises.  The help applied (the state stored
    detached, RNN_DETACH) trains as a hand-written loop that carries the detached state."""
    for source in (RNN_TUPLE, RNN_NAME):
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            _run(source)["train"]()
    got = _run(RNN_DETACH)["train"]()
    torch.manual_seed(0)
    model = _run(RNN_DETACH)["Tagger"]()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    h, c = torch.zeros(1, 2, 5), torch.zeros(1, 2, 5)
    for _ in range(2):
        x = torch.randn(4, 2, 3)
        out, (h, c) = model.rnn(x, (h, c))
        loss = model.head(out).pow(2).mean()
        h, c = h.detach(), c.detach()
        opt.zero_grad()
        loss.backward()
        opt.step()
    for a, b in zip(got.parameters(), model.parameters()):
        assert torch.equal(a, b)


def test_adl017_tuple_of_attributes_twins_silent():
    for source in (RNN_DETACH, RNN_DETACH_LIST, RNN_RESET):
        assert not _found(source, "ADL017"), source
        _run(source)["train"]()  # runs


# ----- ADL014: a leaf written in place in `__init__` right after its factory (r576) -----

LEAF_MUL = textwrap.dedent("""
    import torch


    class Embedder:
        def __init__(self, n=4, d=3, scale=0.1):
            self.table = torch.randn(n, d, requires_grad=True)
            self.table.mul_(scale)

        def lookup(self, idx):
            return self.table[idx]


    def main():
        emb = Embedder()
        opt = torch.optim.SGD([emb.table], lr=0.1)
        loss = emb.lookup(torch.tensor([0, 2])).sum()
        loss.backward()
        opt.step()
        return emb
""")

LEAF_AUG = textwrap.dedent("""
    import torch


    class Embedder:
        def __init__(self, n=4, d=3, scale=0.1):
            self.table = torch.randn(n, d, requires_grad=True)
            self.table += scale

        def lookup(self, idx):
            return self.table[idx]


    def main():
        emb = Embedder()
        opt = torch.optim.SGD([emb.table], lr=0.1)
        loss = emb.lookup(torch.tensor([0, 2])).sum()
        loss.backward()
        opt.step()
        return emb
""")

LEAF_NO_GRAD = textwrap.dedent("""
    import torch


    class Embedder:
        def __init__(self, n=4, d=3, scale=0.1):
            self.table = torch.randn(n, d, requires_grad=True)
            with torch.no_grad():
                self.table.mul_(scale)

        def lookup(self, idx):
            return self.table[idx]


    def main():
        emb = Embedder()
        opt = torch.optim.SGD([emb.table], lr=0.1)
        loss = emb.lookup(torch.tensor([0, 2])).sum()
        loss.backward()
        opt.step()
        return emb
""")

LEAF_CTOR_NO_GRAD = textwrap.dedent("""
    import torch


    class Embedder:
        def __init__(self, n=4, d=3, scale=0.1):
            self.table = torch.randn(n, d, requires_grad=True)
            self.table.mul_(scale)

        def lookup(self, idx):
            return self.table[idx]


    def main():
        with torch.no_grad():
            emb = Embedder()
        opt = torch.optim.SGD([emb.table], lr=0.1)
        loss = emb.lookup(torch.tensor([0, 2])).sum()
        loss.backward()
        opt.step()
        return emb
""")

LEAF_MARK_LAST = textwrap.dedent("""
    import torch


    class Embedder:
        def __init__(self, n=4, d=3, scale=0.1):
            self.table = torch.randn(n, d)
            self.table.mul_(scale)
            self.table.requires_grad_()

        def lookup(self, idx):
            return self.table[idx]


    def main():
        emb = Embedder()
        opt = torch.optim.SGD([emb.table], lr=0.1)
        loss = emb.lookup(torch.tensor([0, 2])).sum()
        loss.backward()
        opt.step()
        return emb
""")


def test_adl014_constructor_write_found_with_help():
    for source, text in ((LEAF_MUL, "self.table.mul_(scale)"), (LEAF_AUG, "self.table += scale")):
        found = _found(source, "ADL014")
        assert [line for line, _ in found] == [_line_of(source, text)]
        assert "`Embedder(...)` is called on line" in found[0][1] and "`.requires_grad_()` last" in found[0][1]


def test_adl014_constructor_write_claim_and_help_with_torch():
    """Buggy: the constructor raises.  The help applied (the write under `no_grad()`,
    or `requires_grad` set last) gives the same table and the same step."""
    for source in (LEAF_MUL, LEAF_AUG):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            _run(source)["main"]()
    torch.manual_seed(0)
    a = _run(LEAF_NO_GRAD)["main"]().table
    torch.manual_seed(0)
    b = _run(LEAF_MARK_LAST)["main"]().table
    torch.manual_seed(0)
    t = (torch.randn(4, 3) * 0.1).requires_grad_()
    t[torch.tensor([0, 2])].sum().backward()
    with torch.no_grad():
        want = t - 0.1 * t.grad
    assert torch.equal(a, want) and torch.equal(b, want) and a.is_leaf and b.is_leaf


def test_adl014_constructor_write_twins_silent():
    for source in (LEAF_NO_GRAD, LEAF_CTOR_NO_GRAD, LEAF_MARK_LAST):
        assert not _found(source, "ADL014"), source
    # the class is never built in the file: no evidence the write runs with gradients on
    assert not _found(LEAF_MUL.split("def main")[0], "ADL014")
