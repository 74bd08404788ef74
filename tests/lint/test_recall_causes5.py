"""Recall on the causes the r270-r371 re-creations left open (lint-recall-causes5).

A same-file helper that writes its untyped parameter in place (`target[target ==
ignore] = 0`, `t.masked_fill_(...)`, `h -= ...`) writes whatever tensor its
caller passes; after an op of the caller kept that tensor for backward
(`F.cross_entropy(logits, y)` keeps `y`), the call is ADL001 (r368).  Under it:
a name passed to a loss function (`F.cross_entropy`, `F.nll_loss`,
`F.mse_loss`, ...) as its input or target is a tensor (the function takes
nothing else), so `x, y = batch` makes `y` one once the loss has read it.

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
