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


# ----- ADL020: the hand-written update re-binds the leaf in the loop -----------------
# (r583 under no_grad, r584 with gradients on; the re-creations carry the plain forms)

PGD = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def attack(model, image, label, steps=3, alpha=0.01):
        delta = torch.zeros_like(image).requires_grad_()
        i = 0
        while i < steps:
            loss = F.cross_entropy(model(image + delta), label)
            loss.backward()
            with torch.no_grad():
                delta = delta + alpha * delta.grad.sign()
            i += 1
        return delta
""")


def _pgd_inputs():
    torch.manual_seed(3)
    model = torch.nn.Linear(4, 3)
    return model, torch.randn(2, 4), torch.tensor([0, 2])


def test_fresh_shape_attack_step_rebinding_under_no_grad_found():
    found = _found(PGD, "ADL020")
    line = _line_of(PGD, "delta = delta + alpha")
    assert [l for l, _ in found] == [line]
    message = found[0][1]
    assert "`delta.grad` is None from the second iteration on" in message
    assert "under `no_grad()` it is a new tensor that does not require grad" in message
    assert "update it in place under `torch.no_grad()` (`delta -= ...`) and clear `delta.grad`" in message
    import pytest
    with pytest.raises(AttributeError):  # `None.sign()` in the second iteration
        _run(PGD)["attack"](*_pgd_inputs())


def test_attack_step_help_applied_is_correct():
    fixed = _twin(PGD, "delta = delta + alpha * delta.grad.sign()",
                  "delta += alpha * delta.grad.sign()\n        delta.grad.zero_()")
    assert _found(fixed, "ADL020") == []
    model, image, label = _pgd_inputs()
    got = _run(fixed)["attack"](model, image, label)
    # hand-written: a fresh leaf per step
    delta = torch.zeros_like(image)
    for _ in range(3):
        d = delta.clone().requires_grad_()
        g, = torch.autograd.grad(torch.nn.functional.cross_entropy(model(image + d), label), d)
        delta = delta + 0.01 * g.sign()
    assert torch.equal(got.detach(), delta)


GRAD_ON = textwrap.dedent("""
    import torch


    def fit(x, y, epochs=4, lr=0.1):
        w = torch.zeros(3, requires_grad=True)
        for _ in range(epochs):
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            w = w - lr * w.grad
        return w
""")


def test_update_with_gradients_on_found_and_help_applied_correct():
    found = _found(GRAD_ON, "ADL020")
    assert [l for l, _ in found] == [_line_of(GRAD_ON, "w = w - lr * w.grad")]
    assert "with gradients on it is the result of `w - lr * w.grad`, not a leaf" in found[0][1]
    fixed = _twin(GRAD_ON, "        w = w - lr * w.grad",
                  "        with torch.no_grad():\n            w -= lr * w.grad\n        w.grad.zero_()")
    assert _found(fixed, "ADL020") == []
    torch.manual_seed(4)
    x, y = torch.randn(8, 3), torch.randn(8)
    got = _run(fixed)["fit"](x, y)
    w = torch.zeros(3)
    for _ in range(4):
        w = w - 0.1 * (2 * x.t() @ (x @ w - y) / 8)
    assert torch.allclose(got.detach(), w, atol=1e-6)


def test_update_rebinding_correct_twins_silent():
    twins = [
        # a fresh leaf each step
        _twin(PGD, "delta = delta + alpha * delta.grad.sign()",
              "delta = (delta + alpha * delta.grad.sign()).detach().requires_grad_()"),
        # marked again in the loop
        _twin(PGD, "        i += 1", "        delta.requires_grad_()\n        i += 1"),
        # the update under an `if`: the next iteration may read the old leaf
        _twin(PGD, "        with torch.no_grad():\n            delta = delta + alpha * delta.grad.sign()",
              "        if i == steps - 1:\n            with torch.no_grad():\n"
              "                delta = delta + alpha * delta.grad.sign()"),
        # another name receives the update
        _twin(GRAD_ON, "w = w - lr * w.grad\n    return w", "w_next = w - lr * w.grad\n    return w_next"),
        # one update, no loop
        textwrap.dedent("""
            import torch

            def one_step(x, y, lr=0.1):
                w = torch.zeros(3, requires_grad=True)
                loss = ((x @ w - y) ** 2).mean()
                loss.backward()
                w = w - lr * w.grad
                return w
        """),
    ]
    for source in twins:
        assert _found(source, "ADL020") == [], source


# ----- ADL017: a state carried through a local name, reset once before the loop ------
# (r586: `h = self.h` ... `self.h = h`, `model.reset()` once before the batches)

TAGGER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class StatefulTagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(4, 6)
            self.out = nn.Linear(6, 2)
            self.reset_state()

        def reset_state(self, batch=3):
            self.state = torch.zeros(batch, 6)

        def forward(self, xs):
            s = self.state
            logits = []
            for x in xs:
                s = self.cell(x, s)
                logits.append(self.out(s))
            self.state = s
            return torch.stack(logits)


    def train(model, stream, opt):
        model.reset_state()
        for xs, ys in stream:
            opt.zero_grad()
            loss = F.cross_entropy(model(xs).reshape(-1, 2), ys.reshape(-1))
            loss.backward()
            opt.step()
        return model


    def main(stream):
        torch.manual_seed(0)
        model = StatefulTagger()
        return train(model, stream, torch.optim.SGD(model.parameters(), lr=0.1))
""")


def _stream():
    torch.manual_seed(5)
    return [(torch.randn(2, 3, 4), torch.randint(0, 2, (2, 3))) for _ in range(3)]


def test_fresh_shape_state_through_local_name_found():
    found = _found(TAGGER, "ADL017")
    assert [l for l, _ in found] == [_line_of(TAGGER, "self.state = s")]
    assert "store `.detach()`ed values" in found[0][1]
    import pytest
    with pytest.raises(RuntimeError):
        _run(TAGGER)["main"](_stream())


def test_state_help_applied_is_correct():
    fixed = _twin(TAGGER, "self.state = s\n", "self.state = s.detach()\n")
    assert _found(fixed, "ADL017") == []
    got = _run(fixed)["main"](_stream())
    # hand-written truncated backpropagation through time
    ns = _run(TAGGER)
    torch.manual_seed(0)
    ref = ns["StatefulTagger"]()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    state = torch.zeros(3, 6)
    for xs, ys in _stream():
        opt.zero_grad()
        s, outs = state, []
        for x in xs:
            s = ref.cell(x, s)
            outs.append(ref.out(s))
        torch.nn.functional.cross_entropy(torch.stack(outs).reshape(-1, 2), ys.reshape(-1)).backward()
        opt.step()
        state = s.detach()
    for a, b in zip(got.parameters(), ref.parameters()):
        assert torch.allclose(a, b, atol=1e-6)


def test_state_correct_twins_silent():
    twins = [
        # reset before each sequence, inside the loop
        _twin(TAGGER, "    model.reset_state()\n    for xs, ys in stream:\n",
              "    for xs, ys in stream:\n        model.reset_state()\n"),
        # the reset method also handed around as a value: unknown
        _twin(TAGGER, "    model.reset_state()\n", "    model.reset_state()\n    hook = model.reset_state\n"),
        # a fresh state each call
        _twin(TAGGER, "s = self.state\n", "s = torch.zeros(3, 6)\n"),
        # detached
        _twin(TAGGER, "self.state = s\n", "self.state = s.detach()\n"),
    ]
    for source in twins:
        assert _found(source, "ADL017") == [], source
