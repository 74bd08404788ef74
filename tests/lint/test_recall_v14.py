"""Recall on the causes of misses (and a false finding) in the r352-r371
re-creations: each case the linter now reports really shows its bug when run,
its corrected twin (the change the finding asks for, applied) stays silent and
computes what a reference computes, and a similar correct pattern stays silent
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


# ADL021: `.detach()` as a statement on a name that carries a graph (the values of a
# reduction over a dimension, `next_qs.max(1)[0]`, keep the receiver's graph): the
# name keeps its graph and the target network gets gradients (r364).
DETACH_THROWN_AWAY = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, s):
            return self.fc(s)

    class Learner:
        def __init__(self):
            torch.manual_seed(0)
            self.online = Critic()
            self.target = Critic()
            self.target.load_state_dict(self.online.state_dict())
            self.optimizer = torch.optim.SGD(self.online.parameters(), lr=0.5)

        def learn(self, s, a, r, s2):
            q = self.online(s).gather(1, a[:, None]).squeeze(1)
            best = torch.max(self.target(s2), dim=1)[0]
            best.detach()
            loss = F.smooth_l1_loss(q, r + 0.9 * best)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return loss

    def main():
        learner = Learner()
        s, s2 = torch.randn(4, 3), torch.randn(4, 3)
        learner.learn(s, torch.tensor([0, 1, 1, 0]), torch.ones(4), s2)
        return learner
""")


def test_a_thrown_away_detach_of_a_graph_tensor_is_found_and_leaks_gradients():
    source = DETACH_THROWN_AWAY
    findings = lint_source(source, "case.py")
    assert [(f.line, f.code) for f in findings] == [(_line(source, "best.detach()"), "ADL021")]
    assert "`best` keeps its graph" in findings[0].message
    learner = _load(source)["main"]()
    assert all(p.grad is not None for p in learner.target.parameters())  # the target network was reached


def test_the_assigned_detach_is_silent_and_leaves_the_target_network_alone():
    source = DETACH_THROWN_AWAY.replace("best.detach()", "best = best.detach()")
    assert _findings(source) == []
    learner = _load(source)["main"]()
    assert all(p.grad is None for p in learner.target.parameters())
    # and the online network's step is the one a hand-written update gives
    torch.manual_seed(0)
    online, target = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    target.load_state_dict(online.state_dict())
    s, s2 = torch.randn(4, 3), torch.randn(4, 3)
    q = online(s).gather(1, torch.tensor([0, 1, 1, 0])[:, None]).squeeze(1)
    with torch.no_grad():
        best = target(s2).max(dim=1).values
    torch.nn.functional.smooth_l1_loss(q, torch.ones(4) + 0.9 * best).backward()
    expected = online.weight.detach() - 0.5 * online.weight.grad
    assert torch.allclose(learner.online.fc.weight, expected)


def test_a_thrown_away_detach_of_data_or_of_indices_is_silent():
    """No graph to keep: a data batch, and the indices of `max(1)` (element 1)."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        def step(model, x):
            x.detach()
            idx = model(x).max(1)[1]
            idx.detach()
            out = model(x)
            out.sum().backward()
            return idx

        step(nn.Linear(3, 2), torch.randn(2, 3))
    """)
    assert _findings(source) == []
    _load(source)


# A false finding (r355): a method of the module that reads its layers only for sizes
# (`[torch.zeros(n, layer.n_out) for layer in self.layers]`, an RNN's initial states)
# computes nothing from the parameters; ADL003 took it for a value of the layers made
# before the step.  Only the real finding stays: the carried states' graph, freed.
TBPTT = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Cell(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.n_out = n_out
            self.inp = nn.Linear(n_in, n_out)
            self.rec = nn.Linear(n_out, n_out, bias=False)

        def forward(self, x, h):
            return torch.tanh(self.inp(x) + self.rec(h))

    class Stacked(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Cell(3, 4), Cell(4, 2)])

        def initial_states(self, batch_size):
            return [torch.zeros(batch_size, layer.n_out) for layer in self.layers]

        def forward(self, x, states):
            new_states = []
            for layer, h in zip(self.layers, states):
                x = layer(x, h)
                new_states.append(x)
            return x, new_states

    def fit(model, optimizer, xs, ys, chunk=2):
        states = model.initial_states(xs.shape[1])
        for start in range(0, xs.shape[0], chunk):
            loss = 0.0
            for t in range(start, start + chunk):
                out, states = model(xs[t], states)
                loss = loss + F.mse_loss(out, ys[t])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            states[-1] = states[-1].detach()  # only the output layer's state

    def main():
        torch.manual_seed(0)
        model = Stacked()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        xs, ys = torch.randn(4, 2, 3), torch.randn(4, 2, 2)
        fit(model, optimizer, xs, ys)
        return model
""")


def test_states_made_from_layer_sizes_are_no_value_of_the_layers():
    source = TBPTT
    assert _findings(source) == [(_line(source, "loss.backward()"), "ADL019")]
    try:
        _load(source)["main"]()
    except RuntimeError as error:
        assert "backward through the graph a second time" in str(error)
    else:
        raise AssertionError("the carried states should fail the second backward")


def test_states_made_by_calling_the_layers_keep_the_link():
    source = TBPTT.replace("return [torch.zeros(batch_size, layer.n_out) for layer in self.layers]",
                           "return [layer(torch.zeros(batch_size, layer.inp.in_features), torch.zeros(batch_size, layer.n_out))"
                           " for layer in self.layers]")
    assert source != TBPTT
    codes = [code for _, code in _findings(source)]
    assert "ADL003" in codes and "ADL019" in codes


def test_detached_states_are_silent_and_train_as_a_reference_does():
    source = TBPTT.replace("states[-1] = states[-1].detach()  # only the output layer's state",
                           "states = [s.detach() for s in states]")
    assert source != TBPTT
    assert _findings(source) == []
    model = _load(source)["main"]()
    namespace = _load(TBPTT)
    torch.manual_seed(0)
    reference = namespace["Stacked"]()
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    xs, ys = torch.randn(4, 2, 3), torch.randn(4, 2, 2)
    h = [torch.zeros(2, 4), torch.zeros(2, 2)]
    for start in (0, 2):
        loss = 0.0
        for t in (start, start + 1):
            out, h = reference(xs[t], h)
            loss = loss + torch.nn.functional.mse_loss(out, ys[t])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        h = [s.detach() for s in h]
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), reference.parameters()))


# ADL022: a clip between the optimizer's `zero_grad()` and the backward that precedes
# its step clips the cleared gradients; the step applies the unclipped ones (r367).
CLIP_BEFORE_BACKWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def run_epoch(model, optimizer, loader, max_norm):
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x).squeeze(1), y)
            if max_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            loss.backward()
            optimizer.step()

    def main(max_norm=None):
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = [(torch.randn(5, 4), torch.randn(5) * 20) for _ in range(2)]
        run_epoch(model, optimizer, loader, max_norm)
        return model
""")

CLIP_AFTER_BACKWARD = CLIP_BEFORE_BACKWARD.replace(
    "        if max_norm is not None:\n"
    "            nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    "        loss.backward()\n",
    "        loss.backward()\n"
    "        if max_norm is not None:\n"
    "            nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n")


def test_a_clip_before_the_backward_is_found_and_changes_nothing():
    source = CLIP_BEFORE_BACKWARD
    assert _findings(source) == [(_line(source, "clip_grad_norm_"), "ADL022")]
    clipped, unclipped = _load(source)["main"](1e-2), _load(source)["main"]()
    assert torch.equal(clipped.weight, unclipped.weight)


def test_the_clip_moved_after_the_backward_is_silent_and_bounds_each_step():
    source = CLIP_AFTER_BACKWARD
    assert source != CLIP_BEFORE_BACKWARD
    assert _findings(source) == []
    model = _load(source)["main"](1e-2)
    torch.manual_seed(0)
    reference = torch.nn.Linear(4, 1)
    loader = [(torch.randn(5, 4), torch.randn(5) * 20) for _ in range(2)]
    for x, y in loader:
        reference.zero_grad()
        torch.nn.functional.mse_loss(reference(x).squeeze(1), y).backward()
        torch.nn.utils.clip_grad_norm_(reference.parameters(), 1e-2)
        with torch.no_grad():
            for p in reference.parameters():
                p -= 0.1 * p.grad
    assert all(torch.allclose(p, q) for p, q in zip(model.parameters(), reference.parameters()))


def test_a_clip_before_the_backward_of_another_optimizer_is_silent():
    """Two optimizers: the generator's clip comes after its own backward; the
    discriminator's clear and backward around it are not the generator's."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        def train(gen, disc, batches):
            opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
            opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
            for x in batches:
                opt_g.zero_grad()
                disc(gen(x)).mean().backward()
                opt_d.zero_grad()
                nn.utils.clip_grad_norm_(gen.parameters(), 1.0)
                disc(x).mean().backward()
                opt_g.step()
                opt_d.step()

        train(nn.Linear(3, 3), nn.Linear(3, 1), [torch.randn(2, 3)])
    """)
    assert _findings(source) == []
    _load(source)


# ADL019: a method of a same-file class that backpropagates one of its arguments
# (freeing its graph) and returns a value computed from it; the caller backpropagates
# that result again (r370).
HELPER_THEN_BACKWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class GradientMixer:
        def __init__(self, weight=0.5):
            self.weight = weight

        def combine(self, loss_a, loss_b, net):
            net.zero_grad()
            loss_a.backward(retain_graph=True)
            grads_a = [p.grad.clone() for p in net.parameters()]
            net.zero_grad()
            loss_b.backward()
            for p, g in zip(net.parameters(), grads_a):
                p.grad = self.weight * g + (1 - self.weight) * p.grad
            return self.weight * loss_a + (1 - self.weight) * loss_b

    def update(net, optimizer, mixer, x, y):
        out = net(x)
        loss_a = nn.functional.mse_loss(out, y)
        loss_b = out.abs().mean()
        total = mixer.combine(loss_a, loss_b, net)
        total.backward()
        optimizer.step()
        return total

    def main():
        torch.manual_seed(0)
        net = nn.Linear(3, 2)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        update(net, optimizer, GradientMixer(), torch.randn(4, 3), torch.randn(4, 2))
        return net
""")


def test_a_backward_of_what_a_freeing_helper_returned_is_found_and_fails():
    source = HELPER_THEN_BACKWARD
    assert _findings(source) == [(_line(source, "total.backward()"), "ADL019")]
    try:
        _load(source)["main"]()
    except RuntimeError as error:
        assert "backward through the graph a second time" in str(error)
    else:
        raise AssertionError("the second backward should fail")


def test_stepping_on_the_helpers_gradients_is_silent_and_matches_a_reference():
    source = HELPER_THEN_BACKWARD.replace("    total.backward()\n", "")
    assert source != HELPER_THEN_BACKWARD
    assert _findings(source) == []
    net = _load(source)["main"]()
    torch.manual_seed(0)
    reference = torch.nn.Linear(3, 2)
    x, y = torch.randn(4, 3), torch.randn(4, 2)
    out = reference(x)
    loss = 0.5 * torch.nn.functional.mse_loss(out, y) + 0.5 * out.abs().mean()
    grads = torch.autograd.grad(loss, list(reference.parameters()))
    expected = [p.detach() - 0.1 * g for p, g in zip(reference.parameters(), grads)]
    assert all(torch.allclose(p, e, atol=1e-6) for p, e in zip(net.parameters(), expected))


def test_a_helper_that_retains_the_graph_or_returns_a_number_is_silent():
    retained = HELPER_THEN_BACKWARD.replace("loss_b.backward()", "loss_b.backward(retain_graph=True)")
    assert _findings(retained) == []
    _load(retained)["main"]()
    number = HELPER_THEN_BACKWARD.replace(
        "return self.weight * loss_a + (1 - self.weight) * loss_b", "return loss_b.item()").replace(
        "    total.backward()\n", "    net(x).sum().backward()\n")
    assert _findings(number) == []
    _load(number)["main"]()


# ADL021: a forward hook that rebinds its `output` parameter and returns nothing
# changes nothing (ManifoldMixup's `hook_modify`, r366).
HOOK_WITHOUT_RETURN = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class HiddenMixup:
        def __init__(self, net, layer, lam=0.3):
            self.net = net
            self.lam = lam
            self.order = None
            layer.register_forward_hook(self.mix)

        def mix(self, module, inputs, output):
            output = self.lam * output + (1 - self.lam) * output[self.order]

        def __call__(self, x):
            self.order = torch.arange(x.shape[0] - 1, -1, -1)
            return self.net(x)

    def main():
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        mixer = HiddenMixup(net, net[0])
        x = torch.randn(3, 3)
        return net, mixer(x), x
""")


def test_a_hook_that_rebinds_its_output_without_returning_is_found_and_mixes_nothing():
    source = HOOK_WITHOUT_RETURN
    assert _findings(source) == [(_line(source, "output = self.lam"), "ADL021")]
    net, mixed, x = _load(source)["main"]()
    with torch.no_grad():
        plain = net[2](net[1](x @ net[0].weight.t() + net[0].bias))
    assert torch.allclose(mixed, plain)


def test_the_hook_that_returns_its_output_is_silent_and_mixes():
    source = HOOK_WITHOUT_RETURN.replace(
        "output = self.lam * output + (1 - self.lam) * output[self.order]\n",
        "output = self.lam * output + (1 - self.lam) * output[self.order]\n        return output\n")
    assert source != HOOK_WITHOUT_RETURN
    assert _findings(source) == []
    net, mixed, x = _load(source)["main"]()
    with torch.no_grad():
        h = x @ net[0].weight.t() + net[0].bias
        h = 0.3 * h + 0.7 * h.flip(0)
        expected = net[2](net[1](h))
    assert torch.allclose(mixed, expected)


def test_a_hook_that_rebinds_its_output_to_store_it_is_silent():
    source = HOOK_WITHOUT_RETURN.replace(
        "output = self.lam * output + (1 - self.lam) * output[self.order]\n",
        "output = output.detach()\n        self.kept = output\n")
    assert source != HOOK_WITHOUT_RETURN
    assert _findings(source) == []
    _load(source)["main"]()
