"""Causes left open by r394-r421 (docs/lint.md, "Causes left open by r394-r421").

* ADL029 (new): a gradient clip after every micro-batch's backward pass in a
  loop that steps and clears only inside an accumulation window's `if`
  (r411, GPT2-Chinese).  Each clip rescales the window's partial sum.
* ADL024, the other direction: a discriminator's loss computed from the
  generator's output not detached, backpropagated after the discriminator's
  optimizer alone was cleared, and the generator's optimizer stepped after it
  with nothing clearing it between (r421, dome272's VQGAN): the
  discriminator's objective is added into the generator's update.

Each cause: the re-creation's form and two fresh programs in other shapes
(written before the rules were run on them), buggy -> a finding at the line,
correct -> silent, and each claim run with torch against a hand-written
reference."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "causes7.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "causes7.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ----- ADL029: a clip on every micro-batch of an accumulation window --------

# fresh 1: a trainer class, the optimizer built in __init__, a while loop with
# a counter, a grad scaler, the clip under `if self.max_norm > 0:`
TRAINER_CLIPS_EACH_MICRO_BATCH = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    class Trainer:
        def __init__(self, model, accumulation=3, max_norm=0.02):
            self.model = model
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
            self.scaler = torch.amp.GradScaler("cpu", enabled=False)
            self.accumulation = accumulation
            self.max_norm = max_norm

        def fit(self, batches):
            micro_step = 0
            while micro_step < len(batches):
                x, y = batches[micro_step]
                loss = F.mse_loss(self.model(x), y) / self.accumulation
                self.scaler.scale(loss).backward()
                if self.max_norm > 0:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
                micro_step += 1
                if micro_step % self.accumulation == 0:
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                    self.optimizer.zero_grad(set_to_none=True)
    """)

TRAINER_CLIPS_ONCE_PER_WINDOW = TRAINER_CLIPS_EACH_MICRO_BATCH.replace("""\
            if self.max_norm > 0:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
            micro_step += 1
            if micro_step % self.accumulation == 0:
""", """\
            micro_step += 1
            if micro_step % self.accumulation == 0:
                if self.max_norm > 0:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
""")

# fresh 2: a function over named layers, clip_grad_value_, `not (i + 1) % k`
VALUE_CLIP_EACH_MICRO_BATCH = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def train(encoder, head, batches, accumulate=2, clip=0.01):
        net = nn.Sequential(encoder, head)
        opt = torch.optim.SGD(net.parameters(), lr=0.5)
        for i, (x, target) in enumerate(batches):
            logits = net(x)
            loss = nn.functional.cross_entropy(logits, target)
            (loss / accumulate).backward()
            nn.utils.clip_grad_value_(net.parameters(), clip)
            if not (i + 1) % accumulate:
                opt.step()
                opt.zero_grad()
        return net
    """)

VALUE_CLIP_ONCE_PER_WINDOW = VALUE_CLIP_EACH_MICRO_BATCH.replace("""\
        nn.utils.clip_grad_value_(net.parameters(), clip)
        if not (i + 1) % accumulate:
""", """\
        if not (i + 1) % accumulate:
            nn.utils.clip_grad_value_(net.parameters(), clip)
""")


def test_adl029_trainer_clip_each_micro_batch_is_reported_and_its_fix_is_silent():
    assert TRAINER_CLIPS_ONCE_PER_WINDOW != TRAINER_CLIPS_EACH_MICRO_BATCH
    line = _line_of(TRAINER_CLIPS_EACH_MICRO_BATCH, "clip_grad_norm_(")
    assert _codes(TRAINER_CLIPS_EACH_MICRO_BATCH) == [(line, "ADL029")]
    finding = lint_source(TRAINER_CLIPS_EACH_MICRO_BATCH, "causes7.py")[0]
    assert "`micro_step % self.accumulation == 0`" in finding.message
    assert "clip once, inside the `if`" in finding.message
    assert _codes(TRAINER_CLIPS_ONCE_PER_WINDOW) == []


def test_adl029_value_clip_each_micro_batch_is_reported_and_its_fix_is_silent():
    assert VALUE_CLIP_ONCE_PER_WINDOW != VALUE_CLIP_EACH_MICRO_BATCH
    line = _line_of(VALUE_CLIP_EACH_MICRO_BATCH, "clip_grad_value_(")
    assert _codes(VALUE_CLIP_EACH_MICRO_BATCH) == [(line, "ADL029")]
    assert _codes(VALUE_CLIP_ONCE_PER_WINDOW) == []


def _regression_batches(count, classes=None):
    generator = torch.Generator().manual_seed(5)
    if classes:
        return [(3 * torch.randn(4, 3, generator=generator), torch.randint(0, classes, (4,), generator=generator))
                for _ in range(count)]
    return [(3 * torch.randn(4, 3, generator=generator), 5 * torch.randn(4, 2, generator=generator))
            for _ in range(count)]


def _trainer_reference(model, batches, accumulation, max_norm):
    """The window's gradient clipped once, then an SGD step, written by hand."""
    params = list(model.parameters())
    for start in range(0, len(batches), accumulation):
        window = batches[start:start + accumulation]
        loss = sum(torch.nn.functional.mse_loss(model(x), y) / accumulation for x, y in window)
        grads = torch.autograd.grad(loss, params)
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        scale = min(1.0, max_norm / (float(norm) + 1e-6))
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 0.1 * g * scale
    return params


def test_adl029_trainer_claims_run_with_torch():
    """The fixed trainer equals the hand-written window clip; the buggy one does not."""
    batches = _regression_batches(6)
    results = {}
    for name, source in (("buggy", TRAINER_CLIPS_EACH_MICRO_BATCH), ("fixed", TRAINER_CLIPS_ONCE_PER_WINDOW)):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2)
        _namespace(source)["Trainer"](model).fit(batches)
        results[name] = [p.detach().clone() for p in model.parameters()]
    torch.manual_seed(0)
    reference = _trainer_reference(torch.nn.Linear(3, 2), batches, accumulation=3, max_norm=0.02)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(results["fixed"], reference))
    assert not all(torch.allclose(a, b, atol=1e-6) for a, b in zip(results["buggy"], reference))


def test_adl029_value_clip_claims_run_with_torch():
    batches = _regression_batches(4, classes=2)
    results = {}
    for name, source in (("buggy", VALUE_CLIP_EACH_MICRO_BATCH), ("fixed", VALUE_CLIP_ONCE_PER_WINDOW)):
        torch.manual_seed(0)
        net = _namespace(source)["train"](torch.nn.Linear(3, 4), torch.nn.Linear(4, 2), batches)
        results[name] = [p.detach().clone() for p in net.parameters()]
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    for start in (0, 2):
        loss = sum(torch.nn.functional.cross_entropy(net(x), t) / 2 for x, t in batches[start:start + 2])
        grads = torch.autograd.grad(loss, list(net.parameters()))
        with torch.no_grad():
            for p, g in zip(net.parameters(), grads):
                p -= 0.5 * g.clamp(-0.01, 0.01)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(results["fixed"], net.parameters()))
    assert not all(torch.allclose(a, b, atol=1e-6) for a, b in zip(results["buggy"], net.parameters()))


def test_adl029_clear_on_every_micro_batch_is_left_to_adl018():
    cleared_each = VALUE_CLIP_EACH_MICRO_BATCH.replace(
        "        logits = net(x)\n", "        opt.zero_grad()\n        logits = net(x)\n")
    assert cleared_each != VALUE_CLIP_EACH_MICRO_BATCH
    assert "ADL029" not in {code for _, code in _codes(cleared_each)}


def test_adl029_every_iteration_step_is_silent():
    stepped_each = VALUE_CLIP_EACH_MICRO_BATCH.replace("        if not (i + 1) % accumulate:\n", "        if True:\n")
    assert stepped_each != VALUE_CLIP_EACH_MICRO_BATCH
    assert _codes(stepped_each) == []


# ----- ADL024: the discriminator's loss through the undetached fake ---------

# fresh 1: a GAN at a script's top level: the generator's backward first (the
# fake kept with retain_graph), then the discriminator's on the same fake
GAN_SCRIPT = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
    D = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1))
    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    for _ in range(3):
        z = torch.randn(8, 2)
        real = torch.randn(8, 3)
        fake = G(z)
        opt_g.zero_grad()
        g_loss = F.softplus(-D(fake)).mean()
        g_loss.backward(retain_graph=True)
        opt_d.zero_grad()
        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()
        d_loss.backward()
        opt_g.step()
        opt_d.step()
    """)

GAN_SCRIPT_DETACHED = GAN_SCRIPT.replace("F.softplus(D(fake)).mean()", "F.softplus(D(fake.detach())).mean()")

# fresh 2: an adversarial autoencoder's method, the networks and optimizers on self,
# the critic's loss summed from two calls
AAE_METHOD = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class AdversarialAutoencoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.autoencoder = nn.Sequential(nn.Linear(4, 2), nn.Tanh(), nn.Linear(2, 4))
            self.critic = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
            self.ae_opt = torch.optim.SGD(self.autoencoder.parameters(), lr=0.05)
            self.critic_opt = torch.optim.SGD(self.critic.parameters(), lr=0.05)

        def update(self, x):
            recon = self.autoencoder(x)
            rec_loss = (recon - x).pow(2).mean()
            adv_loss = -self.critic(recon).mean()
            self.ae_opt.zero_grad()
            (rec_loss + 0.5 * adv_loss).backward(retain_graph=True)
            self.critic_opt.zero_grad()
            critic_real = self.critic(x)
            critic_fake = self.critic(recon)
            critic_loss = torch.relu(1 - critic_real).mean() + torch.relu(1 + critic_fake).mean()
            critic_loss.backward()
            self.ae_opt.step()
            self.critic_opt.step()
            return rec_loss.item()
    """)

AAE_METHOD_DETACHED = AAE_METHOD.replace("critic_fake = self.critic(recon)", "critic_fake = self.critic(recon.detach())")


def test_adl024_gan_script_discriminator_loss_reaching_the_generator_step_is_reported():
    assert GAN_SCRIPT_DETACHED != GAN_SCRIPT
    line = _line_of(GAN_SCRIPT, "d_loss.backward()")
    assert _codes(GAN_SCRIPT) == [(line, "ADL024")]
    message = lint_source(GAN_SCRIPT, "causes7.py")[0].message
    assert "`opt_g.step()`" in message and "`D(fake)`" in message and "detach" in message
    assert _codes(GAN_SCRIPT_DETACHED) == []


def test_adl024_aae_method_critic_loss_reaching_the_autoencoder_step_is_reported():
    assert AAE_METHOD_DETACHED != AAE_METHOD
    line = _line_of(AAE_METHOD, "critic_loss.backward()")
    assert _codes(AAE_METHOD) == [(line, "ADL024")]
    assert _codes(AAE_METHOD_DETACHED) == []


def _gan_parameters(source):
    namespace = _namespace(source)
    return [p.detach().clone() for p in namespace["G"].parameters()]


def test_adl024_gan_script_claims_run_with_torch():
    """The detached script's generator equals one trained on its own loss alone
    (written by hand); the buggy script's does not."""
    buggy, fixed = _gan_parameters(GAN_SCRIPT), _gan_parameters(GAN_SCRIPT_DETACHED)
    torch.manual_seed(0)
    G = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3))
    D = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 1))
    for _ in range(3):
        z, real = torch.randn(8, 2), torch.randn(8, 3)
        fake = G(z)
        g_grads = torch.autograd.grad(torch.nn.functional.softplus(-D(fake)).mean(), list(G.parameters()))
        d_loss = (torch.nn.functional.softplus(-D(real)).mean()
                  + torch.nn.functional.softplus(D(fake.detach())).mean())
        d_grads = torch.autograd.grad(d_loss, list(D.parameters()))
        with torch.no_grad():
            for p, g in zip(G.parameters(), g_grads):
                p -= 0.1 * g
            for p, g in zip(D.parameters(), d_grads):
                p -= 0.1 * g
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(fixed, G.parameters()))
    assert not all(torch.allclose(a, b, atol=1e-6) for a, b in zip(buggy, G.parameters()))


def test_adl024_aae_claims_run_with_torch():
    """The detached form trains the autoencoder on its own loss alone (the same
    update as with the critic's gradients stripped by hand); the buggy one differs."""
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(2))
    trained = {}
    for name, source in (("buggy", AAE_METHOD), ("detached", AAE_METHOD_DETACHED)):
        torch.manual_seed(0)
        model = _namespace(source)["AdversarialAutoencoder"]()
        for _ in range(3):
            model.update(x)
        trained[name] = [p.detach().clone() for p in model.autoencoder.parameters()]
    torch.manual_seed(0)
    model = _namespace(AAE_METHOD)["AdversarialAutoencoder"]()
    for _ in range(3):
        recon = model.autoencoder(x)
        own = (recon - x).pow(2).mean() - 0.5 * model.critic(recon).mean()
        ae_grads = torch.autograd.grad(own, list(model.autoencoder.parameters()))
        critic_loss = (torch.relu(1 - model.critic(x)).mean()
                       + torch.relu(1 + model.critic(recon.detach())).mean())
        critic_grads = torch.autograd.grad(critic_loss, list(model.critic.parameters()))
        with torch.no_grad():
            for p, g in zip(model.autoencoder.parameters(), ae_grads):
                p -= 0.05 * g
            for p, g in zip(model.critic.parameters(), critic_grads):
                p -= 0.05 * g
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(trained["detached"], model.autoencoder.parameters()))
    assert not all(torch.allclose(a, b, atol=1e-6) for a, b in zip(trained["buggy"], trained["detached"]))


# the real VQGAN's form (set V, dome272/VQGAN-pytorch): the optimizers come from a
# method that binds them to names and returns the names, the generator's one built
# over a sum of its parts' parameter lists
VQGAN_TRAINER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class AutoEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(6, 3)
            self.decoder = nn.Linear(3, 6)

        def forward(self, x):
            return self.decoder(torch.tanh(self.encoder(x)))


    class Trainer:
        def __init__(self):
            self.vqgan = AutoEncoder()
            self.discriminator = nn.Sequential(nn.Linear(6, 4), nn.Tanh(), nn.Linear(4, 1))
            self.opt_vq, self.opt_disc = self.configure_optimizers()

        def configure_optimizers(self):
            opt_vq = torch.optim.SGD(
                list(self.vqgan.encoder.parameters()) + list(self.vqgan.decoder.parameters()), lr=0.1)
            opt_disc = torch.optim.SGD(self.discriminator.parameters(), lr=0.1)
            return opt_vq, opt_disc

        def step(self, imgs):
            decoded = self.vqgan(imgs)
            disc_fake = self.discriminator(decoded)
            vq_loss = (imgs - decoded).abs().mean() - 0.1 * disc_fake.mean()
            gan_loss = F.relu(1.0 - self.discriminator(imgs)).mean() + F.relu(1.0 + disc_fake).mean()
            self.opt_vq.zero_grad()
            vq_loss.backward(retain_graph=True)
            self.opt_disc.zero_grad()
            gan_loss.backward()
            self.opt_vq.step()
            self.opt_disc.step()
    """)

VQGAN_TRAINER_DETACHED = VQGAN_TRAINER.replace(
    "F.relu(1.0 + disc_fake).mean()", "F.relu(1.0 + self.discriminator(decoded.detach())).mean()")


def test_adl024_optimizer_over_parts_from_a_factory_is_followed():
    assert VQGAN_TRAINER_DETACHED != VQGAN_TRAINER
    line = _line_of(VQGAN_TRAINER, "gan_loss.backward()")
    assert _codes(VQGAN_TRAINER) == [(line, "ADL024")]
    assert _codes(VQGAN_TRAINER_DETACHED) == []
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(4))
    trained = {}
    for name, source in (("buggy", VQGAN_TRAINER), ("detached", VQGAN_TRAINER_DETACHED)):
        torch.manual_seed(0)
        trainer = _namespace(source)["Trainer"]()
        for _ in range(3):
            trainer.step(x)
        trained[name] = [p.detach().clone() for p in trainer.vqgan.parameters()]
    torch.manual_seed(0)
    trainer = _namespace(VQGAN_TRAINER)["Trainer"]()
    for _ in range(3):  # the autoencoder on its own loss alone, by hand
        decoded = trainer.vqgan(x)
        own = (x - decoded).abs().mean() - 0.1 * trainer.discriminator(decoded).mean()
        grads = torch.autograd.grad(own, list(trainer.vqgan.parameters()))
        d_loss = (torch.relu(1.0 - trainer.discriminator(x)).mean()
                  + torch.relu(1.0 + trainer.discriminator(decoded.detach())).mean())
        d_grads = torch.autograd.grad(d_loss, list(trainer.discriminator.parameters()))
        with torch.no_grad():
            for p, g in zip(trainer.vqgan.parameters(), grads):
                p -= 0.1 * g
            for p, g in zip(trainer.discriminator.parameters(), d_grads):
                p -= 0.1 * g
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(trained["detached"], trainer.vqgan.parameters()))
    assert not all(torch.allclose(a, b, atol=1e-6) for a, b in zip(trained["buggy"], trained["detached"]))


def test_adl024_domain_loss_through_a_gradient_reversal_layer_is_silent():
    """Domain-adversarial training: the domain classifier's loss is meant to reach
    the feature extractor, reversed; the same order of clears, backward passes and
    steps stays silent."""
    reversal = textwrap.dedent("""
        import torch
        import torch.nn as nn


        class GradReverse(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                return -grad


        def update(features, domain_head, opt_f, opt_d, x, y, head):
            feats = features(x)
            opt_f.zero_grad()
            nn.functional.mse_loss(head(feats), y).backward(retain_graph=True)
            opt_d.zero_grad()
            domain_head(GradReverse.apply(feats)).mean().backward()
            opt_f.step()
            opt_d.step()


        features, domain_head = nn.Linear(3, 3), nn.Linear(3, 1)
        opt_f = torch.optim.SGD(features.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(domain_head.parameters(), lr=0.1)
        """)
    assert _codes(reversal) == []
    assert _codes(reversal.replace("GradReverse.apply(feats)", "feats").replace("class GradReverse", "class Other")) \
        == [(_line_of(reversal, "domain_head(GradReverse"), "ADL024")]
