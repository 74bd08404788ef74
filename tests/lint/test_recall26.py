"""Recall causes of r606-r620 (docs/lint.md, "A twenty-sixth held-out set,
written as real code is written (r606-r620)").

* ADL003 (r612): both losses come from a top-level function of the file that
  runs the shared forward and returns a tuple display (`d_loss, g_loss =
  loss_nonsaturating(d, g, x_real)`).  ADL003 read a function's calls as calls
  of the modules passed to it only when every return was one value; now, when
  every return is a tuple display of one length, each element carries the
  parameters called to compute it in every return.

Each cause: the re-creation's form and a fresh shape (written before the rule
was run on it), buggy -> the finding at its line with its help, the suggested
order applied -> correct under torch (gradients equal to a hand-written
version), correct near twins silent."""

from __future__ import annotations

import textwrap

import pytest
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


# ----- ADL003: losses returned together by a same-file function ------------------------

GAN = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class G(nn.Module):
        def __init__(self):
            super().__init__()
            self.z_dim = 3
            self.net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))

        def forward(self, z):
            return self.net(z)


    class D(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))

        def forward(self, x):
            return self.net(x)


    def losses(d, g, x_real, z):
        dgz = torch.sigmoid(d(g(z)))
        dx = torch.sigmoid(d(x_real))
        d_loss = -(torch.log(dx + 1e-8) + torch.log(1 - dgz + 1e-8)).mean()
        g_loss = -torch.log(dgz + 1e-8).mean()
        return d_loss, g_loss


    def train(d, g, batches):
        d_opt = torch.optim.SGD(d.parameters(), lr=0.1)
        g_opt = torch.optim.SGD(g.parameters(), lr=0.1)
        for x_real, z in batches:
            d_loss, g_loss = losses(d, g, x_real, z)
            d_opt.zero_grad()
            d_loss.backward(retain_graph=True)
            d_opt.step()
            g_opt.zero_grad()
            g_loss.backward()
            g_opt.step()
""")

# a fresh shape: an actor-critic update whose helper returns (critic_loss,
# actor_loss), the actor's loss through the critic; the critic steps first
ACTOR_CRITIC = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.pi = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2), nn.Tanh())

        def forward(self, s):
            return self.pi(s)


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

        def forward(self, s, a):
            return self.q(torch.cat([s, a], dim=-1))


    def compute_losses(actor, critic, batch, gamma=0.99):
        s, a, r, s2 = batch
        with torch.no_grad():
            target = r + gamma * critic(s2, actor(s2))
        critic_loss = ((critic(s, a) - target) ** 2).mean()
        actor_loss = -critic(s, actor(s)).mean()
        return critic_loss, actor_loss


    def update(actor, critic, actor_opt, critic_opt, batch):
        critic_loss, actor_loss = compute_losses(actor, critic, batch)
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()


    def main(batches):
        actor, critic = Actor(), Critic()
        actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
        critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
        for batch in batches:
            update(actor, critic, actor_opt, critic_opt, batch)
""")


def _gan_batches():
    torch.manual_seed(0)
    return [(torch.randn(4, 2), torch.randn(4, 3)) for _ in range(2)]


def test_losses_from_one_function_found_at_the_step():
    found = _found(GAN, "ADL003")
    assert [line for line, _ in found] == [_line_of(GAN, "d_opt.step()")]
    message = found[0][1]
    assert "`g_loss`" in message and "`d`" in message and "modified by an inplace operation" in message


def test_losses_from_one_function_raise_and_the_reordered_loop_is_correct():
    with pytest.raises(RuntimeError, match="inplace operation"):
        _run(GAN)["train"](*_make_gan(), _gan_batches())
    # every backward through the shared graph first, then the steps
    fixed = _twin(GAN, """        d_opt.step()
        g_opt.zero_grad()
        g_loss.backward()
""", """        g_opt.zero_grad()
        g_loss.backward()
        d_opt.step()
""")
    assert _found(fixed, "ADL003") == []
    ns = _run(fixed)
    d, g = _make_gan(ns)
    ns["train"](d, g, _gan_batches()[:1])
    # hand-written: D's gradient from d_loss + g_loss's share, G's from g_loss, then the steps
    d2, g2 = _make_gan(ns)
    x_real, z = _gan_batches()[0]
    d_loss, g_loss = ns["losses"](d2, g2, x_real, z)
    gd = torch.autograd.grad(d_loss, list(d2.parameters()), retain_graph=True)
    gd2 = torch.autograd.grad(g_loss, list(d2.parameters()), retain_graph=True)
    gg = torch.autograd.grad(g_loss, list(g2.parameters()))
    with torch.no_grad():
        for p, a, b in zip(d2.parameters(), gd, gd2):
            p -= 0.1 * (a + b)
        for p, a in zip(g2.parameters(), gg):
            p -= 0.1 * a
    for p, q in zip(list(d.parameters()) + list(g.parameters()), list(d2.parameters()) + list(g2.parameters())):
        assert torch.allclose(p, q, atol=1e-6)


def _make_gan(ns=None):
    ns = ns or _run(GAN)
    torch.manual_seed(1)
    return ns["D"](), ns["G"]()


def test_actor_critic_helper_found_at_the_critic_step():
    found = _found(ACTOR_CRITIC, "ADL003")
    assert [line for line, _ in found] == [_line_of(ACTOR_CRITIC, "critic_opt.step()")]
    assert "`actor_loss`" in found[0][1] and "`critic`" in found[0][1]
    torch.manual_seed(0)
    batch = (torch.randn(5, 4), torch.randn(5, 2), torch.randn(5, 1), torch.randn(5, 4))
    with pytest.raises(RuntimeError, match="inplace operation"):
        _run(ACTOR_CRITIC)["main"]([batch])


def test_correct_twins_are_silent():
    # the actor's backward before the critic's step
    reordered = _twin(ACTOR_CRITIC, """    critic_opt.step()
    actor_opt.zero_grad()
    actor_loss.backward()
""", """    actor_opt.zero_grad()
    actor_loss.backward()
    critic_opt.step()
""")
    assert _found(reordered, "ADL003") == []
    # the actor's loss does not use the critic (behaviour cloning)
    cloning = _twin(ACTOR_CRITIC, "actor_loss = -critic(s, actor(s)).mean()",
                    "actor_loss = ((actor(s) - a) ** 2).mean()")
    assert _found(cloning, "ADL003") == []
    # one return of another length: which element is which is unknown
    other = _twin(ACTOR_CRITIC, "    s, a, r, s2 = batch\n",
                  "    s, a, r, s2 = batch\n    if r is None:\n        return None\n")
    assert _found(other, "ADL003") == []
    # the function defined twice in the file
    twice = ACTOR_CRITIC + textwrap.dedent("""

        def compute_losses(actor, critic, batch):
            return critic(batch[0], batch[1]).mean(), actor(batch[0]).pow(2).mean()
    """)
    assert _found(twice, "ADL003") == []
    # the actor's loss from a detached critic value in the helper
    detached = _twin(ACTOR_CRITIC, "actor_loss = -critic(s, actor(s)).mean()",
                     "actor_loss = -critic(s, actor(s)).detach().mean()")
    assert _found(detached, "ADL003") == []


# ----- ADL001: a name bound to a view of an output that an op saved ---------------------

RELATION = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Relation(nn.Module):
        def __init__(self, heads=2):
            super().__init__()
            self.proj = nn.Linear(3, heads)

        def forward(self, pairs, pad):
            relation = F.relu(self.proj(pairs)).permute(0, 3, 1, 2)
            relation.masked_fill_(pad, 0.0)
            return relation


    def train(model, batches):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for pairs, pad in batches:
            loss = model(pairs, pad).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
""")

# fresh shapes: a transposed softmax written by index, an unsqueezed sigmoid gate
# multiplied in place
ATTENTION = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Pool(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.score = nn.Linear(dim, 1)
            self.gate = nn.Linear(dim, 1)

        def forward(self, x, keep):
            attn = torch.softmax(self.score(x), dim=1).transpose(1, 2)
            attn[:, :, 0] = 0.0
            g = torch.sigmoid(self.gate(x)).unsqueeze(-1)
            g.mul_(keep)
            return (attn @ x).sum() + g.sum()


    def fit(model, x, keep):
        opt = torch.optim.Adam(model.parameters())
        loss = model(x, keep)
        loss.backward()
        opt.step()
""")


def _relation_batches():
    torch.manual_seed(0)
    pad = torch.zeros(1, 1, 3, 3, dtype=torch.bool)
    pad[..., -1] = True
    return [(torch.randn(1, 3, 3, 3), pad)]


def test_view_of_a_saved_output_written_in_place_is_found():
    found = _found(RELATION, "ADL001")
    assert [line for line, _ in found] == [_line_of(RELATION, "relation.masked_fill_(")]
    assert "`F.relu`" in found[0][1] and "ReluBackward0 keeps its output" in found[0][1]
    ns = _run(RELATION)
    torch.manual_seed(1)
    with pytest.raises(RuntimeError, match="inplace operation"):
        ns["train"](ns["Relation"](), _relation_batches())


def test_fresh_view_shapes_are_found():
    found = _found(ATTENTION, "ADL001")
    assert sorted(line for line, _ in found) == sorted([_line_of(ATTENTION, "attn[:, :, 0] = 0.0"),
                                                        _line_of(ATTENTION, "g.mul_(keep)")])
    ns = _run(ATTENTION)
    torch.manual_seed(0)
    with pytest.raises(RuntimeError, match="inplace operation"):
        ns["fit"](ns["Pool"](), torch.randn(2, 5, 4), torch.ones(2, 5, 1, 1))


def test_out_of_place_write_of_the_view_is_correct():
    fixed = _twin(RELATION, "relation.masked_fill_(pad, 0.0)", "relation = relation.masked_fill(pad, 0.0)")
    assert _found(fixed, "ADL001") == []
    ns = _run(fixed)
    torch.manual_seed(1)
    model = ns["Relation"]()
    pairs, pad = _relation_batches()[0]
    loss = model(pairs, pad).pow(2).sum()
    grads = torch.autograd.grad(loss, list(model.parameters()))
    # hand-written: the masked weights through torch.where
    relation = torch.relu(torch.nn.functional.linear(pairs, model.proj.weight, model.proj.bias)).permute(0, 3, 1, 2)
    expected = torch.autograd.grad(torch.where(pad, torch.zeros(()), relation).pow(2).sum(),
                                   list(model.parameters()))
    for a, b in zip(grads, expected):
        assert torch.allclose(a, b)


def test_view_twins_are_silent():
    # `reshape` may copy: whether the write reaches the saved output is unknown
    assert _found(_twin(RELATION, ".permute(0, 3, 1, 2)", ".reshape(1, 2, 3, 3)"), "ADL001") == []
    # a copy of the view
    assert _found(_twin(RELATION, ".permute(0, 3, 1, 2)", ".permute(0, 3, 1, 2).clone()"), "ADL001") == []
    # a view of a layer's output that the layer does not keep (`nn.Linear` keeps its input)
    assert _found(_twin(RELATION, "F.relu(self.proj(pairs)).permute(0, 3, 1, 2)",
                        "self.proj(pairs).permute(0, 3, 1, 2)"), "ADL001") == []
    # computed and written without gradients
    no_grad = _twin(RELATION, "        relation = F.relu(self.proj(pairs)).permute(0, 3, 1, 2)\n        relation.masked_fill_(pad, 0.0)\n",
                    "        with torch.no_grad():\n            relation = F.relu(self.proj(pairs)).permute(0, 3, 1, 2)\n            relation.masked_fill_(pad, 0.0)\n")
    assert _found(no_grad, "ADL001") == []
