"""`strict` fails a program only where backward() would really fail: it decides when a
backward()/autograd.grad() call is about to reach a saved tensor that was modified in place,
before the engine runs, never at the write (issue 15, item 9).

A graph that is kept but never backpropagated (a reference recomputed with grad on, a
forward kept for logging, an eval loop without no_grad, a graph dropped before backward) is
no hazard: plain PyTorch passes, and so does strict. A program that does backpropagate
through the stale save still fails, at its backward() line, with the write's line in the
message and the write's call stack in the exception's notes."""

import traceback

import pytest

import autograd_doctor
from helpers import grads_equal, run_plain, run_program

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

NEVER_BACKPROPAGATED = {
    # pytorch-metric-learning's test_arcface_loss: after the loss's backward, the expected
    # logits are recomputed from the parameters without no_grad; clamp saves its input (a view
    # of `logits`), then `logits[i, c] = ...` moves the version of what clamp saved. Nothing
    # ever backpropagates through `logits`.
    "a reference recomputed with its graph kept": """
        import math
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)
        embeddings = torch.randn(4, 5, requires_grad=True)
        weight = torch.randn(5, 3, requires_grad=True)
        labels = torch.tensor([0, 2, 1, 2])
        loss = F.cross_entropy(F.normalize(embeddings) @ F.normalize(weight, dim=0), labels)
        loss.backward()
        grads = [embeddings.grad.clone(), weight.grad.clone()]

        logits = F.normalize(embeddings) @ F.normalize(weight, dim=0)
        for i, c in enumerate(labels):
            angle = torch.acos(torch.clamp(logits[i, c], -1, 1))
            logits[i, c] = torch.cos(angle + 0.5)  # WRITE
        expected = logits * 64
        assert torch.isfinite(expected).all()
    """,
    # A forward pass whose probabilities are kept for logging and post-processed in place;
    # training backpropagates a loss computed apart from them.
    "a forward kept for logging": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        history = []
        for step in range(3):
            x = torch.randn(8, 4)
            probabilities = torch.sigmoid(model(x))  # SAVE: sigmoid keeps its output
            probabilities.clamp_(0.05, 0.95)  # WRITE
            history.append(probabilities)
            loss = model(x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters()]
    """,
    # An evaluation loop without no_grad: softmax saves its output and small probabilities are
    # zeroed in place; the accuracy is read, nothing is backpropagated. Training goes on.
    "an eval loop without no_grad that writes in place": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            model.eval()
            kept = []
            for batch in range(2):
                probabilities = torch.softmax(model(torch.randn(8, 4)), dim=1)
                probabilities[probabilities < 0.2] = 0.0  # WRITE
                kept.append(probabilities)
                accuracy = (probabilities.argmax(dim=1) == y).float().mean().item()
            model.train()
        grads = [p.grad for p in model.parameters()]
    """,
    # A graph made stale and dropped; backward runs through a fresh graph of the same leaf.
    "a graph dropped before backward": """
        import torch

        torch.manual_seed(0)
        x = torch.randn(5, requires_grad=True)
        stale = torch.exp(x)
        stale[0] = 0.0  # WRITE
        del stale
        torch.exp(x).sum().backward()
        grads = [x.grad]
    """,
    # autograd.grad asks only for `w`: the stale exp node lies on the way to `x`, which is not
    # asked for, so the engine never runs it.
    "autograd.grad that does not reach the stale node": """
        import torch

        torch.manual_seed(0)
        x = torch.randn(5, requires_grad=True)
        w = torch.randn(5, requires_grad=True)
        b = torch.exp(x)
        b.add_(1.0)  # WRITE: ExpBackward0's saved result is stale
        grads = list(torch.autograd.grad((b * w).sum(), [w]))
    """,
    # The same with backward(inputs=...): only the nodes on the way to `w` run.
    "backward(inputs=...) that does not reach the stale node": """
        import torch

        torch.manual_seed(0)
        x = torch.randn(5, requires_grad=True)
        w = torch.randn(5, requires_grad=True)
        b = torch.exp(x)
        b.add_(1.0)  # WRITE: ExpBackward0's saved result is stale
        (b * w).sum().backward(inputs=[w])
        grads = [w.grad]
    """,
    # x-transformers: a forward whose graph is kept, then a weight rescaled under no_grad.
    "a weight rescaled after a forward kept for inspection": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        x = torch.randn(3, 4, requires_grad=True)
        inspected = model(x)  # SAVE: addmm keeps the weight for x's gradient
        with torch.no_grad():
            model.weight.mul_(0.5)  # WRITE
        loss = model(x).pow(2).sum()
        loss.backward()
        grads = [p.grad for p in model.parameters()] + [x.grad]
    """,
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(NEVER_BACKPROPAGATED))
def test_a_graph_never_backpropagated_passes_in_every_mode(tmp_path, name, mode):
    plain = run_plain(tmp_path, NEVER_BACKPROPAGATED[name], "plain.py")
    outcome = run_program(tmp_path, NEVER_BACKPROPAGATED[name], **MODES[mode])
    assert outcome.error is None, outcome.error
    assert outcome.diagnoses == [] and outcome.warnings == []
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def user_lines(outcome) -> list[int]:
    return [frame.lineno for frame in traceback.extract_tb(outcome.error.__traceback__)
            if frame.filename == outcome.path]


def test_strict_stops_at_backward_before_the_engine_runs(tmp_path):
    # `w`'s branch is newer than the stale sigmoid, so without the doctor the engine runs it
    # first and accumulates w.grad before failing; strict stops before any of that.
    source = """
        import torch
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)  # SAVE
        y[1] = 2.0  # WRITE
        loss = y.sum() + (w * 2).sum()
        try:
            loss.backward()  # BACKWARD
        finally:
            w_grad = w.grad
    """
    outcome = run_program(tmp_path, source, strict=True)
    assert isinstance(outcome.error, autograd_doctor.AutogradDoctorError)
    assert user_lines(outcome)[-1] == outcome.line("BACKWARD")
    assert outcome.namespace.get("w_grad") is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.extra["node"] == "SigmoidBackward0" and diagnosis.extra["slot"] == "result"
    message = str(outcome.error)
    assert f"{outcome.path}:{outcome.line('WRITE')}:" in message
    notes = "\n".join(outcome.error.__notes__)
    assert f'File "{outcome.path}", line {outcome.line("WRITE")}' in notes
    assert "y[1] = 2.0" in notes

    with pytest.raises(RuntimeError) as plain:
        run_plain(tmp_path, source, "plain.py")
    # PyTorch's own message, word for word, is in the notes too.
    assert "modified by an inplace operation" in str(plain.value)
    assert str(plain.value) in notes


def test_the_writes_call_stack_is_in_the_notes(tmp_path):
    outcome = run_program(tmp_path, """
        import torch


        def squash(h):
            h.clamp_(max=1.0)  # WRITE


        def forward(x):
            h = torch.exp(x)  # SAVE
            squash(h)  # CALL
            return h.sum()


        x = torch.randn(4, requires_grad=True)
        loss = forward(x)
        loss.backward()  # BACKWARD
    """, strict=True)
    assert isinstance(outcome.error, autograd_doctor.AutogradDoctorError)
    assert user_lines(outcome)[-1] == outcome.line("BACKWARD")
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")
    notes = "\n".join(outcome.error.__notes__)
    call = notes.index(f'File "{outcome.path}", line {outcome.line("CALL")}, in forward')
    write = notes.index(f'File "{outcome.path}", line {outcome.line("WRITE")}, in squash')
    assert call < write  # most recent call last, as in a traceback


def test_a_write_under_no_grad_that_backward_reaches_fails_before_the_engine(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        out = (x * w).sum()  # SAVE
        with torch.no_grad():
            w.mul_(0.5)  # WRITE
        out.backward()  # BACKWARD
    """, strict=True)
    assert isinstance(outcome.error, autograd_doctor.AutogradDoctorError)
    assert user_lines(outcome)[-1] == outcome.line("BACKWARD")
    assert outcome.diagnosis.code == "AD101"
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_autograd_grad_that_reaches_the_stale_node_fails(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(5, requires_grad=True)
        w = torch.randn(5, requires_grad=True)
        b = torch.exp(x)  # SAVE
        b.add_(1.0)  # WRITE
        torch.autograd.grad((b * w).sum(), [x])  # BACKWARD
    """, strict=True)
    assert isinstance(outcome.error, autograd_doctor.AutogradDoctorError)
    assert user_lines(outcome)[-1] == outcome.line("BACKWARD")
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_a_kept_graph_backpropagated_later_still_fails(tmp_path):
    # The arcface shape, but the reference's graph is then backpropagated after all.
    outcome = run_program(tmp_path, """
        import torch
        embeddings = torch.randn(4, 3, requires_grad=True)
        logits = embeddings @ embeddings.T
        for i in range(4):
            angle = torch.acos(torch.clamp(logits[i, i], -1, 1))  # SAVE
            logits[i, i] = torch.cos(angle + 0.5)  # WRITE
        for step in range(2):
            other = (embeddings * 2).sum()
            other.backward()
        logits.sum().backward()  # BACKWARD
    """, strict=True)
    assert isinstance(outcome.error, autograd_doctor.AutogradDoctorError)
    assert user_lines(outcome)[-1] == outcome.line("BACKWARD")
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_the_strict_error_keeps_no_tensor_alive():
    import gc
    import weakref

    import torch

    with autograd_doctor.watch(strict=True):
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        y[1] = 2.0
        with pytest.raises(autograd_doctor.AutogradDoctorError) as caught:
            y.sum().backward()
    # The leaf is held by the graph's AccumulateGrad node: it dies only with the whole graph.
    watched = weakref.ref(x)
    del x, y
    gc.collect()
    assert watched() is None
    assert caught.value.diagnosis.code == "AD101"
