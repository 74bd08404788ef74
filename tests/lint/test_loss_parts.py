"""ADL023 and the running sums of a loss's parts (issue 16; docs/lint.md,
"ADL023: the running sums of a loss's parts").

Set S's SGL loop (tests/lint/recreations/r392_sgl_epoch_loss_sum_keeps_graphs.py)
sums `total_bpr_loss += bpr_loss` where `loss = bpr_loss + self.reg * reg_loss`
is backpropagated: the part carries the same graph as the loss, so the running
sum keeps every iteration's graph just as `total_loss += loss` does.  These are
fresh programs of that cause in other shapes, written before the rule was
widened (a GAN logging its generator loss's parts, a VAE summing its
reconstruction and KL terms per epoch, a multi-task model summing its per-task
losses into a dict of totals), and two correct ones (the parts summed as numbers,
a part that is a Python float).  Each claim is run with torch: the buggy sums hold
every iteration's graph, and the help (`.item()`), applied, logs the same numbers
and trains the same parameters as the program written correctly by hand."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fixes import fix_source

ADL023 = Selection(("ADL023",))


def _findings(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "loss_parts.py")]


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "loss_parts.py", "exec"), namespace)
    return namespace


def _autograd_nodes(tensor) -> int:
    seen, stack = set(), [getattr(tensor, "grad_fn", None)]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def _fixed(source: str) -> str:
    text, count = fix_source(source, lambda t: lint_source(t, "loss_parts.py", ADL023), unsafe=True)
    assert count > 0
    return text


# ----- a GAN that logs its generator loss's parts ----------------------------

GAN = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))

        def forward(self, x):
            return self.net(x)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

        def forward(self, x):
            return self.net(x)


    class Pix2PixTrainer:
        def __init__(self, l1_weight=10.0):
            torch.manual_seed(0)
            self.generator = Generator()
            self.discriminator = Discriminator()
            self.g_optimizer = torch.optim.SGD(self.generator.parameters(), lr=0.05)
            self.d_optimizer = torch.optim.SGD(self.discriminator.parameters(), lr=0.05)
            self.l1_weight = l1_weight

        def train_epoch(self, batches):
            running_d, running_adv, running_l1 = 0.0, 0.0, 0.0
            for source, target in batches:
                fake = self.generator(source)
                self.d_optimizer.zero_grad()
                real_score = self.discriminator(target)
                fake_score = self.discriminator(fake.detach())
                d_real = F.binary_cross_entropy_with_logits(real_score, torch.ones_like(real_score))
                d_fake = F.binary_cross_entropy_with_logits(fake_score, torch.zeros_like(fake_score))
                d_loss = (d_real + d_fake) / 2
                d_loss.backward()
                self.d_optimizer.step()
                running_d += d_loss.item()

                self.g_optimizer.zero_grad()
                fooled = self.discriminator(fake)
                g_adv = F.binary_cross_entropy_with_logits(fooled, torch.ones_like(fooled))
                g_l1 = F.l1_loss(fake, target) * self.l1_weight
                g_loss = g_adv + g_l1
                g_loss.backward()
                self.g_optimizer.step()
                running_adv += g_adv
                running_l1 += g_l1
            n = len(batches)
            return running_d / n, running_adv / n, running_l1 / n
    """)


def _gan_batches(count=4):
    generator = torch.Generator().manual_seed(3)
    return [(torch.randn(5, 4, generator=generator), torch.randn(5, 4, generator=generator))
            for _ in range(count)]


def test_gan_generator_loss_parts_summed_with_their_graphs_are_reported():
    assert _findings(GAN) == [(_line_of(GAN, "running_adv += g_adv"), "ADL023"),
                              (_line_of(GAN, "running_l1 += g_l1"), "ADL023")]
    finding = lint_source(GAN, "loss_parts.py")[0]
    assert "`running_adv` sums `g_adv`" in finding.message
    assert "`g_loss`" in finding.message and "g_adv.item()" in finding.message
    _, adv_of_four, _ = _namespace(GAN)["Pix2PixTrainer"]().train_epoch(_gan_batches(4))
    _, adv_of_one, _ = _namespace(GAN)["Pix2PixTrainer"]().train_epoch(_gan_batches(1))
    assert _autograd_nodes(adv_of_four) > 2 * _autograd_nodes(adv_of_one) > 0


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")  # the buggy sums are logged
def test_gan_help_applied_logs_the_same_numbers_and_trains_the_same():
    fixed = _fixed(GAN)
    assert "running_adv += g_adv.detach()" in fixed and "running_l1 += g_l1.detach()" in fixed
    assert _findings(fixed) == []
    by_hand = GAN.replace("running_adv += g_adv", "running_adv += g_adv.item()").replace(
        "running_l1 += g_l1", "running_l1 += g_l1.item()")
    trainers = [_namespace(s)["Pix2PixTrainer"]() for s in (GAN, fixed, by_hand)]
    logs = [trainer.train_epoch(_gan_batches()) for trainer in trainers]
    buggy_log, fixed_log, hand_log = ([float(v) for v in log] for log in logs)
    assert buggy_log == fixed_log  # the fix keeps float32 tensor sums
    assert fixed_log == pytest.approx(hand_log, rel=1e-6)  # `.item()` sums in Python floats
    assert _autograd_nodes(logs[1][1]) == 0  # the fixed sums hold no graph
    for trainer in trainers[:2]:
        for module in ("generator", "discriminator"):
            for p, q in zip(getattr(trainer, module).parameters(), getattr(trainers[2], module).parameters()):
                assert torch.equal(p, q)


# ----- a VAE that sums its reconstruction and KL terms per epoch -------------

VAE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class VAE(nn.Module):
        def __init__(self, features=6, latent=2):
            super().__init__()
            self.encoder = nn.Linear(features, 2 * latent)
            self.decoder = nn.Linear(latent, features)

        def forward(self, x):
            mu, logvar = self.encoder(x).chunk(2, dim=-1)
            z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
            return torch.sigmoid(self.decoder(z)), mu, logvar


    def train(model: VAE, optimizer, loader, epochs, beta=1.0):
        history = []
        for epoch in range(epochs):
            epoch_recon, epoch_kl = 0, 0
            for x in loader:
                optimizer.zero_grad()
                x_hat, mu, logvar = model(x)
                recon = F.binary_cross_entropy(x_hat, x, reduction="sum")
                kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
                loss = recon + beta * kl
                loss.backward()
                optimizer.step()
                epoch_recon += recon
                epoch_kl = epoch_kl + kl
            history.append((epoch_recon / len(loader), epoch_kl / len(loader)))
        return history
    """)


def _vae_run(source: str, batches=4):
    namespace = _namespace(source)
    torch.manual_seed(0)
    model = namespace["VAE"]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(5)
    loader = [torch.rand(3, 6, generator=generator) for _ in range(batches)]
    torch.manual_seed(1)  # the reparameterisation's noise
    return model, namespace["train"](model, optimizer, loader, epochs=2)


def test_vae_terms_summed_per_epoch_with_their_graphs_are_reported():
    assert _findings(VAE) == [(_line_of(VAE, "epoch_recon += recon"), "ADL023"),
                              (_line_of(VAE, "epoch_kl = epoch_kl + kl"), "ADL023")]
    _, history_of_four = _vae_run(VAE, 4)
    _, history_of_one = _vae_run(VAE, 1)
    assert _autograd_nodes(history_of_four[-1][1]) > 2 * _autograd_nodes(history_of_one[-1][1]) > 0


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")  # the buggy sums are logged
def test_vae_help_applied_logs_the_same_numbers_and_trains_the_same():
    fixed = _fixed(VAE)
    assert "epoch_recon += recon.detach()" in fixed and "epoch_kl = epoch_kl + kl.detach()" in fixed
    assert _findings(fixed) == []
    by_hand = VAE.replace("epoch_recon += recon", "epoch_recon += recon.item()").replace(
        "epoch_kl = epoch_kl + kl", "epoch_kl = epoch_kl + kl.item()")
    runs = [_vae_run(s) for s in (VAE, fixed, by_hand)]
    logs = [[(float(a), float(b)) for a, b in history] for _, history in runs]
    assert logs[0] == logs[1]  # the fix keeps float32 tensor sums
    assert [v for pair in logs[1] for v in pair] == pytest.approx([v for pair in logs[2] for v in pair], rel=1e-6)
    for model, _ in runs[:2]:
        for p, q in zip(model.parameters(), runs[2][0].parameters()):
            assert torch.equal(p, q)


# ----- a multi-task model summing its per-task losses into a dict ------------

MULTI_TASK = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Linear(5, 8)
            self.classes = nn.Linear(8, 3)
            self.depth = nn.Linear(8, 1)

        def forward(self, x):
            h = torch.relu(self.trunk(x))
            return self.classes(h), self.depth(h).squeeze(-1)


    def fit(model: TwoHeads, optimizer, loader, depth_weight=0.5):
        totals = {"classes": 0.0, "depth": 0.0}
        for x, labels, depths in loader:
            logits, predicted_depth = model(x)
            class_loss = F.cross_entropy(logits, labels)
            depth_loss = F.smooth_l1_loss(predicted_depth, depths)
            loss = class_loss + depth_weight * depth_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            totals["classes"] += class_loss
            totals["depth"] += depth_loss
        return {task: total / len(loader) for task, total in totals.items()}
    """)


def _multi_task_run(source: str, batches=4):
    namespace = _namespace(source)
    torch.manual_seed(0)
    model = namespace["TwoHeads"]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(7)
    loader = [(torch.randn(4, 5, generator=generator), torch.randint(0, 3, (4,), generator=generator),
               torch.randn(4, generator=generator)) for _ in range(batches)]
    return model, namespace["fit"](model, optimizer, loader)


def test_per_task_losses_summed_into_a_dict_with_their_graphs_are_reported():
    assert _findings(MULTI_TASK) == [(_line_of(MULTI_TASK, 'totals["classes"] += class_loss'), "ADL023"),
                                     (_line_of(MULTI_TASK, 'totals["depth"] += depth_loss'), "ADL023")]
    _, of_four = _multi_task_run(MULTI_TASK, 4)
    _, of_one = _multi_task_run(MULTI_TASK, 1)
    assert _autograd_nodes(of_four["depth"]) > 2 * _autograd_nodes(of_one["depth"]) > 0


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")  # the buggy sums are logged
def test_per_task_help_applied_logs_the_same_numbers_and_trains_the_same():
    fixed = _fixed(MULTI_TASK)
    assert 'totals["classes"] += class_loss.detach()' in fixed
    assert _findings(fixed) == []
    by_hand = MULTI_TASK.replace("+= class_loss", "+= class_loss.item()").replace(
        "+= depth_loss", "+= depth_loss.item()")
    runs = [_multi_task_run(s) for s in (MULTI_TASK, fixed, by_hand)]
    logs = [{task: float(v) for task, v in log.items()} for _, log in runs]
    assert logs[0] == logs[1]  # the fix keeps float32 tensor sums
    assert logs[1] == pytest.approx(logs[2], rel=1e-6)  # `.item()` sums in Python floats
    for model, _ in runs[:2]:
        for p, q in zip(model.parameters(), runs[2][0].parameters()):
            assert torch.equal(p, q)


# ----- correct: the parts summed as numbers ----------------------------------

PARTS_AS_NUMBERS = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Regressor(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(3, 1)

        def forward(self, x):
            return self.layer(x).squeeze(-1)


    def train(model: Regressor, optimizer, loader, l2=1e-3):
        fit_sum, penalty_sum, total_sum = 0.0, torch.zeros(()), 0.0
        for x, y in loader:
            fit = F.mse_loss(model(x), y)
            penalty = l2 * model.layer.weight.pow(2).sum()
            loss = fit + penalty
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            fit_sum += fit.item()
            penalty_sum += penalty.detach()
            total_sum += loss.item()
        return fit_sum, float(penalty_sum), total_sum
    """)


def test_parts_summed_as_numbers_are_silent():
    assert _findings(PARTS_AS_NUMBERS) == []
    namespace = _namespace(PARTS_AS_NUMBERS)
    torch.manual_seed(0)
    model = namespace["Regressor"]()
    generator = torch.Generator().manual_seed(2)
    loader = [(torch.randn(4, 3, generator=generator), torch.randn(4, generator=generator)) for _ in range(3)]
    fit_sum, penalty_sum, total_sum = namespace["train"](
        model, torch.optim.SGD(model.parameters(), lr=0.1), loader)
    assert fit_sum + penalty_sum == pytest.approx(total_sum)


# ----- correct: a part that is a Python float (REINFORCE's return) ------------

REINFORCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.logits = nn.Linear(4, 2)

        def forward(self, state):
            return torch.distributions.Categorical(logits=self.logits(state))


    def episode_return(rewards, gamma=0.99):
        g = 0.0
        for r in reversed(rewards):
            g = r + gamma * g
        return g


    def train(policy: Policy, optimizer, episodes):
        total_return = 0.0
        for states, rewards in episodes:
            log_prob = policy(states).log_prob(torch.zeros(len(states), dtype=torch.long)).sum()
            ret = episode_return(rewards)
            loss = -log_prob * ret
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_return += ret
        return total_return / len(episodes)
    """)


def test_a_part_that_is_a_python_float_is_silent():
    assert _findings(REINFORCE) == []
    namespace = _namespace(REINFORCE)
    torch.manual_seed(0)
    policy = namespace["Policy"]()
    episodes = [(torch.randn(3, 4), [1.0, 0.0, 1.0]), (torch.randn(2, 4), [0.5, 0.5])]
    mean_return = namespace["train"](policy, torch.optim.SGD(policy.parameters(), lr=0.1), episodes)
    assert isinstance(mean_return, float)
    assert mean_return == pytest.approx((1.0 + 0.99 ** 2 + 0.5 + 0.99 * 0.5) / 2)


# ----- silent: no proof that the summed part is the graph's ------------------

PART_CASES = {
    # the part is re-bound in the loop: which value is summed is not followed
    "re-bound": ("recon = F.mse_loss(model(x), x)\n        recon = recon * 2", "total_recon += recon"),
    # the part is computed under no_grad: a constant in the loss
    "no_grad": ("with torch.no_grad():\n            recon = F.mse_loss(model(x), x)", "total_recon += recon"),
    # a tensor from the data only: no model's output is read
    "data only": ("recon = F.mse_loss(x, x.flip(0))", "total_recon += recon"),
}

PART_LOOP = """
import torch
import torch.nn.functional as F


def train(model, optimizer, loader):
    total_recon = 0.0
    for x in loader:
        {bind}
        penalty = model.weight.pow(2).sum()
        loss = recon + penalty
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        {sum}
    return total_recon
"""


@pytest.mark.parametrize("case", sorted(PART_CASES))
def test_a_part_without_a_graph_of_its_own_is_silent(case):
    bind, summed = PART_CASES[case]
    source = PART_LOOP.format(bind=bind, sum=summed)
    assert _findings(source) == []
    # the same loop with the part read from the model once, with gradients on, is reported
    reported = PART_LOOP.format(bind="recon = F.mse_loss(model(x), x)", sum=summed)
    assert _findings(reported) == [(_line_of(reported, summed), "ADL023")]
    model = torch.nn.Linear(3, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [torch.randn(2, 3) for _ in range(3)]
    namespace = _namespace(source)
    total = namespace["train"](model, optimizer, loader)
    if case != "re-bound":
        assert _autograd_nodes(total) == 0  # the sum holds no graph: silence is right
