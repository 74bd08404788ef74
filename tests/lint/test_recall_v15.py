"""Recall on the causes of misses in the r372-r391 re-creations: each case the
linter now reports really shows its bug when run, its corrected twin (the
change the finding asks for, applied) stays silent and computes what a
hand-written reference computes, and a similar correct pattern stays silent
(and really runs)."""

from __future__ import annotations

import textwrap

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


# ADL017: a buffer updated in place (`lerp_`, `mul_(m).add_(...)`) from a statistic of
# the forward's input, in a module a call of the file feeds with a graph tensor: the
# buffer becomes a graph tensor linking every step's graph (r377).
RUNNING_MEAN_IN_PLACE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class RunningCenter(nn.Module):
        def __init__(self, n, momentum=0.1):
            super().__init__()
            self.momentum = momentum
            self.register_buffer("running_mean", torch.zeros(n))
            self.register_buffer("running_sq", torch.ones(n))
            self.register_buffer("steps", torch.tensor(0))

        def forward(self, x):
            if self.training:
                mean = x.mean(0)
                self.steps.add_(1)
                self.running_mean.lerp_(mean, self.momentum)
                self.running_sq.mul_(1 - self.momentum).add_(mean * mean, alpha=self.momentum)
            else:
                mean = self.running_mean
            return x - mean

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.center = RunningCenter(4)
            self.out = nn.Linear(4, 1)

        def forward(self, x):
            return self.out(self.center(self.fc(x)))

    def main():
        torch.manual_seed(0)
        net = Net()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        inputs = [torch.randn(5, 3) for _ in range(2)]
        for x in inputs:
            optimizer.zero_grad()
            net(x).pow(2).mean().backward()
            optimizer.step()
        return net, inputs
""")


def _reference_running_mean(source: str) -> torch.Tensor:
    """The running mean written by hand: the same training run, the statistic
    blended from values cut from the graph."""
    torch.manual_seed(0)
    net = _load(source)["Net"]()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    running = torch.zeros(4)
    for _ in range(2):
        x = torch.randn(5, 3)
        with torch.no_grad():
            running = 0.9 * running + 0.1 * net.fc(x).mean(0)
        optimizer.zero_grad()
        net.out(net.fc(x) - net.fc(x).mean(0)).pow(2).mean().backward()
        optimizer.step()
    return running


def test_a_buffer_updated_in_place_from_the_input_statistic_is_found_and_keeps_graphs():
    source = RUNNING_MEAN_IN_PLACE
    assert _findings(source) == [(_line(source, "self.running_mean.lerp_"), "ADL017"),
                                 (_line(source, "self.running_sq.mul_"), "ADL017")]
    net, _ = _load(source)["main"]()
    assert net.center.running_mean.grad_fn is not None  # the buffer holds the steps' graphs
    assert net.center.running_sq.grad_fn is not None


def test_the_update_from_detached_values_is_silent_and_matches_the_reference():
    fixed = RUNNING_MEAN_IN_PLACE.replace("lerp_(mean, ", "lerp_(mean.detach(), ").replace(
        "add_(mean * mean, ", "add_(mean.detach() ** 2, ")
    assert _findings(fixed) == []
    net, _ = _load(fixed)["main"]()
    assert net.center.running_mean.grad_fn is None
    assert torch.allclose(net.center.running_mean, _reference_running_mean(fixed), atol=1e-6)


def test_an_update_under_no_grad_and_a_counter_stay_silent():
    update = ("            self.running_mean.lerp_(mean, self.momentum)\n"
              "            self.running_sq.mul_(1 - self.momentum).add_(mean * mean, alpha=self.momentum)\n")
    assert update in RUNNING_MEAN_IN_PLACE
    guarded = RUNNING_MEAN_IN_PLACE.replace(update, "            with torch.no_grad():\n"
                                            + update.replace("            self.", "                self."))
    assert _findings(guarded) == []
    net, _ = _load(guarded)["main"]()
    assert net.center.running_mean.grad_fn is None and int(net.center.steps) == 2


def test_a_running_normaliser_of_raw_observations_stays_silent():
    """Nothing in the file passes the normaliser a graph tensor: its input is data."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class ObsNorm(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("mean", torch.zeros(n))

            def forward(self, obs):
                self.mean.lerp_(obs.mean(0), 0.01)
                return obs - self.mean

        def main():
            norm, policy = ObsNorm(3), nn.Linear(3, 2)
            loss = policy(norm(torch.randn(4, 3))).sum()
            loss.backward()
            return norm
    """)
    assert _findings(source) == []
    assert _load(source)["main"]().mean.grad_fn is None


# ADL018: a method run once per micro-batch clears the optimizer on every call but
# steps only when a counter it increments reaches the accumulation window (r380).
COUNTED_WINDOW = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Learner:
        def __init__(self, module, k=2):
            self.module = module
            self.optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
            self.k = k
            self.calls = 0

        def update(self, x, y):
            self.optimizer.zero_grad()
            loss = ((self.module(x) - y) ** 2).mean() / self.k
            loss.backward()
            self.calls += 1
            if self.calls % self.k == 0:
                self.optimizer.step()

    def main():
        torch.manual_seed(0)
        module = nn.Linear(3, 1)
        start = [p.detach().clone() for p in module.parameters()]
        batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
        learner = Learner(module)
        for x, y in batches:
            learner.update(x, y)
        return module, start, batches
""")


def _window_reference(start, batches):
    """One SGD step on the mean of the window's losses, written by hand."""
    weight, bias = (p.clone().requires_grad_() for p in start)
    loss = sum(((x @ weight.t() + bias - y) ** 2).mean() for x, y in batches) / 2
    grads = torch.autograd.grad(loss, [weight, bias])
    return [p.detach() - 0.1 * g for p, g in zip((weight, bias), grads)]


def test_a_clear_on_every_call_of_a_counted_window_is_found_and_loses_gradients():
    source = COUNTED_WINDOW
    assert _findings(source) == [(_line(source, "self.optimizer.zero_grad()"), "ADL018")]
    module, start, batches = _load(source)["main"]()
    expected = _window_reference(start, batches)
    assert not all(torch.allclose(p, e) for p, e in zip(module.parameters(), expected))


def test_clearing_after_the_step_is_silent_and_steps_on_the_window():
    assert "        self.optimizer.zero_grad()\n" in COUNTED_WINDOW
    fixed = COUNTED_WINDOW.replace("        self.optimizer.zero_grad()\n", "").replace(
        "            self.optimizer.step()\n", "            self.optimizer.step()\n            self.optimizer.zero_grad()\n")
    assert "self.optimizer.zero_grad()" in fixed
    assert _findings(fixed) == []
    module, start, batches = _load(fixed)["main"]()
    assert all(torch.allclose(p, e, atol=1e-6) for p, e in zip(module.parameters(), _window_reference(start, batches)))


def test_a_step_on_every_call_and_a_window_on_a_caller_count_stay_silent():
    window = "        if self.calls % self.k == 0:\n            self.optimizer.step()"
    assert window in COUNTED_WINDOW
    every_call = COUNTED_WINDOW.replace(window, "        self.optimizer.step()")
    assert _findings(every_call) == []
    _load(every_call)["main"]()
    # the window tests the caller's step number, not a count this method keeps: no evidence
    caller_count = COUNTED_WINDOW.replace("def update(self, x, y):", "def update(self, x, y, step=0):").replace(
        "if self.calls % self.k == 0:", "if step % self.k == 0:")
    assert _findings(caller_count) == []
    _load(caller_count)["main"]()


# ADL021: a target network "refreshed" from its own state dict: the line changes
# nothing and the target keeps its initial weights (r389).
SELF_LOADED_TARGET = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Agent:
        def __init__(self):
            torch.manual_seed(0)
            self.online = nn.Linear(3, 2)
            self.target = nn.Linear(3, 2)
            self.target.load_state_dict(self.online.state_dict())
            self.optimizer = torch.optim.SGD(self.online.parameters(), lr=0.5)

        def learn(self, s, r, s2, step):
            with torch.no_grad():
                y = r + 0.9 * self.target(s2).max(1)[0]
            loss = F.mse_loss(self.online(s).max(1)[0], y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if step % 2 == 1:
                self.target.load_state_dict(self.target.state_dict())

    def main():
        agent = Agent()
        start = [p.detach().clone() for p in agent.target.parameters()]
        for step in range(2):
            agent.learn(torch.randn(4, 3), torch.ones(4), torch.randn(4, 3), step)
        return agent, start
""")


def test_a_module_loading_its_own_state_is_found_and_changes_nothing():
    source = SELF_LOADED_TARGET
    assert _findings(source) == [(_line(source, "self.target.load_state_dict(self.target"), "ADL021")]
    agent, start = _load(source)["main"]()
    assert all(torch.equal(p, s) for p, s in zip(agent.target.parameters(), start))  # never refreshed


def test_loading_the_online_state_is_silent_and_copies_it():
    fixed = SELF_LOADED_TARGET.replace("self.target.load_state_dict(self.target.state_dict())",
                                       "self.target.load_state_dict(self.online.state_dict())")
    assert _findings(fixed) == []
    agent, start = _load(fixed)["main"]()
    assert all(torch.equal(p, o) for p, o in zip(agent.target.parameters(), agent.online.parameters()))
    assert not all(torch.equal(p, s) for p, s in zip(agent.target.parameters(), start))


# ADL023: a backpropagated loss appended to a list that outlives the loop: the list
# keeps every iteration's graph (r379).
LOSS_HISTORY = textwrap.dedent("""
    import torch

    def fit(target, steps=4):
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        optimizer = torch.optim.SGD([w], lr=0.1)
        history = []
        for _ in range(steps):
            optimizer.zero_grad()
            loss = ((w - target) ** 2).sum()
            history.append(loss)
            loss.backward()
            optimizer.step()
        return w, history
""")


def test_a_backpropagated_loss_appended_to_a_history_is_found_and_keeps_graphs():
    source = LOSS_HISTORY
    assert _findings(source) == [(_line(source, "history.append(loss)"), "ADL023")]
    _, history = _load(source)["fit"](torch.ones(3))
    assert all(h.grad_fn is not None for h in history)


def test_appending_the_value_is_silent_and_records_the_same_losses():
    fixed = LOSS_HISTORY.replace("history.append(loss)", "history.append(loss.item())")
    assert _findings(fixed) == []
    w_fixed, values = _load(fixed)["fit"](torch.ones(3))
    w_bug, tensors = _load(LOSS_HISTORY)["fit"](torch.ones(3))
    assert values == [t.item() for t in tensors] and torch.equal(w_fixed, w_bug)


def test_losses_collected_for_one_backward_and_a_list_made_per_iteration_stay_silent():
    once = textwrap.dedent("""
        import torch

        def fit(target):
            w = torch.zeros(3, requires_grad=True)
            losses = []
            for t in target:
                losses.append((w - t).pow(2).sum())
            torch.stack(losses).mean().backward()
            return w.grad
    """)
    assert _findings(once) == []
    assert _load(once)["fit"](torch.ones(2, 3)) is not None
    fresh = LOSS_HISTORY.replace("    history = []\n", "").replace(
        "        optimizer.zero_grad()\n", "        optimizer.zero_grad()\n        history = []\n")
    assert "history = []" in fresh and _findings(fresh) == []
    _load(fresh)["fit"](torch.ones(3))


# ADL025: full backward hooks on every module without submodules (a gradient probe's
# `if len(list(m.children())) == 0:`), and a node whose own leaf layer's output goes
# into a container starting with an in-place activation (r374).
LEAF_HOOKS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Mix(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weights = nn.Parameter(torch.ones(n))

        def forward(self, features):
            return sum(w * f for w, f in zip(torch.softmax(self.weights, 0), features))

    class Node(nn.Module):
        def __init__(self):
            super().__init__()
            self.mix = Mix(2)
            self.post = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 4))

        def forward(self, a, b):
            return self.post(self.mix([a, b]))

    class Probe:
        def __init__(self, module):
            self.norms = {}
            for name, layer in module.named_modules():
                if len(list(layer.children())) == 0:
                    layer.register_full_backward_hook(self.saver(name))

        def saver(self, name):
            def hook(module, grad_input, grad_output):
                self.norms[name] = grad_output[0].norm().item()
            return hook

    def main(hooked=True):
        torch.manual_seed(0)
        stem, node = nn.Linear(3, 4), Node()
        probe = Probe(node) if hooked else None
        x = torch.randn(2, 3)
        h = stem(x)
        out = node(h, h * 0.5).sum()
        out.backward()
        return out.detach(), [p.grad.clone() for p in stem.parameters()], probe
""")


def test_hooks_on_every_leaf_module_before_an_in_place_activation_are_found_and_fail():
    source = LEAF_HOOKS
    assert _findings(source) == [(_line(source, "nn.ReLU(inplace=True)"), "ADL025")]
    try:
        _load(source)["main"]()
    except RuntimeError as error:
        assert "BackwardHookFunction" in str(error)
    else:
        raise AssertionError("the hooked forward ran")


def test_the_activation_out_of_place_is_silent_and_matches_the_unhooked_model():
    fixed = LEAF_HOOKS.replace("nn.ReLU(inplace=True)", "nn.ReLU(inplace=False)")
    assert _findings(fixed) == []
    main = _load(fixed)["main"]
    out, grads, probe = main(hooked=True)
    reference_out, reference_grads, _ = main(hooked=False)
    assert torch.equal(out, reference_out) and all(torch.equal(a, b) for a, b in zip(grads, reference_grads))
    assert "post.0" in probe.norms  # the probe saw the activation's gradient


def test_hooks_filtered_by_another_test_and_old_style_hooks_stay_silent():
    by_name = LEAF_HOOKS.replace("if len(list(layer.children())) == 0:", "if name == 'post.1':")
    assert _findings(by_name) == []
    _load(by_name)["main"]()
    old_style = LEAF_HOOKS.replace("register_full_backward_hook", "register_backward_hook")
    assert _findings(old_style) == []
