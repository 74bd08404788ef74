"""Recall on the causes the r270-r319 re-creations left open (lint-recall-causes3).

Modules kept in a dict under constant keys (`self.models["decoder"]`, r301's
MonoLayout trainer and the monodepth2 family): the optimizer built over their
parameters (also through a list attribute grown with `+=`) steps the layer that
`self.models["decoder"](x)` calls, and a method that returns a dict of outputs
computed by them passes those modules on to its caller.

Each case the linter now reports is written differently from its re-creation
and really fails when run; the change the finding asks for makes it run with
the gradients of a reference; similar correct patterns stay silent and run."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.fixes import fix_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ----- modules kept in a dict of the trainer (ADL003) -----

# An adversarial depth trainer: the depth networks live in `self.models`, their
# optimizer is built over a list attribute grown with `+=`, the forward pass is a
# method returning a dict of outputs, and the depth step comes between the
# generator's retained backward and the critic's backward through the same outputs.
DICT_OF_MODULES_TRAINER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class DepthGANTrainer:
        def __init__(self):
            self.models = {}
            self.parameters_to_train = []
            self.models["encoder"] = nn.Sequential(nn.Linear(5, 8), nn.Tanh())
            self.parameters_to_train += list(self.models["encoder"].parameters())
            self.models["depth"] = nn.Linear(8, 3)
            self.parameters_to_train += list(self.models["depth"].parameters())
            self.critic = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
            self.model_optimizer = torch.optim.SGD(self.parameters_to_train, lr=0.1)
            self.critic_optimizer = torch.optim.SGD(self.critic.parameters(), lr=0.1)

        def process_batch(self, images, target):
            features = self.models["encoder"](images)
            outputs = {"depth": self.models["depth"](features)}
            losses = {"loss": F.mse_loss(outputs["depth"], target)}
            return outputs, losses

        def train_step(self, images, target, real):
            outputs, losses = self.process_batch(images, target)
            fake_score = self.critic(outputs["depth"])
            gen_loss = losses["loss"] + F.softplus(-fake_score).mean()
            critic_loss = F.softplus(fake_score).mean() + F.softplus(-self.critic(real)).mean()
            self.model_optimizer.zero_grad()
            gen_loss.backward(retain_graph=True)
            self.model_optimizer.step()
            self.critic_optimizer.zero_grad()
            critic_loss.backward()
            self.critic_optimizer.step()

    def main():
        torch.manual_seed(0)
        trainer = DepthGANTrainer()
        trainer.train_step(torch.randn(4, 5), torch.randn(4, 3), torch.randn(4, 3))
        return trainer
""")

# The change that keeps the meaning: the critic scores the detached depth, so its
# backward no longer goes through the depth networks that the step changed.
DICT_OF_MODULES_FIXED = DICT_OF_MODULES_TRAINER.replace(
    "critic_loss = F.softplus(fake_score).mean()",
    'critic_loss = F.softplus(self.critic(outputs["depth"].detach())).mean()')


def _reference_dict_trainer(namespace) -> list:
    """Hand-written: the generator's gradients for the depth networks, the critic's own
    loss for the critic (its gradients from `gen_loss` are cleared first), one step each."""
    torch.manual_seed(0)
    trainer = namespace["DepthGANTrainer"]()
    images, target, real = torch.randn(4, 5), torch.randn(4, 3), torch.randn(4, 3)
    encoder, depth, critic = trainer.models["encoder"], trainer.models["depth"], trainer.critic
    out = depth(encoder(images))
    nets = list(encoder.parameters()) + list(depth.parameters())
    gen_loss = torch.nn.functional.mse_loss(out, target) + torch.nn.functional.softplus(-critic(out)).mean()
    net_grads = torch.autograd.grad(gen_loss, nets)
    critic_loss = torch.nn.functional.softplus(critic(out)).mean() + \
        torch.nn.functional.softplus(-critic(real)).mean()
    critic_grads = torch.autograd.grad(critic_loss, list(critic.parameters()))
    with torch.no_grad():
        return [p - 0.1 * g for p, g in zip(nets, net_grads)] + \
            [p - 0.1 * g for p, g in zip(critic.parameters(), critic_grads)]


def _trained(trainer) -> list:
    return list(trainer.models["encoder"].parameters()) + list(trainer.models["depth"].parameters()) + \
        list(trainer.critic.parameters())


def test_step_of_modules_kept_in_a_dict_before_a_backward_through_them_is_found():
    source = DICT_OF_MODULES_TRAINER
    assert _findings(source) == [(_line(source, "self.model_optimizer.step()"), "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(source)["main"]()


def test_dict_trainer_stepped_after_both_backwards_is_silent_and_matches_the_reference():
    source = DICT_OF_MODULES_FIXED
    assert source != DICT_OF_MODULES_TRAINER
    assert _findings(source) == []
    namespace = _load(source)
    trained = _trained(namespace["main"]())
    reference = _reference_dict_trainer(namespace)
    assert all(torch.allclose(a, b) for a, b in zip(trained, reference))


def test_dict_of_modules_written_as_a_literal_and_a_module_dict_is_found():
    """`self.models = {...}` and `nn.ModuleDict({...})` in a module's `__init__`, with
    the optimizer over one key's parameters."""
    for container in ("{", "nn.ModuleDict({"):
        closing = "}" if container == "{" else "})"
        source = textwrap.dedent(f"""
            import torch
            import torch.nn as nn

            class Pair(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.nets = {container}"gen": nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3)), "disc": nn.Linear(3, 1){closing}
                    self.gen_opt = torch.optim.SGD(self.nets["gen"].parameters(), lr=0.1)

                def update(self, z):
                    fake = self.nets["gen"](z)
                    first = fake.pow(2).mean()
                    second = self.nets["disc"](fake).mean()
                    first.backward(retain_graph=True)
                    self.gen_opt.step()
                    second.backward()

            def main():
                Pair().update(torch.randn(2, 3))
        """)
        assert _findings(source) == [(_line(source, "self.gen_opt.step()"), "ADL003")], container
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _load(source)["main"]()


def test_step_of_another_key_of_the_dict_is_silent_and_runs():
    """The stepped optimizer holds `self.models["head"]` only; the later backward goes
    through `self.models["body"]` and a detached head output: nothing it saved changed."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class TwoStage:
            def __init__(self):
                self.models = {"body": nn.Linear(3, 3), "head": nn.Linear(3, 1)}
                self.head_opt = torch.optim.SGD(self.models["head"].parameters(), lr=0.1)
                self.body_opt = torch.optim.SGD(self.models["body"].parameters(), lr=0.1)

            def update(self, x):
                features = self.models["body"](x)
                head_loss = self.models["head"](features.detach()).pow(2).mean()
                body_loss = features.pow(2).mean()
                self.head_opt.zero_grad()
                head_loss.backward()
                self.head_opt.step()
                self.body_opt.zero_grad()
                body_loss.backward()
                self.body_opt.step()

        def main():
            TwoStage().update(torch.randn(4, 3))
    """)
    assert _findings(source) == []
    _load(source)["main"]()


def test_dict_of_outputs_recomputed_after_the_step_is_silent_and_runs():
    """The caller recomputes the outputs after the step: the later backward's graph is
    built from the new weights."""
    source = DICT_OF_MODULES_TRAINER.replace(
        """        self.critic_optimizer.zero_grad()
        critic_loss.backward()""",
        """        outputs, losses = self.process_batch(images, target)
        critic_loss = F.softplus(self.critic(outputs["depth"].detach())).mean() + \\
            F.softplus(-self.critic(real)).mean()
        self.critic_optimizer.zero_grad()
        critic_loss.backward()""")
    assert source != DICT_OF_MODULES_TRAINER
    assert _findings(source) == []
    _load(source)["main"]()


# ----- a comprehension that backpropagates once per element (ADL019) -----

# An attribution helper kept on a plain object (a class without bases, given the
# network in its constructor as `net.eval()`): the gradient of one score with
# respect to each input, one `autograd.grad` per input in a comprehension.
PER_INPUT_GRADIENTS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Fusion(nn.Module):
        def __init__(self):
            super().__init__()
            self.left = nn.Linear(3, 4)
            self.right = nn.Linear(2, 4)
            self.out = nn.Linear(4, 1)

        def forward(self, a, b):
            return self.out(torch.tanh(self.left(a) + self.right(b)))

    class Attribution:
        def __init__(self, net):
            self.net = net.eval()

        def input_gradients(self, inputs):
            leaves = [t.clone().requires_grad_() for t in inputs]
            score = self.net(*leaves).sum()
            return [torch.autograd.grad(score, leaf)[0] for leaf in leaves]

    def main():
        torch.manual_seed(0)
        explainer = Attribution(Fusion())
        return explainer.input_gradients([torch.randn(5, 3), torch.randn(5, 2)]), explainer
""")


def test_autograd_grad_per_element_of_a_comprehension_is_found():
    source = PER_INPUT_GRADIENTS
    assert _findings(source) == [(_line(source, "torch.autograd.grad(score, leaf)"), "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(source)["main"]()


def test_comprehension_with_the_graph_retained_is_silent_and_gives_each_inputs_gradient():
    source = PER_INPUT_GRADIENTS.replace("torch.autograd.grad(score, leaf)",
                                         "torch.autograd.grad(score, leaf, retain_graph=True)")
    assert _findings(source) == []
    namespace = _load(source)
    grads, explainer = namespace["main"]()
    torch.manual_seed(0)
    namespace["Fusion"]()  # the same draws as main()'s network
    inputs = [torch.randn(5, 3).requires_grad_(), torch.randn(5, 2).requires_grad_()]
    reference = torch.autograd.grad(explainer.net(*inputs).sum(), inputs)
    assert all(torch.equal(g, r) for g, r in zip(grads, reference))


def test_comprehension_computing_a_loss_per_element_is_silent_and_runs():
    """Each element builds its own graph (`self.net(leaf, ...)` inside the comprehension)."""
    source = PER_INPUT_GRADIENTS.replace(
        """        score = self.net(*leaves).sum()
        return [torch.autograd.grad(score, leaf)[0] for leaf in leaves]""",
        """        other = torch.zeros(5, 2)
        return [torch.autograd.grad(self.net(leaf, other).sum(), leaf)[0] for leaf in leaves[:1]]""")
    assert source != PER_INPUT_GRADIENTS
    assert _findings(source) == []
    _load(source)["main"]()


def test_comprehension_of_gradient_penalties_with_create_graph_is_silent_and_runs():
    """`create_graph=True` keeps the graph (a gradient penalty per input)."""
    source = PER_INPUT_GRADIENTS.replace("torch.autograd.grad(score, leaf)[0]",
                                         "torch.autograd.grad(score, leaf, create_graph=True)[0].pow(2).sum()")
    assert _findings(source) == []
    _load(source)["main"]()


# ----- decompositions keep their factors (ADL001) -----

# A whitening layer: the eigen-decomposition of the batch covariance keeps its
# eigenvalues and eigenvectors for backward; flooring the eigenvalues in place
# changes what it kept.
WHITENING = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Whiten(nn.Module):
        def __init__(self, eps=0.5):
            super().__init__()
            self.proj = nn.Linear(3, 3)
            self.eps = eps

        def forward(self, x):
            h = self.proj(x)
            h = h - h.mean(0)
            cov = h.T @ h / h.shape[0]
            vals, vecs = torch.linalg.eigh(cov)
            vals.clamp_(min=self.eps)
            return h @ vecs @ torch.diag(vals.rsqrt()) @ vecs.T

    def main():
        torch.manual_seed(0)
        layer = Whiten()
        layer(torch.randn(8, 3)).pow(2).sum().backward()
        return layer
""")

# A truncated SVD that renormalises the kept singular values in place.
TRUNCATED_SVD = textwrap.dedent("""
    import torch

    def low_rank(a: torch.Tensor, rank: int):
        U, S, Vh = torch.linalg.svd(a, full_matrices=False)
        total = S.pow(2).sum()
        U, S, Vh = U[:, :rank], S[:rank], Vh[:rank]
        scale = (total / S.pow(2).sum()).sqrt()
        S *= scale
        return U @ torch.diag(S) @ Vh

    def main(seed=0):
        torch.manual_seed(seed)
        a = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
        low_rank(a, 2).sum().backward()
        return a
""")


def _fixed(source: str) -> str:
    text, count = fix_source(source, lambda t: lint_source(t, "case.py"), unsafe=True)
    assert count > 0
    return text


def test_in_place_write_to_a_kept_eigenvalue_is_found_and_its_fix_gives_the_reference():
    source = WHITENING
    assert _findings(source) == [(_line(source, "vals.clamp_(min=self.eps)"), "ADL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(source)["main"]()
    fixed = _fixed(source)
    assert "vals = vals.clamp(min=self.eps)" in fixed
    assert _findings(fixed) == []
    layer = _load(fixed)["main"]()
    torch.manual_seed(0)
    reference = _load(source)["Whiten"]()
    x = torch.randn(8, 3)
    h = reference.proj(x)
    h = h - h.mean(0)
    vals, vecs = torch.linalg.eigh(h.T @ h / 8)
    (h @ vecs @ torch.diag(vals.clamp(min=0.5).rsqrt()) @ vecs.T).pow(2).sum().backward()
    assert all(torch.allclose(a.grad, b.grad) for a, b in zip(layer.parameters(), reference.parameters()))


def test_in_place_rescale_of_truncated_singular_values_is_found_and_its_fix_gives_the_reference():
    source = TRUNCATED_SVD
    assert _findings(source) == [(_line(source, "S *= "), "ADL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(source)["main"]()
    fixed = _fixed(source)
    assert "S = S * scale" in fixed
    assert _findings(fixed) == []
    leaf = _load(fixed)["main"]()
    torch.manual_seed(0)
    reference = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    U, S, Vh = torch.linalg.svd(reference, full_matrices=False)
    kept = S[:2] * (S.pow(2).sum() / S[:2].pow(2).sum()).sqrt()
    (U[:, :2] @ torch.diag(kept) @ Vh[:2]).sum().backward()
    assert torch.allclose(leaf.grad, reference.grad)


def test_decomposition_factors_copied_or_computed_without_gradients_are_silent_and_run():
    """A clone before the write, and a decomposition under `no_grad` (an initialisation)."""
    cloned = TRUNCATED_SVD.replace("    S *= ", "    S = S.clone()\n    S *= ")
    assert cloned != TRUNCATED_SVD
    assert _findings(cloned) == []
    _load(cloned)["main"]()
    no_grad = textwrap.dedent("""
        import torch

        def orthogonal_init(weight: torch.Tensor):
            with torch.no_grad():
                U, S, Vh = torch.linalg.svd(weight, full_matrices=False)
                S.fill_(1.0)
                weight.copy_(U @ torch.diag(S) @ Vh)

        def main():
            w = torch.nn.Parameter(torch.randn(4, 4))
            orthogonal_init(w)
            (w @ torch.randn(4)).sum().backward()
    """)
    assert _findings(no_grad) == []
    _load(no_grad)["main"]()


# ----- the optimizer a Lightning hook is handed (ADL003) -----

# A module in Lightning's shape, driven by a hand-written loop: `training_step` keeps
# an auxiliary consistency loss on the module, and the `optimizer_step` override
# steps the optimizer it is handed, then backpropagates the kept loss.
KEPT_AUXILIARY_LOSS = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class SemiSupervised(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))

        def configure_optimizers(self):
            return [torch.optim.SGD(self.encoder.parameters(), lr=0.1)]

        def training_step(self, batch, batch_idx):
            x, y, unlabeled = batch
            supervised = F.cross_entropy(self.encoder(x), y)
            noisy = unlabeled + 0.1 * torch.randn_like(unlabeled)
            self.consistency = F.mse_loss(self.encoder(noisy), self.encoder(unlabeled))
            return supervised

        def optimizer_step(self, epoch, batch_idx, optimizer):
            optimizer.step()
            optimizer.zero_grad()
            self.consistency.backward()
            optimizer.step()
            optimizer.zero_grad()

    def fit(module, batches):
        optimizers = module.configure_optimizers()
        for batch_idx, batch in enumerate(batches):
            for optimizer in optimizers:
                loss = module.training_step(batch, batch_idx)
                loss.backward()
                module.optimizer_step(0, batch_idx, optimizer)

    def main():
        torch.manual_seed(0)
        module = SemiSupervised()
        batch = (torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]), torch.randn(5, 4))
        fit(module, [batch])
        return module
""")


def test_step_of_the_hooks_optimizer_before_a_kept_loss_backward_is_found():
    source = KEPT_AUXILIARY_LOSS
    first_step = _line(source, "def optimizer_step") + 1
    assert _findings(source) == [(first_step, "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(source)["main"]()


def test_kept_loss_backpropagated_before_the_step_is_silent_and_matches_the_reference():
    """The change: both losses' gradients, then one step."""
    source = KEPT_AUXILIARY_LOSS.replace(
        """        optimizer.step()
        optimizer.zero_grad()
        self.consistency.backward()
        optimizer.step()
        optimizer.zero_grad()""",
        """        self.consistency.backward()
        optimizer.step()
        optimizer.zero_grad()""")
    assert source != KEPT_AUXILIARY_LOSS
    assert _findings(source) == []
    namespace = _load(source)
    trained = namespace["main"]()
    torch.manual_seed(0)
    reference = namespace["SemiSupervised"]()
    x, y, unlabeled = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]), torch.randn(5, 4)
    noisy = unlabeled + 0.1 * torch.randn_like(unlabeled)
    encoder = reference.encoder
    loss = torch.nn.functional.cross_entropy(encoder(x), y) + \
        torch.nn.functional.mse_loss(encoder(noisy), encoder(unlabeled))
    grads = torch.autograd.grad(loss, list(encoder.parameters()))
    with torch.no_grad():
        expected = [p - 0.1 * g for p, g in zip(encoder.parameters(), grads)]
    assert all(torch.allclose(a, b) for a, b in zip(trained.encoder.parameters(), expected))


def test_hook_that_recomputes_the_loss_after_the_step_is_silent_and_runs():
    """A loss computed inside the hook, after the step, has a graph of the new weights."""
    source = KEPT_AUXILIARY_LOSS.replace(
        "        self.consistency.backward()",
        "        self.encoder(torch.randn(2, 4)).pow(2).mean().backward()")
    assert source != KEPT_AUXILIARY_LOSS
    assert _findings(source) == []
    _load(source)["main"]()


# ----- a backward inside a called module's forward pass (ADL019) -----

# Test-time adaptation: a layer fits its own gain to the features it is given with
# one inner SGD step inside `forward`, on a loss computed from those features; the
# network calls it on its encoder's output, and the training loop backpropagates.
INNER_STEP_IN_FORWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class AdaptiveGain(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.gain = nn.Linear(width, width)
            self.inner = torch.optim.SGD(self.gain.parameters(), lr=0.1)

        def forward(self, features):
            fit = (self.gain(features) - features).pow(2).mean()
            self.inner.zero_grad()
            fit.backward()
            self.inner.step()
            return features + 0.1 * self.gain(features).tanh()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(4, 5), nn.Tanh())
            self.adapt = AdaptiveGain(5)
            self.head = nn.Linear(5, 3)

        def forward(self, x):
            adapted = self.adapt(self.encoder(x))
            return self.head(adapted)

    def train(net, optimizer, x, y):
        loss = F.cross_entropy(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def main():
        torch.manual_seed(0)
        net = Net()
        optimizer = torch.optim.SGD(list(net.encoder.parameters()) + list(net.head.parameters()), lr=0.0)
        train(net, optimizer, torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2]))
        return net
""")


def test_backward_through_outputs_of_a_module_whose_forward_backpropagated_is_found():
    source = INNER_STEP_IN_FORWARD
    assert _findings(source) == [(_line(source, "    loss.backward()"), "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(source)["main"]()


def test_inner_loss_on_detached_features_is_silent_and_matches_the_reference():
    """The change: the inner fit reads `features.detach()`, so it leaves the encoder's
    graph to the training loop's backward."""
    source = INNER_STEP_IN_FORWARD.replace("fit = (self.gain(features) - features)",
                                           "fit = (self.gain(features.detach()) - features.detach())")
    assert source != INNER_STEP_IN_FORWARD
    assert _findings(source) == []
    namespace = _load(source)
    net = namespace["main"]()
    torch.manual_seed(0)
    reference = namespace["Net"]()
    x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
    h = reference.encoder(x)
    gain = reference.adapt.gain
    fit = (gain(h.detach()) - h.detach()).pow(2).mean()
    grads = torch.autograd.grad(fit, list(gain.parameters()))
    with torch.no_grad():
        for p, g in zip(gain.parameters(), grads):
            p -= 0.1 * g
    loss = torch.nn.functional.cross_entropy(reference.head(h + 0.1 * gain(h).tanh()), y)
    trained = list(reference.encoder.parameters()) + list(reference.head.parameters())
    expected = torch.autograd.grad(loss, trained)
    got = [p.grad for p in list(net.encoder.parameters()) + list(net.head.parameters())]
    assert all(torch.allclose(a, b) for a, b in zip(got, expected))


def test_module_whose_forward_backpropagates_its_own_data_is_silent_and_runs():
    """The inner loss reads a fresh input, not the argument: the caller's graph is untouched."""
    source = INNER_STEP_IN_FORWARD.replace("fit = (self.gain(features) - features).pow(2).mean()",
                                           "probe = torch.randn(2, 5)\n"
                                           "        fit = (self.gain(probe) - probe).pow(2).mean()")
    assert source != INNER_STEP_IN_FORWARD
    assert _findings(source) == []
    _load(source)["main"]()
