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
