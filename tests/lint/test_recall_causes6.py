"""Recall on the causes the r270-r391 re-creations left open (lint-recall-causes6).

A loss that the training loop backpropagates, handed to a method of an object
that adds it into one of its attributes (`self.sum += val * n` in an
`AverageMeter.update`, `self.sum += allreduce_average(val)` in Horovod's
`Metric.update`, r359): the object is built before the loop and lives across its
iterations, so its attribute chains the graph of every iteration (memory grows
with the iteration count).  ADL023 reports the sum of a loss into a name of the
loop's function; the method call is the same sum made one call down.

Each buggy case below was written before the change, in another shape than its
re-creation; it shows its bug when run (the kept attribute still has a graph
after the loop), the change the finding asks for (`loss.detach()` handed to the
method, the unsafe fix) stays silent and gives a hand-written reference's
values and parameters, and similar correct patterns stay silent and run."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection, lint_file
from autograd_doctor.lint.fixes import fix_source
from autograd_doctor.lint.rules import OPT_IN_CODES

EVERY_RULE = Selection(("ADL",) + tuple(sorted(OPT_IN_CODES)))


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ----- a loss handed to a method that sums it into the object's attribute (ADL023) -----

# The ImageNet example's `AverageMeter`, given the loss tensor instead of `loss.item()`:
# `update` keeps the last value and adds `val * n` into `self.sum`.
AVERAGE_METER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class AverageMeter:
        def __init__(self, name):
            self.name = name
            self.reset()

        def reset(self):
            self.val = 0
            self.avg = 0
            self.sum = 0
            self.count = 0

        def update(self, val, n=1):
            self.val = val
            self.sum += val * n
            self.count += n
            self.avg = self.sum / self.count

    def train_epoch(model, loader, optimizer):
        losses = AverageMeter("Loss")
        model.train()
        for images, target in loader:
            output = model(images)
            loss = F.cross_entropy(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.update(loss, images.size(0))
        return losses

    def main():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
        return model, train_epoch(model, loader, optimizer)
""")

# A VAE trained in a `while` loop; a tracker object, built before the loop, keeps a
# running total with `self.total = self.total + value`.
VAE_LOSS_TRACKER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class LossTracker:
        def __init__(self):
            self.total = torch.zeros(())
            self.steps = 0

        def add(self, value):
            self.total = self.total + value
            self.steps += 1

        def mean(self):
            return self.total / max(self.steps, 1)

    class VAE(nn.Module):
        def __init__(self, dim=6, latent=2):
            super().__init__()
            self.enc = nn.Linear(dim, 2 * latent)
            self.dec = nn.Linear(latent, dim)

        def forward(self, x):
            mu, logvar = self.enc(x).chunk(2, dim=-1)
            z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
            return self.dec(z), mu, logvar

    def fit(vae, data, steps=3):
        optimizer = torch.optim.Adam(vae.parameters(), lr=1e-2)
        tracker = LossTracker()
        step = 0
        while step < steps:
            recon, mu, logvar = vae(data)
            kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1).mean()
            loss = F.mse_loss(recon, data) + kl
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            tracker.add(loss)
            step += 1
        return tracker

    def main():
        torch.manual_seed(0)
        vae = VAE()
        return vae, fit(vae, torch.randn(4, 6))
""")


# A GRU language model's training log: `record` appends the step and the loss to lists
# kept on the log object, built before the epoch loop.
TRAINING_LOG_RECORD = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class TrainingLog:
        def __init__(self):
            self.steps = []
            self.losses = []

        def record(self, step, loss):
            self.steps.append(step)
            self.losses.append(loss)

    class LanguageModel(nn.Module):
        def __init__(self, vocab=7, hidden=6):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.rnn = nn.GRU(hidden, hidden, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, tokens):
            states, _ = self.rnn(self.embed(tokens))
            return self.head(states)

    def train(model, batches, epochs=2):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        log = TrainingLog()
        step = 0
        for _ in range(epochs):
            for tokens in batches:
                logits = model(tokens[:, :-1])
                loss = F.cross_entropy(logits.reshape(-1, 7), tokens[:, 1:].reshape(-1))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                log.record(step, loss)
                step += 1
        return log

    def main():
        torch.manual_seed(0)
        model = LanguageModel()
        batches = [torch.randint(0, 7, (3, 5)) for _ in range(2)]
        return model, train(model, batches)
""")


def test_training_log_record_is_found_at_the_call():
    assert _findings(TRAINING_LOG_RECORD) == [(_line(TRAINING_LOG_RECORD, "log.record(step, loss)"), "ADL023")]


def test_training_log_record_keeps_the_graphs_when_run():
    _, log = _load(TRAINING_LOG_RECORD)["main"]()
    assert all(loss.grad_fn is not None for loss in log.losses)


def test_average_meter_update_is_found_at_the_call():
    assert _findings(AVERAGE_METER) == [(_line(AVERAGE_METER, "losses.update(loss"), "ADL023")]


def test_average_meter_update_keeps_the_graph_when_run():
    _, meter = _load(AVERAGE_METER)["main"]()
    assert meter.sum.grad_fn is not None


def test_loss_tracker_add_is_found_at_the_call():
    assert _findings(VAE_LOSS_TRACKER) == [(_line(VAE_LOSS_TRACKER, "tracker.add(loss)"), "ADL023")]


def test_loss_tracker_add_keeps_the_graph_when_run():
    _, tracker = _load(VAE_LOSS_TRACKER)["main"]()
    assert tracker.total.grad_fn is not None


def _fixed(source: str) -> str:
    text, count = fix_source(source, lambda t: lint_source(t, "case.py", EVERY_RULE), unsafe=True)
    assert count == 1
    return text


def test_average_meter_fix_is_silent_and_gives_the_reference():
    text = _fixed(AVERAGE_METER)
    assert "losses.update(loss.detach(), images.size(0))" in text
    assert _findings(text) == []
    model, meter = _load(text)["main"]()
    assert meter.sum.grad_fn is None
    # the reference: the same training, the meter fed numbers
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    loader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
    total = 0.0
    for images, target in loader:
        loss = torch.nn.functional.cross_entropy(reference(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * images.size(0)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), reference.parameters()))
    assert meter.count == 15 and abs(float(meter.sum) - total) < 1e-5


def test_loss_tracker_fix_is_silent_and_gives_the_reference():
    text = _fixed(VAE_LOSS_TRACKER)
    assert "tracker.add(loss.detach())" in text
    assert _findings(text) == []
    namespace = _load(text)
    vae, tracker = namespace["main"]()
    assert tracker.total.grad_fn is None
    torch.manual_seed(0)
    reference = namespace["VAE"]()
    data = torch.randn(4, 6)
    optimizer = torch.optim.Adam(reference.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        recon, mu, logvar = reference(data)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1).mean()
        loss = torch.nn.functional.mse_loss(recon, data) + kl
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    assert all(torch.equal(a, b) for a, b in zip(vae.parameters(), reference.parameters()))
    assert torch.equal(tracker.total, torch.zeros(()) + losses[0] + losses[1] + losses[2])


CORRECT_ACCUMULATIONS = {
    # the meter fed a number
    "meter_fed_item": AVERAGE_METER.replace("losses.update(loss, images.size(0))",
                                            "losses.update(loss.item(), images.size(0))"),
    # the method converts what it is given
    "method_converts": AVERAGE_METER.replace("self.sum += val * n", "self.sum += float(val) * n"),
    # a tracker made anew in each iteration keeps one graph at a time
    "tracker_per_iteration": VAE_LOSS_TRACKER.replace(
        "    tracker = LossTracker()\n    step = 0\n    while step < steps:\n",
        "    step = 0\n    while step < steps:\n        tracker = LossTracker()\n"),
    # a method that keeps only the last value sums nothing
    "keeps_last_only": AVERAGE_METER.replace("self.sum += val * n", "self.sum = val.item() * n"),
    # the log given a number
    "log_given_item": TRAINING_LOG_RECORD.replace("log.record(step, loss)", "log.record(step, loss.item())"),
    # the log appends a detached copy
    "log_detaches": TRAINING_LOG_RECORD.replace("self.losses.append(loss)", "self.losses.append(loss.detach())"),
    # the loss handed on before its backward, under no_grad (a logging step)
    "under_no_grad": VAE_LOSS_TRACKER.replace(
        "        tracker.add(loss)\n",
        "        with torch.no_grad():\n            tracker.add(loss * 1)\n"),
}


@pytest.mark.parametrize("name", sorted(CORRECT_ACCUMULATIONS))
def test_correct_accumulations_are_silent_and_run(name):
    source = CORRECT_ACCUMULATIONS[name]
    assert source not in (AVERAGE_METER, VAE_LOSS_TRACKER, TRAINING_LOG_RECORD)
    assert _findings(source) == []
    _load(source)["main"]()


# The meter defined in another file of the project (`utils.AverageMeter()`, as
# khanrc/pt.seq2seq's `train.py` builds it): read where it is defined.
PROJECT_UTILS = textwrap.dedent("""
    class AverageMeter:
        def __init__(self):
            self.sum = 0
            self.count = 0

        def update(self, val, n=1):
            self.sum += val * n
            self.count += n
""")

PROJECT_TRAIN = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    import utils

    def train(model, optimizer, loader):
        losses = utils.AverageMeter()
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.update(loss, x.size(0))
        return losses
""")


def _project_findings(tmp_path, train_source: str) -> list[tuple[int, str]]:
    (tmp_path / "utils.py").write_text(PROJECT_UTILS)
    (tmp_path / "train.py").write_text(train_source)
    return sorted((f.line, f.code) for f in lint_file(str(tmp_path / "train.py"))[0])


def test_meter_of_another_project_file_is_found_at_the_call(tmp_path):
    assert _project_findings(tmp_path, PROJECT_TRAIN) == [(_line(PROJECT_TRAIN, "losses.update(loss"), "ADL023")]


def test_meter_of_another_project_file_given_a_number_is_silent(tmp_path):
    source = PROJECT_TRAIN.replace("losses.update(loss, x.size(0))", "losses.update(loss.item(), x.size(0))")
    assert _project_findings(tmp_path, source) == []


def test_meter_of_another_project_file_keeps_the_graph_when_run(tmp_path, monkeypatch):
    (tmp_path / "utils.py").write_text(PROJECT_UTILS)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace = _load(PROJECT_TRAIN)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    assert namespace["train"](model, optimizer, loader).sum.grad_fn is not None
