"""Recall causes of r581-r595 (docs/lint.md, "A twenty-fourth held-out set,
written as real code is written (r581-r595)").

* ADL019 (r581): the networks handed to the training function are made by a
  tuple display unpacked into names (`generator, discriminator = Generator(),
  Discriminator()`).  The bindings read by ``argument_modules.py`` (and the
  callers' bindings of ``arguments.py``) left every element of an unpacking
  unknown; an unpacking of a display of its own length now pairs the elements
  (a swap, `a, b = b, a`, stays unknown).  ADL019's help no longer says which
  loss to detach (a GAN that updates G first detaches in the second loss), and
  does not offer `retain_graph=True` when an optimizer step lies between the two
  backwards.

Each cause: the re-creation's form and a fresh shape (written before the rule
was run on it), buggy -> the finding at its line with its help, the help applied
-> correct under torch (compared with a hand-written version), correct near
twins silent."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _found(source: str, code: str):
    return [(f.line, f.message) for f in lint_source(source, "prog.py") if f.code == code]


def _run(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<prog>", "exec"), namespace)
    return namespace


# ----- ADL019: networks from a tuple display, G updated first ------------------------

GAN = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class G(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 3))

        def forward(self, z):
            return self.net(z)


    class D(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

        def forward(self, x):
            return self.net(x)


    def epoch(gen, disc, opt_g, opt_d, batches, noise):
        for real, z in zip(batches, noise):
            opt_g.zero_grad()
            fake = gen(z)
            g_loss = nn.functional.softplus(-disc(fake)).mean()
            g_loss.backward()
            opt_g.step()
            opt_d.zero_grad()
            d_loss = nn.functional.softplus(-disc(real)).mean() + nn.functional.softplus(disc(fake)).mean()
            d_loss.backward()
            opt_d.step()


    def main(batches, noise):
        torch.manual_seed(0)
        gen, disc = G(), D()
        opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
        epoch(gen, disc, opt_g, opt_d, batches, noise)
        return gen, disc
""")


def test_networks_from_a_tuple_display_gan_g_first_found():
    found = _found(GAN, "ADL019")
    assert [line for line, _ in found] == [_line_of(GAN, "d_loss.backward()")]
    message = found[0][1]
    assert "graph of `fake`" in message and "g_loss.backward()" in message
    assert "where the loss that must not update `gen` uses it" in message
    assert "retain the graph" not in message  # opt_g.step() lies between the two backwards


def test_networks_from_a_tuple_display_help_applied_is_correct():
    fixed = _twin(GAN, "nn.functional.softplus(disc(fake)).mean()", "nn.functional.softplus(disc(fake.detach())).mean()")
    assert _found(fixed, "ADL019") == []
    torch.manual_seed(1)
    batches = [torch.randn(4, 3) for _ in range(2)]
    noise = [torch.randn(4, 2) for _ in range(2)]
    gen, disc = _run(fixed)["main"](batches, noise)
    # hand-written: the same updates, D's loss on a fake made without a graph
    ns = _run(GAN)
    torch.manual_seed(0)
    g, d = ns["G"](), ns["D"]()
    for real, z in zip(batches, noise):
        g.zero_grad()
        out = g(z)
        with torch.no_grad():
            fake = g(z)  # the generated batch, made before G's update, with no graph
        torch.nn.functional.softplus(-d(out)).mean().backward()
        with torch.no_grad():
            for p in g.parameters():
                p -= 0.1 * p.grad
        d.zero_grad()
        (torch.nn.functional.softplus(-d(real)).mean() + torch.nn.functional.softplus(d(fake)).mean()).backward()
        with torch.no_grad():
            for p in d.parameters():
                p -= 0.1 * p.grad
    for a, b in zip(list(gen.parameters()) + list(disc.parameters()), list(g.parameters()) + list(d.parameters())):
        assert torch.allclose(a, b, atol=1e-6)


def test_buggy_gan_really_fails():
    import pytest
    with pytest.raises(RuntimeError):
        _run(GAN)["main"]([torch.randn(4, 3)], [torch.randn(4, 2)])


# a fresh shape: module-level script, a list display, an encoder shared by two
# losses with no step between them
SCRIPT = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 4)

        def forward(self, x):
            return torch.tanh(self.fc(x))


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)

        def forward(self, h):
            return self.fc(h)


    def two_tasks(encoder, head_a, head_b, optimizer, x, ya, yb):
        optimizer.zero_grad()
        feats = encoder(x)
        loss_a = (head_a(feats) - ya).pow(2).mean()
        loss_a.backward()
        loss_b = (head_b(feats) - yb).pow(2).mean()
        loss_b.backward()
        optimizer.step()


    if __name__ == "__main__":
        [encoder, head_a, head_b] = [Encoder(), Head(), Head()]
        params = list(encoder.parameters()) + list(head_a.parameters()) + list(head_b.parameters())
        optimizer = torch.optim.SGD(params, lr=0.1)
        two_tasks(encoder, head_a, head_b, optimizer, torch.randn(6, 5), torch.randn(6, 1), torch.randn(6, 1))
""")


def test_fresh_shape_script_list_display_found_with_retain_offered():
    found = _found(SCRIPT, "ADL019")
    assert [line for line, _ in found] == [_line_of(SCRIPT, "loss_b.backward()")]
    assert found[0][1].endswith("detach `feats` where the loss that must not update `encoder` uses it, or retain the graph")
    fixed = _twin(SCRIPT, "loss_a.backward()", "loss_a.backward(retain_graph=True)")
    assert _found(fixed, "ADL019") == []
    exec(compile(fixed.replace('if __name__ == "__main__":', "if True:"), "<prog>", "exec"), {})


def test_swap_and_starred_and_other_length_stay_unknown():
    swapped = _twin(GAN, "gen, disc = G(), D()", "disc, gen = G(), D()\n    gen, disc = disc, gen")
    assert _found(swapped, "ADL019") == []
    starred = _twin(GAN, "gen, disc = G(), D()", "gen, *rest = G(), D()\n    disc = rest[0]")
    assert _found(starred, "ADL019") == []


def test_correct_twins_silent():
    detached = _twin(GAN, "nn.functional.softplus(disc(fake)).mean()", "nn.functional.softplus(disc(fake.detach())).mean()")
    assert _found(detached, "ADL019") == []
    fresh = _twin(GAN, "nn.functional.softplus(disc(fake)).mean()", "nn.functional.softplus(disc(gen(z).detach())).mean()")
    assert _found(fresh, "ADL019") == []
