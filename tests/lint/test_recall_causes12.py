"""Recall causes of r531-r545 (docs/lint.md, "Recall causes worked on (r531-r545)").

* ADL019 (r535): a network unpacked from a same-file factory (`model, optimizer =
  build()`) and handed to the function that backpropagates one loss twice, with
  `optimizer.step()` between and no forward pass again.  The factory link lives in
  ``argument_modules.py`` (a parameter every call fills with a module).
* ADL018 (r545): two training iterations written out one after the other, each
  backward followed by the same update (`w -= lr * w.grad` under `no_grad`, or an
  optimizer's `step()`), nothing clearing `.grad` in between.
* ADL023 (r541): a loss appended on every iteration to a list the caller made and
  handed in (`history = []; train_one_epoch(..., history)`).

Each cause: the plain form and a fresh shape (written before the rule was run on
them), buggy -> the finding at its line with its help, the help applied -> correct
(checked with torch against a hand-written version), correct near twins silent."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    if source.count(old) != 1:  # the snippets are written one level deeper than dedent leaves them
        old, new = _outdent(old), _outdent(new)
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _outdent(text: str) -> str:
    return "\n".join(line[4:] if line.startswith("    ") else line for line in text.split("\n"))


def _found(source: str, code: str, name: str = "prog.py"):
    return [(f.line, f.message) for f in lint_source(source, name) if f.code == code]


def _run(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<prog>", "exec"), namespace)
    return namespace


# ----- ADL019: the same loss backpropagated twice, the model from a factory ----------

TWICE = textwrap.dedent("""
    import torch


    def build():
        model = torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        return model, optimizer


    def two_updates(model, optimizer, x):
        y = model(x)
        loss = y.sum()
        loss.backward()
        optimizer.step()
        loss.backward()
        optimizer.step()
        return model


    def run(x):
        torch.manual_seed(0)
        model, optimizer = build()
        return two_updates(model, optimizer, x)
""")

# fresh shape: a same-file module class returned directly in the tuple, a tanh head
TWICE_CLASS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return torch.tanh(self.fc(x))


    def make_parts(lr):
        return Head(), lr


    def refine(net, x, target, lr):
        out = net(x)
        err = ((out - target) ** 2).mean()
        err.backward()
        with torch.no_grad():
            for p in net.parameters():
                p -= lr * p.grad
        err.backward()
        return net


    def main(x, target):
        net, lr = make_parts(0.1)
        return refine(net, x, target, lr)
""")

FORWARD_AGAIN = """
        y = model(x)
        loss = y.sum()
        loss.backward()"""


def test_adl019_same_loss_twice_found_with_help():
    found = _found(TWICE, "ADL019")
    second = [i for i, line in enumerate(TWICE.splitlines(), 1) if line.strip() == "loss.backward()"][1]
    assert [line for line, _ in found] == [second]
    assert "clear the gradients and run the forward pass again to compute `loss` before this backward" \
        in found[0][1]
    # one finding on that line: the unrolled-update check of ADL018 leaves the same loss to ADL019
    assert [f.code for f in lint_source(TWICE, "prog.py") if f.line == second] == ["ADL019"]
    # the forward pass run again but the gradients not cleared: now ADL018's unrolled updates
    half = _twin(TWICE, "        optimizer.step()\n        loss.backward()", "        optimizer.step()" + FORWARD_AGAIN)
    assert _found(half, "ADL019") == []
    assert [line for line, _ in _found(half, "ADL018")] == [second + 2]
    assert "Trying to backward through the graph a second time" in found[0][1]


@pytest.mark.xfail(strict=True, reason="argument_modules reads parameters only in a file that mentions "
                   "`.step(` or `optim` (training code); this shape updates by hand: a known limit, "
                   "docs/lint.md 'Recall causes worked on (r531-r545)'")
def test_adl019_fresh_shape_class_in_returned_tuple():
    found = _found(TWICE_CLASS, "ADL019")
    second = [i for i, line in enumerate(TWICE_CLASS.splitlines(), 1) if line.strip() == "err.backward()"][1]
    assert [line for line, _ in found] == [second]


def test_adl019_claim_and_help_with_torch():
    x = torch.randn(2, 3)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _run(TWICE)["run"](x)
    fixed = _twin(TWICE, "        optimizer.step()\n        loss.backward()",
                  "        optimizer.step()\n        optimizer.zero_grad()" + FORWARD_AGAIN)
    assert _found(fixed, "ADL019") == []
    model = _run(fixed)["run"](x)
    # hand-written: two SGD steps, each on the gradient of the current weights
    torch.manual_seed(0)
    ref = torch.nn.Linear(3, 1)
    w, b = ref.weight.detach().clone(), ref.bias.detach().clone()
    for _ in range(2):
        w = w - 0.1 * x.sum(0, keepdim=True)
        b = b - 0.1 * torch.tensor([float(x.shape[0])])
    assert torch.allclose(model.weight, w) and torch.allclose(model.bias, b)


def test_adl019_factory_twins_silent():
    # the forward pass run again before the second backward
    assert _found(_twin(TWICE, "        optimizer.step()\n        loss.backward()",
                        "        optimizer.step()" + FORWARD_AGAIN), "ADL019") == []
    # the factory returns something the linter cannot know to be a module
    unknown = _twin(TWICE, "model = torch.nn.Linear(3, 1)", "model = torch.load('model.pt')")
    assert _found(unknown, "ADL019") == []
    # two returns of different classes: unknown
    two = _twin(TWICE, "        return model, optimizer",
                "        if optimizer is None:\n            return torch.nn.Identity(), optimizer\n"
                "        return model, optimizer")
    assert _found(two, "ADL019") == []
    # the function is also used as a value somewhere (a callback): callers unknown
    callback = TWICE + "\nHOOKS = [two_updates]\n"
    assert _found(callback, "ADL019") == []
    # retain_graph on the first backward
    assert _found(_twin(TWICE, "        loss.backward()\n        optimizer.step()\n        loss.backward()",
                        "        loss.backward(retain_graph=True)\n        optimizer.step()\n        loss.backward()"),
                  "ADL019") == []


# ----- ADL018: two unrolled updates, nothing clearing .grad between ------------------

UNROLLED = textwrap.dedent("""
    import torch


    def two_iterations(model, x, lr=0.1):
        output = model(x)
        loss = torch.mean((output - 1) ** 2)
        loss.backward()
        with torch.no_grad():
            model.weight -= lr * model.weight.grad
        output = model(x)
        loss = torch.mean((output - 1) ** 2)
        loss.backward()
        with torch.no_grad():
            model.weight -= lr * model.weight.grad
        return model
""")

# fresh shape: plain tensors, `.data` updates, and an optimizer version
UNROLLED_TENSORS = textwrap.dedent("""
    import torch


    def fit_line(xs, ys):
        w = torch.zeros(1, requires_grad=True)
        err = ((xs * w - ys) ** 2).sum()
        err.backward()
        with torch.no_grad():
            w.data -= 0.01 * w.grad
        err = ((xs * w - ys) ** 2).sum()
        err.backward()
        with torch.no_grad():
            w.data -= 0.01 * w.grad
        return w
""")

UNROLLED_OPTIMIZER = textwrap.dedent("""
    import torch


    def two_steps(xs, ys):
        net = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.05)
        first = torch.nn.functional.mse_loss(net(xs), ys)
        first.backward()
        opt.step()
        second = torch.nn.functional.mse_loss(net(xs), ys)
        second.backward()
        opt.step()
        return net
""")


def _second_backward(source: str, text: str) -> int:
    return [i for i, line in enumerate(source.splitlines(), 1) if line.strip() == text][1]


def test_adl018_unrolled_found_with_help():
    found = _found(UNROLLED, "ADL018")
    assert [line for line, _ in found] == [_second_backward(UNROLLED, "loss.backward()")]
    assert "applies the sum of both iterations' gradients" in found[0][1]
    assert "clear the gradients before this backward" in found[0][1]


def test_adl018_unrolled_fresh_shapes():
    assert [line for line, _ in _found(UNROLLED_TENSORS, "ADL018")] == \
        [_second_backward(UNROLLED_TENSORS, "err.backward()")]
    assert [line for line, _ in _found(UNROLLED_OPTIMIZER, "ADL018")] == \
        [_line_of(UNROLLED_OPTIMIZER, "second.backward()")]


def test_adl018_unrolled_claim_and_help_with_torch():
    x = torch.randn(1, 10)
    torch.manual_seed(0)
    buggy_model = torch.nn.Linear(10, 1)
    torch.manual_seed(0)
    fixed_model = torch.nn.Linear(10, 1)
    torch.manual_seed(0)
    ref = torch.nn.Linear(10, 1)
    _run(UNROLLED)["two_iterations"](buggy_model, x)
    fixed = _twin(UNROLLED, "        output = model(x)\n        loss = torch.mean((output - 1) ** 2)\n        loss.backward()\n        with torch.no_grad():\n            model.weight -= lr * model.weight.grad\n        return",
                  "        model.weight.grad = None\n        output = model(x)\n        loss = torch.mean((output - 1) ** 2)\n        loss.backward()\n        with torch.no_grad():\n            model.weight -= lr * model.weight.grad\n        return")
    assert _found(fixed, "ADL018") == []
    _run(fixed)["two_iterations"](fixed_model, x)
    w, b = ref.weight.detach().clone(), ref.bias.detach()
    for _ in range(2):  # hand-written gradient descent on the weight
        residual = x @ w.t() + b - 1
        w = w - 0.1 * 2 * residual.mean() * x
    assert torch.allclose(fixed_model.weight, w, atol=1e-6)
    assert not torch.allclose(buggy_model.weight, w, atol=1e-6)


def test_adl018_unrolled_twins_silent():
    cleared = _twin(UNROLLED_TENSORS, "            w.data -= 0.01 * w.grad\n        err = ",
                    "            w.data -= 0.01 * w.grad\n            w.grad.zero_()\n        err = ")
    assert _found(cleared, "ADL018") == []
    assert _found(_twin(UNROLLED_OPTIMIZER, "        second = ", "        opt.zero_grad()\n        second = "),
                  "ADL018") == []
    # a helper of the file clears
    helper = _twin(UNROLLED, "        output = model(x)\n        loss = torch.mean((output - 1) ** 2)\n        loss.backward()\n        with torch.no_grad():\n            model.weight -= lr * model.weight.grad\n        return",
                   "        reset(model)\n        output = model(x)\n        loss = torch.mean((output - 1) ** 2)\n        loss.backward()\n        with torch.no_grad():\n            model.weight -= lr * model.weight.grad\n        return")
    helper += "\n\ndef reset(model):\n    model.weight.grad = None\n"
    assert _found(helper, "ADL018") == []
    # gradient accumulation: two backwards, then one update
    accumulate = _twin(UNROLLED_TENSORS, "        with torch.no_grad():\n            w.data -= 0.01 * w.grad\n        err = ", "        err = ")
    assert _found(accumulate, "ADL018") == []
    # the second update is of another tensor (a GAN's two players, one step each)
    other = _twin(
        UNROLLED_TENSORS, "        with torch.no_grad():\n            w.data -= 0.01 * w.grad\n        return",
        "        with torch.no_grad():\n            v.data -= 0.01 * v.grad\n        return")
    assert _found(other, "ADL018") == []
    # the second backward only under a branch
    branch = _twin(UNROLLED_TENSORS, "        err.backward()\n        with torch.no_grad():\n            w.data -= 0.01 * w.grad\n        return",
                   "        if xs.numel() > 1:\n            err.backward()\n        with torch.no_grad():\n            w.data -= 0.01 * w.grad\n        return")
    assert _found(branch, "ADL018") == []


# ----- ADL023: a list the caller made, appended the loss on every iteration ----------

HISTORY = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def train_one_epoch(model, loader, optimizer, loss_fn, history):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            history.append(loss)
        return history


    def fit(loader, epochs=2):
        model = nn.Linear(4, 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        history = []
        for _ in range(epochs):
            train_one_epoch(model, loader, optimizer, nn.CrossEntropyLoss(), history)
        return model, history
""")

# fresh shape: a keyword argument given a list display, a while loop, a method-free script
LOG_KEYWORD = textwrap.dedent("""
    import torch


    def descend(params, closure, steps, log):
        opt = torch.optim.Adam(params, lr=0.01)
        k = 0
        while k < steps:
            opt.zero_grad()
            value = closure()
            value.backward()
            opt.step()
            log.append(value)
            k += 1


    def main():
        w = torch.randn(3, requires_grad=True)
        descend([w], lambda: (w ** 2).sum(), 5, log=[])
""")


def test_adl023_caller_list_found_with_help():
    found = _found(HISTORY, "ADL023")
    assert [line for line, _ in found] == [_line_of(HISTORY, "history.append(loss)")]
    assert "append `loss.item()` (or `loss.detach()`)" in found[0][1]


def test_adl023_caller_list_fresh_shape():
    assert [line for line, _ in _found(LOG_KEYWORD, "ADL023")] == [_line_of(LOG_KEYWORD, "log.append(value)")]


def test_adl023_caller_list_claim_and_help_with_torch():
    torch.manual_seed(0)
    loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
    torch.manual_seed(1)
    model, history = _run(HISTORY)["fit"](loader)
    assert all(h.grad_fn is not None for h in history)
    fixed = _twin(HISTORY, "history.append(loss)", "history.append(loss.item())")
    assert _found(fixed, "ADL023") == []
    torch.manual_seed(1)
    model2, history2 = _run(fixed)["fit"](loader)
    assert [h.item() for h in history] == history2
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), model2.parameters()))


def test_adl023_caller_list_twins_silent():
    assert _found(_twin(HISTORY, "history.append(loss)", "history.append(loss.detach())"), "ADL023") == []
    # the caller hands an object the linter does not know to be a list
    assert _found(_twin(HISTORY, "history = []", "history = Recorder()"), "ADL023") == []
    # a call that leaves the parameter unknown (`*args`)
    assert _found(_twin(HISTORY, "train_one_epoch(model, loader, optimizer, nn.CrossEntropyLoss(), history)",
                        "train_one_epoch(*[model, loader, optimizer, nn.CrossEntropyLoss(), history])"),
                  "ADL023") == []
    # the function is also handed around as a value
    assert _found(HISTORY + "\nSTEPS = {'epoch': train_one_epoch}\n", "ADL023") == []
    # the list is bound again in the loop (a window)
    assert _found(_twin(HISTORY, "            history.append(loss)",
                        "            history.append(loss)\n            history = []"), "ADL023") == []


def test_adl018_unrolled_new_model_between_silent():
    rebuilt = _twin(UNROLLED_OPTIMIZER, "        second = ",
                    "        net = torch.nn.Linear(2, 1)\n        opt = torch.optim.SGD(net.parameters(), lr=0.05)\n"
                    "        second = ")
    assert _found(rebuilt, "ADL018") == []
