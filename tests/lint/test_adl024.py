"""ADL024: a loss meant for one network whose backward pass also fills another
network's gradients, which that network's optimizer then steps.

Each buggy form is found at its backward and really shows the wrong gradient
(the other network's gradient at its step differs from the gradient of its own
loss); the change the message names (clear that optimizer's gradients before
its own backward pass), applied, gives the reference gradient and the linter is
silent on it; correct GAN / adversarial loops are silent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

from autograd_doctor.lint.engine import lint_file, lint_source

HERE = Path(__file__).parent
FRESH = HERE / "fixtures" / "adl024"
RECREATIONS = HERE / "recreations"

# The fresh WGAN program builds its optimizers in a helper that returns them in a
# tuple, so which optimizer steps which module is not in the file's text (an
# unknown link: silent).  The same loop, with the optimizers bound to names over the
# modules the loop calls, is the form the rule covers.
NAMED_OPTIMIZERS = """

gen, critic = nn.Linear(2, 3), nn.Linear(3, 1)
g_opt = torch.optim.SGD(gen.parameters(), lr=0.1)
c_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
"""

NAMED_GAN_OPTIMIZERS = """

G, D = nn.Linear(2, 3), nn.Linear(3, 1)
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
enc, dec = nn.Linear(3, 2), nn.Linear(2, 3)
opt_enc = torch.optim.SGD(enc.parameters(), lr=0.1)
opt_dec = torch.optim.SGD(dec.parameters(), lr=0.1)
"""


def load_source(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def adl024_lines(source: str) -> list[int]:
    return [f.line for f in lint_source(source, "<adl024>") if f.code == "ADL024"]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_recreations_found_at_the_backward_and_the_bug_shows():
    for name in ("r310_vq_gan_discriminator_accumulates_generator_grads.py",
                 "r350_began_generator_loss_reaches_discriminator.py"):
        path = RECREATIONS / name
        source = path.read_text(encoding="utf-8")
        findings, _ = lint_file(str(path))
        found = [f for f in findings if f.code == "ADL024"]
        assert [f.line for f in found] == [line_of(source, ".backward()  # expect: ADL024")]
        assert "not detached" in found[0].message and "requires_grad_(False)" in found[0].message
        assert load(path).bug_shows()


def test_fresh_domain_adversary_found_and_shows():
    path = FRESH / "fresh_domain_adversary_one_backward.py"
    source = path.read_text(encoding="utf-8")
    findings, _ = lint_file(str(path))
    found = [f for f in findings if f.code == "ADL024"]
    assert [f.line for f in found] == [line_of(source, "total.backward()  # expect: ADL024")]
    assert "`self.domain(feats)`" in found[0].message and "`self.dom_opt.step()`" in found[0].message
    assert load(path).bug_shows()


def test_fresh_wgan_with_named_optimizers_found_and_shows():
    source = (FRESH / "fresh_wgan_critic_not_cleared.py").read_text(encoding="utf-8")
    assert adl024_lines(source) == []  # the optimizers' modules are not in the text: silent
    named = source + NAMED_OPTIMIZERS
    assert adl024_lines(named) == [line_of(named, "g_loss.backward()  # expect: ADL024")]
    assert load_source(named, "wgan_named").bug_shows()


def critic_grad_at_step(module) -> tuple[torch.Tensor, torch.Tensor]:
    """The critic's gradient when `c_opt.step()` reads it, and its own loss's gradient."""
    real = torch.randn(4, 3)
    seen = []
    module.train(*module.models(), [real], critic_grads=seen)
    gen, critic, _, _ = module.models()
    fake = gen(torch.randn(4, 2))
    own = torch.autograd.grad(critic(fake.detach()).mean() - critic(real).mean(), critic.weight)[0]
    return seen[0], own


def test_the_suggested_clear_makes_the_wgan_loop_correct():
    source = (FRESH / "fresh_wgan_critic_not_cleared.py").read_text(encoding="utf-8") + NAMED_OPTIMIZERS
    fixed = source.replace("        c_loss.backward()\n", "        c_opt.zero_grad()\n        c_loss.backward()\n")
    assert fixed != source
    assert adl024_lines(fixed) == []
    at_step, own = critic_grad_at_step(load_source(fixed, "wgan_fixed"))
    assert torch.equal(at_step, own)
    at_step, own = critic_grad_at_step(load_source(source, "wgan_buggy"))
    assert not torch.allclose(at_step, own)


def test_the_suggested_freeze_makes_the_adapter_correct():
    """Freezing the domain classifier while the encoder's term backpropagates, the
    classifier's gradient is its own loss's."""
    path = FRESH / "fresh_domain_adversary_one_backward.py"
    source = path.read_text(encoding="utf-8")
    fixed = source.replace(
        "        fool = -F.cross_entropy(self.domain(feats), d)\n",
        "        self.domain.requires_grad_(False)\n"
        "        fool = -F.cross_entropy(self.domain(feats), d)\n"
        "        self.domain.requires_grad_(True)\n")
    assert fixed != source
    assert adl024_lines(fixed) == []
    module = load_source(fixed, "adapter_fixed")
    x, y, d = torch.randn(6, 5), torch.randint(0, 2, (6,)), torch.randint(0, 2, (6,))
    adapter = module.Adapter()
    feats = adapter.encoder(x)
    own = torch.autograd.grad(torch.nn.functional.cross_entropy(adapter.domain(feats.detach()), d),
                              adapter.domain.weight)[0]
    adapter.update(x, y, d)
    assert torch.allclose(adapter.domain.weight.grad, own)


def test_correct_loops_are_silent():
    source = (FRESH / "fresh_correct_loops.py").read_text(encoding="utf-8")
    assert adl024_lines(source) == []
    named = source + NAMED_GAN_OPTIMIZERS  # whose parameters each optimizer steps is known
    assert adl024_lines(named) == []
    load_source(named, "correct_named").run()


def test_other_recreations_of_the_form_stay_silent_where_the_loss_is_in_another_method():
    """r313 (Lightning's `training_step`) and r335 (the generator loss computed in
    `SoundStream.forward`): the crossing is in another method, not followed."""
    for name in ("r313_lightning_gan_only_stepped_optimizer_zeroed.py",
                 "r335_soundstream_trainer_discriminator_grads_not_cleared.py"):
        findings, _ = lint_file(str(RECREATIONS / name))
        assert not [f for f in findings if f.code == "ADL024"]
