"""Recall on the causes the r270-r371 re-creations left open (lint-recall-causes5).

A same-file helper that writes its untyped parameter in place (`target[target ==
ignore] = 0`, `t.masked_fill_(...)`, `h -= ...`) writes whatever tensor its
caller passes; after an op of the caller kept that tensor for backward
(`F.cross_entropy(logits, y)` keeps `y`), the call is ADL001 (r368).  Under it:
a name passed to a loss function (`F.cross_entropy`, `F.nll_loss`,
`F.mse_loss`, ...) as its input or target is a tensor (the function takes
nothing else), so `x, y = batch` makes `y` one once the loss has read it.

A helper's untyped parameter that some call of the file fills with a graph
(`scatter_softmax(src, index)` with `src` a leaf that requires grad, r343): a
parameter the helper calls a tensor-only method on (`src.detach()`) is a tensor
from that call on, and what the helper computes from untyped parameters
with tensor ops (`torch.softmax(logits, -1)`) carries the graph of the call that
passes one at their position; an op that kept such a value, then an in-place
write to it, is ADL001 once such a call is seen.

Each buggy case below was written before the change, in another shape than its
re-creation; it fails when run, the change the finding asks for (hand the
helper a copy) stays silent and gives a hand-written reference's gradients, and
similar correct patterns stay silent and run."""

from __future__ import annotations

import textwrap

import pytest
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


# ----- a helper writes its argument in place after the caller's op kept it (ADL001) -----

# A seq2seq trainer: the token loss keeps the targets (`F.nll_loss(..., targets.view(-1))`),
# then a metric helper masks the padding of its `targets` argument in place before
# counting the correct tokens; the loss's backward comes after.
SEQ2SEQ_TOKEN_ACCURACY = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    PAD = 0

    class Decoder(nn.Module):
        def __init__(self, vocab=6, hidden=5):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.rnn = nn.GRU(hidden, hidden, batch_first=True)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, tokens):
            states, _ = self.rnn(self.embed(tokens))
            return F.log_softmax(self.out(states), dim=-1)

    def token_accuracy(log_probs, targets):
        predicted = log_probs.argmax(dim=-1)
        targets.masked_fill_(targets == PAD, -1)
        return (predicted == targets).sum().item()

    def train(model, optimizer, batches):
        correct = 0
        for inputs, targets in batches:
            log_probs = model(inputs)
            loss = F.nll_loss(log_probs.view(-1, 6), targets.view(-1), ignore_index=PAD)
            correct += token_accuracy(log_probs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return correct

    def main():
        torch.manual_seed(0)
        model = Decoder()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randint(0, 6, (2, 4)), torch.randint(0, 6, (2, 4))) for _ in range(2)]
        train(model, optimizer, batches)
        return [p.detach().clone() for p in model.parameters()]
""")

# A module whose forward centres the tanh features with a method of its own class,
# `self._center(h)`, which subtracts their mean in place; tanh kept its output.
CENTERED_FEATURES = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class CenteredEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.head = nn.Linear(3, 1)

        def _center(self, features):
            features -= features.mean(dim=0, keepdim=True)
            return features

        def forward(self, x):
            h = torch.tanh(self.fc(x))
            self._center(h)
            return self.head(h)

    def main():
        torch.manual_seed(0)
        model = CenteredEncoder()
        model(torch.randn(5, 4)).pow(2).mean().backward()
        return [p.grad.clone() for p in model.parameters()]
""")


def test_seq2seq_token_accuracy_is_found_at_the_call():
    assert _findings(SEQ2SEQ_TOKEN_ACCURACY) == [
        (_line(SEQ2SEQ_TOKEN_ACCURACY, "correct += token_accuracy("), "ADL001")]


def test_seq2seq_token_accuracy_fails_when_run():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(SEQ2SEQ_TOKEN_ACCURACY)["main"]()


def test_centered_features_is_found_at_the_call():
    assert _findings(CENTERED_FEATURES) == [(_line(CENTERED_FEATURES, "self._center(h)"), "ADL001")]


def test_centered_features_fails_when_run():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(CENTERED_FEATURES)["main"]()


def _equal(left, right) -> bool:
    return len(left) == len(right) and all(torch.equal(a, b) for a, b in zip(left, right))


def test_seq2seq_copy_handed_to_the_metric_is_silent_and_trains_as_the_reference():
    changed = SEQ2SEQ_TOKEN_ACCURACY.replace("correct += token_accuracy(log_probs, targets)",
                                             "correct += token_accuracy(log_probs, targets.clone())")
    assert _findings(changed) == []
    # the reference: the same loop written by hand with no metric at all
    reference = SEQ2SEQ_TOKEN_ACCURACY.replace("correct += token_accuracy(log_probs, targets)", "pass")
    assert _equal(_load(changed)["main"](), _load(reference)["main"]())


def test_centered_features_out_of_place_is_silent_and_gives_the_reference_gradients():
    changed = CENTERED_FEATURES.replace("self._center(h)", "h = self._center(h.clone())")
    assert _findings(changed) == []
    # the reference: the centring written out of place in forward itself
    reference = CENTERED_FEATURES.replace("self._center(h)", "h = h - h.mean(dim=0, keepdim=True)")
    assert _equal(_load(changed)["main"](), _load(reference)["main"]())


CORRECT_HELPERS = {
    # the helper writes in place only when asked, and this caller does not ask
    "flag": """
        def clip_targets(targets, inplace=False):
            if inplace:
                targets.clamp_(min=0)
                return targets
            return targets.clamp(min=0)

        def step(model, x, y):
            loss = F.mse_loss(model(x), y)
            y = clip_targets(y)
            loss.backward()
            return y
    """,
    # the helper writes a copy of its argument
    "copy": """
        def clip_targets(targets):
            targets = targets.clone()
            targets[targets < 0] = 0
            return targets

        def step(model, x, y):
            loss = F.mse_loss(model(x), y)
            y = clip_targets(y)
            loss.backward()
            return y
    """,
    # the helper runs before the loss keeps the tensor
    "before": """
        def clip_targets(targets):
            targets[targets < 0] = 0
            return targets

        def step(model, x, y):
            clip_targets(y)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return y
    """,
    # the write comes after the backward
    "after backward": """
        def clip_targets(targets):
            targets[targets < 0] = 0
            return targets

        def step(model, x, y):
            loss = F.mse_loss(model(x), y)
            loss.backward()
            clip_targets(y)
            return y
    """,
    # a dict handed to a helper that stores into it
    "dict": """
        def remember(store, value):
            store["last"] = value
            return store

        def step(model, x, y):
            logs = {}
            loss = F.mse_loss(model(x), y)
            remember(logs, loss.item())
            loss.backward()
            return y
    """,
}


@pytest.mark.parametrize("name", sorted(CORRECT_HELPERS))
def test_correct_helpers_are_silent_and_run(name):
    source = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + \
        textwrap.dedent(CORRECT_HELPERS[name]) + textwrap.dedent("""
        def main():
            torch.manual_seed(0)
            model = nn.Linear(3, 2)
            return step(model, torch.randn(4, 3), torch.randn(4, 2))
    """)
    assert _findings(source) == []
    assert isinstance(_load(source)["main"](), torch.Tensor)


# ----- a helper's untyped parameter filled with a graph by a call of the file (ADL001) -----

# An entropy bonus on a classifier's logits: the helper softens them with a
# temperature and clamps the softmax's output in place before taking its log.
ENTROPY_BONUS = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def entropy_bonus(logits, temperature=1.0):
        probs = torch.softmax(logits / temperature, dim=-1)
        probs.clamp_(min=1e-8)
        return -(probs * probs.log()).sum(dim=-1).mean()

    def train(model, optimizer, batches, beta=0.01):
        for x, y in batches:
            logits = model(x)
            loss = F.cross_entropy(logits, y) - beta * entropy_bonus(logits, temperature=2.0)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def main():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
        train(model, optimizer, batches)
        return [p.detach().clone() for p in model.parameters()]
""")

# A policy-gradient update: the helper mixes the policy's probabilities with a
# uniform exploration term in place, then samples from them.
EPSILON_POLICY = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def explore(policy_logits, epsilon):
        probs = F.softmax(policy_logits, dim=-1)
        probs.mul_(1 - epsilon)
        probs += epsilon / probs.shape[-1]
        dist = torch.distributions.Categorical(probs=probs)
        action = dist.sample()
        return action, dist.log_prob(action)

    def update(policy, optimizer, states, returns):
        action, log_prob = explore(policy(states), 0.1)
        loss = -(log_prob * returns).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return action

    def main():
        torch.manual_seed(0)
        policy = nn.Linear(3, 4)
        optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
        update(policy, optimizer, torch.randn(6, 3), torch.randn(6))
        return [p.detach().clone() for p in policy.parameters()]
""")


def test_entropy_bonus_is_found_at_the_clamp():
    assert _findings(ENTROPY_BONUS) == [(_line(ENTROPY_BONUS, "probs.clamp_(min=1e-8)"), "ADL001")]


def test_entropy_bonus_fails_when_run():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(ENTROPY_BONUS)["main"]()


def test_epsilon_policy_is_found_at_both_writes():
    # as the same lines written inline are: each write changes the softmax's saved output
    assert _findings(EPSILON_POLICY) == [(_line(EPSILON_POLICY, "probs.mul_(1 - epsilon)"), "ADL001"),
                                         (_line(EPSILON_POLICY, "probs += epsilon"), "ADL001")]


def test_epsilon_policy_fails_when_run():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(EPSILON_POLICY)["main"]()


def test_entropy_bonus_out_of_place_is_silent_and_trains_as_the_reference():
    changed = ENTROPY_BONUS.replace("probs.clamp_(min=1e-8)", "probs = probs.clamp(min=1e-8)")
    assert _findings(changed) == []
    # the reference: the bonus written inline, out of place, in the loop
    reference = ENTROPY_BONUS.replace(
        "beta * entropy_bonus(logits, temperature=2.0)",
        "beta * -(torch.softmax(logits / 2.0, -1).clamp(min=1e-8)"
        " * torch.softmax(logits / 2.0, -1).clamp(min=1e-8).log()).sum(dim=-1).mean()")
    assert _equal(_load(changed)["main"](), _load(reference)["main"]())


def test_epsilon_policy_out_of_place_is_silent_and_trains_as_the_reference():
    changed = EPSILON_POLICY.replace("probs.mul_(1 - epsilon)\n    probs += epsilon / probs.shape[-1]",
                                     "probs = probs * (1 - epsilon) + epsilon / probs.shape[-1]")
    assert changed != EPSILON_POLICY
    assert _findings(changed) == []
    # the reference: the mixture computed by hand from the logits, in the update itself
    reference = EPSILON_POLICY.replace(
        "action, log_prob = explore(policy(states), 0.1)",
        "probs = 0.9 * F.softmax(policy(states), dim=-1) + 0.1 / 4\n"
        "    dist = torch.distributions.Categorical(probs=probs)\n"
        "    action = dist.sample()\n"
        "    log_prob = dist.log_prob(action)")
    assert _equal(_load(changed)["main"](), _load(reference)["main"]())


CORRECT_UNTYPED = {
    # the helper is only ever given data without a graph
    "data only": """
        def entropy_bonus(logits):
            probs = torch.softmax(logits, dim=-1)
            probs.clamp_(min=1e-8)
            return -(probs * probs.log()).sum(dim=-1).mean()

        def main():
            torch.manual_seed(0)
            model = nn.Linear(4, 3)
            prior = entropy_bonus(torch.randn(5, 3))
            loss = model(torch.randn(5, 4)).pow(2).mean() + prior
            loss.backward()
            return loss
    """,
    # the graph goes to another position than the one written from
    "other position": """
        def scaled(weights, logits):
            probs = torch.softmax(weights, dim=-1)
            probs.clamp_(min=1e-8)
            return probs.sum() * logits.mean()

        def main():
            torch.manual_seed(0)
            model = nn.Linear(4, 3)
            loss = scaled(torch.randn(5, 3), model(torch.randn(5, 4)))
            loss.backward()
            return loss
    """,
    # the helper runs under no_grad
    "no_grad": """
        def pseudo_labels(logits):
            probs = torch.softmax(logits, dim=-1)
            probs[probs < 0.5] = 0.0
            return probs.argmax(dim=-1)

        def main():
            torch.manual_seed(0)
            model = nn.Linear(4, 3)
            x = torch.randn(5, 4)
            with torch.no_grad():
                labels = pseudo_labels(model(x))
            loss = F.cross_entropy(model(x), labels)
            loss.backward()
            return loss
    """,
    # the helper writes a tensor it made itself, before any op kept it
    "own buffer": """
        def smooth(targets, n_classes, eps):
            dist = torch.full((targets.shape[0], n_classes), eps / n_classes)
            dist[torch.arange(targets.shape[0]), targets] += 1 - eps
            return dist

        def main():
            torch.manual_seed(0)
            model = nn.Linear(4, 3)
            logits = model(torch.randn(5, 4))
            loss = -(smooth(torch.randint(0, 3, (5,)), 3, 0.1) * logits.log_softmax(-1)).sum(-1).mean()
            loss.backward()
            return loss
    """,
}


@pytest.mark.parametrize("name", sorted(CORRECT_UNTYPED))
def test_correct_untyped_helpers_are_silent_and_run(name):
    source = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + \
        textwrap.dedent(CORRECT_UNTYPED[name])
    assert _findings(source) == []
    assert isinstance(_load(source)["main"](), torch.Tensor)
