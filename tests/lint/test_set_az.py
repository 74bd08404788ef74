"""Set AZ (docs/lint.md, "A fifty-fourth held-out check: set AZ"): the false cause seen
in its opt-in run fixed here, with the false shape (silent), a second false shape
written before the change ran on it, real shapes of the same rule still found, and
a torch check.  None of the shapes is a copy of the set's code:

- ADL008 in Gregory-Eales/ml-implementations
  (https://github.com/Gregory-Eales/ml-implementations, e.g.
  `ddpg/DDPG/q_network.py`): the `forward` of each of twelve critics and policies
  starts with
  `torch.Tensor(x)` of its input, which for the critic is `torch.cat([s, a])` with
  the actor's action.  The rule said the legacy constructor "copies it and drops it
  from the graph"; given a tensor it returns an alias of it (same storage and dtype,
  `AliasBackward0`), so the actor's gradient goes through unchanged.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source
from autograd_doctor.lint.fixes import fix_source


def _adl008(source):
    return [f for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == "ADL008"]


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# The set's form: a critic's forward wraps the joined state and action, which carry
# the actor's graph, in the legacy constructor.
CRITIC = '''
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(6, 16)
        self.l2 = nn.Linear(16, 1)

    def forward(self, s, a):
        out = torch.cat([s, a], dim=1)
        out = torch.Tensor(out)
        return self.l2(torch.relu(self.l1(out)))
'''

# Written before the change ran on it: a discriminator passes its own features through
# the legacy constructor; a generator's loss backpropagates through them.
DISCRIMINATOR = '''
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        feat = torch.sigmoid(self.fc(x))
        feat = torch.Tensor(feat)
        return self.out(feat)
'''

# Real shape of the same rule: `torch.tensor` copies the features without their graph.
COPIED = DISCRIMINATOR.replace("feat = torch.Tensor(feat)", "feat = torch.tensor(feat)")


def test_adl008_legacy_constructor_of_a_critic_input_is_silent():
    assert _adl008(CRITIC) == []


def test_adl008_legacy_constructor_of_discriminator_features_is_silent():
    assert _adl008(DISCRIMINATOR) == []


def test_adl008_torch_tensor_of_features_still_found_with_its_fix():
    findings = _adl008(COPIED)
    assert [f.line for f in findings] == [_line(COPIED, "feat = torch.tensor(feat)")]
    assert "copies it and drops it from the graph" in findings[0].message
    assert findings[0].fix is not None


def _namespace(source):
    namespace = {}
    exec(compile(source, "<set_az>", "exec"), namespace)
    return namespace


def test_torch_legacy_constructor_keeps_the_graph_and_torch_tensor_cuts_it():
    torch.manual_seed(0)
    actor = nn.Linear(4, 2)
    critic = _namespace(CRITIC)["Critic"]()
    s = torch.randn(5, 4)
    (-critic(s, actor(s)).mean()).backward()
    through_legacy = actor.weight.grad.clone()
    actor.zero_grad()
    (-critic.l2(torch.relu(critic.l1(torch.cat([s, actor(s)], 1)))).mean()).backward()
    assert torch.equal(through_legacy, actor.weight.grad) and through_legacy.abs().sum() > 0

    generator = nn.Linear(2, 8)
    z = torch.randn(4, 2)
    disc = _namespace(DISCRIMINATOR)["Discriminator"]()
    (-disc(generator(z)).mean()).backward()
    assert generator.weight.grad is not None and disc.fc.weight.grad is not None

    generator.zero_grad(set_to_none=True)
    copied = _namespace(COPIED)["Discriminator"]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's own warning about torch.tensor(t)
        (-copied(generator(z)).mean()).backward()
    assert generator.weight.grad is None and copied.fc.weight.grad is None


def test_the_fix_makes_the_cut_explicit_with_the_same_values_and_no_finding():
    select = Selection(select=("ADL008",))
    fixed_source, applied = fix_source(COPIED, lambda text: lint_source(text, "<string>", select), unsafe=False)
    assert applied == 1 and "feat = feat.detach().clone()" in fixed_source
    assert _adl008(fixed_source) == []
    torch.manual_seed(1)
    before = _namespace(COPIED)["Discriminator"]()
    after = _namespace(fixed_source)["Discriminator"]()
    after.load_state_dict(before.state_dict())
    x = torch.randn(3, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.equal(before(x), after(x))
