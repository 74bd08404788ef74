"""Recall on the causes the r270-r289 re-creations left open (lint-recall-causes2):
two outputs of one module call backpropagated in turn (r283), a forward hook's
`output` kept on the module and then deep-copied (r277), and a module's
parameters written by `load_state_dict` or `copy_` between a loss and its
backward pass (r282).  Each case the linter now reports is written differently
from its re-creation and really fails when run; the fix the finding suggests
makes it run with the gradients of a reference; similar correct patterns stay
silent and run."""

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


def _gradients(module) -> list:
    return [p.grad.clone() for p in module.parameters()]


# ----- two outputs of one module call, backpropagated in turn (ADL019) -----

# An actor-critic network whose policy and value heads share one trunk call; the
# update backpropagates the two losses one after the other.
SHARED_TRUNK_TWO_BACKWARDS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class ActorCriticNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
            self.policy = nn.Linear(8, 2)
            self.value = nn.Linear(8, 1)

        def forward(self, obs):
            features = self.body(obs)
            return self.policy(features), self.value(features).squeeze(-1)

    def update(net, opt, obs, returns):
        logits, values = net(obs)
        policy_loss = -torch.log_softmax(logits, -1)[:, 0].mean()
        value_loss = (returns - values).pow(2).mean()
        opt.zero_grad()
        policy_loss.backward()
        value_loss.backward()
        opt.step()

    def main():
        torch.manual_seed(0)
        net = ActorCriticNet()
        opt = torch.optim.SGD(net.parameters(), lr=0.0)
        update(net, opt, torch.randn(5, 4), torch.randn(5))
        return net
""")


def _reference_actor_critic(namespace) -> list:
    torch.manual_seed(0)
    net = namespace["ActorCriticNet"]()
    obs, returns = torch.randn(5, 4), torch.randn(5)
    logits, values = net(obs)
    (-torch.log_softmax(logits, -1)[:, 0].mean() + (returns - values).pow(2).mean()).backward()
    return _gradients(net)


def test_two_heads_of_one_trunk_call_backpropagated_in_turn_are_found():
    source = SHARED_TRUNK_TWO_BACKWARDS
    assert _findings(source) == [(_line(source, "value_loss.backward()"), "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(source)["main"]()


def test_two_heads_with_the_graph_retained_are_silent_and_give_the_summed_gradients():
    source = SHARED_TRUNK_TWO_BACKWARDS.replace("policy_loss.backward()",
                                                "policy_loss.backward(retain_graph=True)")
    assert _findings(source) == []
    namespace = _load(source)
    assert all(torch.allclose(a, b) for a, b in zip(_gradients(namespace["main"]()),
                                                    _reference_actor_critic(namespace)))


def test_two_heads_fed_the_input_directly_are_silent_and_run():
    """No shared layer call: each head's graph is its own."""
    source = SHARED_TRUNK_TWO_BACKWARDS.replace(
        "self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh())", "self.body = nn.Tanh()").replace(
        "self.policy = nn.Linear(8, 2)", "self.policy = nn.Linear(4, 2)").replace(
        "self.value = nn.Linear(8, 1)", "self.value = nn.Linear(4, 1)").replace(
        "features = self.body(obs)\n", "").replace(
        "return self.policy(features), self.value(features)", "return self.policy(obs), self.value(obs)")
    assert "self.policy(obs), self.value(obs)" in source
    assert _findings(source) == []
    _load(source)["main"]()


def test_one_layer_called_twice_for_two_outputs_is_silent_and_runs():
    """Two calls of one critic (`self.q(s, a)`, `self.q(s, pi)`) make two graphs:
    the first backward frees only its own."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.q = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))

            def forward(self, s, a, b):
                return self.q(torch.cat([s, a], 1)), self.q(torch.cat([s, b], 1))

        def main():
            torch.manual_seed(0)
            critic = Critic()
            q_a, q_b = critic(torch.randn(3, 4), torch.randn(3, 1), torch.randn(3, 1))
            q_a.mean().backward()
            q_b.mean().backward()
    """)
    assert _findings(source) == []
    _load(source)["main"]()


# The same shape through a method of the module that returns a tuple.
ENCODER_METHOD_TWO_BACKWARDS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = nn.Linear(6, 8)
            self.mu = nn.Linear(8, 2)
            self.logvar = nn.Linear(8, 2)

        def encode(self, x):
            h = torch.relu(self.hidden(x))
            return self.mu(h), self.logvar(h)

        def regularise(self, x):
            mu, logvar = self.encode(x)
            mu.pow(2).mean().backward()
            logvar.exp().mean().backward()

    def main():
        torch.manual_seed(0)
        encoder = Encoder()
        encoder.regularise(torch.randn(4, 6))
        return encoder
""")


def test_two_outputs_of_a_method_sharing_a_layer_call_are_found():
    source = ENCODER_METHOD_TWO_BACKWARDS
    assert _findings(source) == [(_line(source, "logvar.exp().mean().backward()"), "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(source)["main"]()


def test_two_outputs_of_a_method_backpropagated_at_once_are_silent_and_match():
    source = ENCODER_METHOD_TWO_BACKWARDS.replace(
        "        mu.pow(2).mean().backward()\n        logvar.exp().mean().backward()\n",
        "        torch.autograd.backward([mu.pow(2).mean(), logvar.exp().mean()])\n")
    assert "torch.autograd.backward([" in source
    assert _findings(source) == []
    namespace = _load(source)
    torch.manual_seed(0)
    reference = namespace["Encoder"]()
    mu, logvar = reference.encode(torch.randn(4, 6))
    (mu.pow(2).mean() + logvar.exp().mean()).backward()
    assert all(torch.allclose(a, b) for a, b in zip(_gradients(namespace["main"]()), _gradients(reference)))


# ----- a forward hook's output kept on the module, then deep-copied (ADL017) -----

HOOK_KEEPS_OUTPUT = textwrap.dedent("""
    import copy

    import torch
    import torch.nn as nn

    class Probe(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.features = None
            self.net[0].register_forward_hook(self.keep)

        def keep(self, module, inputs, output):
            self.features = output.flatten(1)

        def forward(self, x):
            return self.net(x)

    def main():
        torch.manual_seed(0)
        probe = Probe(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)))
        probe(torch.randn(2, 3)).sum().backward()
        snapshot = copy.deepcopy(probe)
        return probe, snapshot
""")


def test_hook_output_kept_on_a_deep_copied_module_is_found():
    source = HOOK_KEEPS_OUTPUT
    assert _findings(source) == [(_line(source, "snapshot = copy.deepcopy(probe)"), "ADL017")]
    with pytest.raises(RuntimeError, match="graph leaves"):
        _load(source)["main"]()


def test_hook_that_detaches_its_output_is_silent_and_keeps_the_values():
    source = HOOK_KEEPS_OUTPUT.replace("output.flatten(1)", "output.detach().flatten(1)")
    assert _findings(source) == []
    probe, snapshot = _load(source)["main"]()
    assert torch.equal(probe.features, snapshot.features)
    assert probe.features.grad_fn is None


def test_hook_output_kept_without_a_copy_is_silent_and_runs():
    """Keeping the hooked output is no hazard by itself."""
    source = HOOK_KEEPS_OUTPUT.replace("    snapshot = copy.deepcopy(probe)\n", "    snapshot = None\n")
    assert _findings(source) == []
    _load(source)["main"]()


# ----- parameters written between a loss and its backward (ADL003) -----

# First-order meta-learning: each task's loss comes from a helper handed the
# model, then the model's starting weights are restored before the meta backward.
RESTORE_BEFORE_META_BACKWARD = textwrap.dedent("""
    import copy

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def evaluate(model, batches):
        total = 0
        for x, y in batches:
            total = total + F.mse_loss(model(x), y)
        return total / len(batches)

    def meta_step(net, meta_opt, tasks):
        start = copy.deepcopy(net.state_dict())
        meta_loss = 0
        for batches in tasks:
            meta_loss = meta_loss + evaluate(net, batches)
            net.load_state_dict(start)
        meta_opt.zero_grad()
        meta_loss.backward()
        meta_opt.step()

    def main():
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        meta_opt = torch.optim.SGD(net.parameters(), lr=0.1)
        tasks = [[(torch.randn(5, 3), torch.randn(5, 1))] for _ in range(2)]
        meta_step(net, meta_opt, tasks)
        return net
""")


def test_weights_restored_before_the_meta_backward_are_found():
    source = RESTORE_BEFORE_META_BACKWARD
    assert _findings(source) == [(_line(source, "net.load_state_dict(start)"), "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(source)["main"]()


def test_weights_restored_after_the_meta_backward_are_silent_and_run():
    source = RESTORE_BEFORE_META_BACKWARD.replace(
        "    meta_opt.zero_grad()\n    meta_loss.backward()\n    meta_opt.step()\n",
        "    meta_opt.zero_grad()\n    meta_loss.backward()\n    meta_opt.step()\n"
        "    net.load_state_dict(start)\n").replace("        net.load_state_dict(start)\n", "")
    assert source.count("load_state_dict(start)") == 1
    assert _findings(source) == []
    _load(source)["main"]()


def test_parameters_copied_under_no_grad_before_the_backward_are_found():
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        def shrink_then_train(net, x, y):
            loss = F.mse_loss(net(x), y)
            with torch.no_grad():
                for p in net.parameters():
                    p.copy_(0.5 * p)
            loss.backward()

        def main():
            torch.manual_seed(0)
            net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
            shrink_then_train(net, torch.randn(5, 3), torch.randn(5, 1))
    """)
    assert _findings(source) == [(_line(source, "p.copy_(0.5 * p)"), "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(source)["main"]()


def test_a_target_network_loaded_before_the_backward_is_silent_and_runs():
    """DQN's target network: its values enter the loss detached, so loading new
    weights into it before the backward breaks nothing."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        def dqn_step(q_net, target_net, opt, s, a, r, s2):
            q = q_net(s).gather(1, a)
            target = r + 0.9 * target_net(s2).max(1, keepdim=True)[0].detach()
            loss = F.mse_loss(q, target)
            target_net.load_state_dict(q_net.state_dict())
            opt.zero_grad()
            loss.backward()
            opt.step()

        def main():
            torch.manual_seed(0)
            q_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            target_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            opt = torch.optim.SGD(q_net.parameters(), lr=0.1)
            dqn_step(q_net, target_net, opt, torch.randn(3, 4), torch.tensor([[0], [1], [0]]),
                     torch.randn(3, 1), torch.randn(3, 4))
    """)
    assert _findings(source) == []
    _load(source)["main"]()


# ----- a custom Function's output that is its input, written in place (ADL015) -----

GRADIENT_REVERSAL_WRITTEN = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class GradReverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, alpha):
            ctx.alpha = alpha
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad_output):
            return -ctx.alpha * grad_output, None

    class ReverseLayer(nn.Module):
        def forward(self, x):
            return GradReverse.apply(x, 1.0)

    class DomainClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Linear(4, 6)
            self.reverse = ReverseLayer()
            self.head = nn.Linear(6, 2)

        def forward(self, x):
            h = torch.tanh(self.features(x))
            r = self.reverse(h)
            r += 0.1
            return self.head(r)

    def main():
        torch.manual_seed(0)
        model = DomainClassifier()
        model(torch.randn(3, 4)).sum().backward()
        return model
""")


def test_gradient_reversal_output_written_in_place_is_found():
    source = GRADIENT_REVERSAL_WRITTEN
    assert _findings(source) == [(_line(source, "r += 0.1"), "ADL015")]
    with pytest.raises(RuntimeError, match="created inside a custom Function"):
        _load(source)["main"]()


def test_gradient_reversal_output_written_out_of_place_is_silent_and_reverses_the_gradient():
    source = GRADIENT_REVERSAL_WRITTEN.replace("r += 0.1", "r = r + 0.1")
    assert _findings(source) == []
    namespace = _load(source)
    model = namespace["main"]()
    torch.manual_seed(0)
    reference = namespace["DomainClassifier"]()
    x = torch.randn(3, 4)
    h = torch.tanh(reference.features(x))
    reference.head(h + 0.1).sum().backward()
    assert torch.allclose(model.head.weight.grad, reference.head.weight.grad)
    assert torch.allclose(model.features.weight.grad, -reference.features.weight.grad)


def test_function_applied_directly_and_written_is_found():
    source = textwrap.dedent("""
        import torch

        class Identity(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        def main():
            w = torch.randn(4, requires_grad=True)
            y = Identity.apply(w * 2)
            y.mul_(3)
            y.sum().backward()
    """)
    assert _findings(source) == [(_line(source, "y.mul_(3)"), "ADL015")]
    with pytest.raises(RuntimeError, match="returned as-is"):
        _load(source)["main"]()


def test_function_returning_a_copy_or_given_no_graph_is_silent_and_runs():
    """A Function that returns a new tensor (`x.clone()`) gives a writable output; one
    applied to a tensor without a graph is not recorded by autograd."""
    source = textwrap.dedent("""
        import torch

        class Copy(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad

        class Identity(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        def main():
            w = torch.randn(4, requires_grad=True)
            y = Copy.apply(w * 2)
            y.mul_(3)
            y.sum().backward()
            z = Identity.apply(torch.randn(4))
            z.mul_(3)
            return w.grad
    """)
    assert _findings(source) == []
    assert torch.equal(_load(source)["main"](), torch.full((4,), 6.0))


def test_method_writing_a_parameter_fed_a_function_output_through_layers_is_found():
    """The Function's output reaches the write through a module whose forward returns
    it, a second module's forward, and a method of the caller's class that writes
    its parameter."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class CopyToRegion(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        class ColumnLinear(nn.Linear):
            def forward(self, x):
                return CopyToRegion.apply(super().forward(x))

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = ColumnLinear(4, 4)

            def forward(self, x):
                return self.proj(torch.tanh(x))

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def add_bias(self, h, rows, bias):
                h[rows] = h[rows] + bias
                return h

            def forward(self, x, rows, bias):
                h = self.block(x)
                h = self.add_bias(h, rows, bias)
                return h

        def main(clone=False):
            torch.manual_seed(0)
            model = Stack()
            x, rows, bias = torch.randn(3, 4), torch.tensor([True, False, True]), torch.randn(4)
            model(x, rows, bias).sum().backward()
            return model
    """)
    assert _findings(source) == [(_line(source, "h[rows] = h[rows] + bias"), "ADL015")]
    with pytest.raises(RuntimeError, match="custom Function"):
        _load(source)["main"]()
    fixed = source.replace("h = self.add_bias(h, rows, bias)", "h = self.add_bias(h.clone(), rows, bias)")
    assert _findings(fixed) == []
    model = _load(fixed)["main"]()
    assert model.block.proj.weight.grad is not None
