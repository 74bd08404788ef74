"""Recall on the causes of misses in the r422-r441 re-creations: each case the
linter now reports really shows its bug when run, its corrected twin (the
change the finding asks for, applied) stays silent and computes what a
hand-written reference computes, and a similar correct pattern stays silent
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


# ADL018: a method run once per micro-batch clears the optimizer on every call and
# steps it under a remainder test of one of its parameters, to which a loop of the
# file passes its own counter (`for step, batch in enumerate(loader):
# self._train_step(batch, step)`; r426, starVLA's trainer).
METHOD_WINDOW = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Trainer:
        def __init__(self, model, accumulation=4, lr=0.1):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
            self.accumulation = accumulation

        def _train_step(self, batch, step):
            self.optimizer.zero_grad()
            loss = nn.functional.mse_loss(self.model(batch[0]), batch[1])
            (loss / self.accumulation).backward()
            if (step + 1) % self.accumulation == 0:
                self.optimizer.step()

        def train(self, loader):
            for step, batch in enumerate(loader):
                self._train_step(batch, step)
""")

METHOD_WINDOW_FIXED = METHOD_WINDOW.replace(
    "        self.optimizer.zero_grad()\n        loss =", "        loss =").replace(
    "            self.optimizer.step()\n",
    "            self.optimizer.step()\n            self.optimizer.zero_grad()\n")

# the same method run with a loop's counter by a function of the module
FUNCTION_WINDOW = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def micro_step(model, optimizer, batch, i, k=4):
        optimizer.zero_grad()
        (nn.functional.mse_loss(model(batch[0]), batch[1]) / k).backward()
        if (i + 1) % k == 0:
            optimizer.step()

    def fit(model, optimizer, loader):
        for i in range(len(loader)):
            micro_step(model, optimizer, loader[i], i)
""")


def _batches():
    torch.manual_seed(0)
    return [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(4)]


def _reference_weight(model, batches, lr=0.1):
    reference = torch.nn.Linear(3, 2)
    reference.load_state_dict(model.state_dict())
    (sum(torch.nn.functional.mse_loss(reference(x), y) for x, y in batches) / len(batches)).backward()
    return reference.weight.detach() - lr * reference.weight.grad


def test_method_clearing_each_micro_batch_of_a_counted_window_is_reported():
    assert _findings(METHOD_WINDOW) == [(_line(METHOD_WINDOW, "self.optimizer.zero_grad()"), "ADL018")]
    finding = lint_source(METHOD_WINDOW, "case.py")[0]
    assert "every call of this method" in finding.message and "(step + 1) % self.accumulation == 0" in finding.message


def test_method_clearing_each_micro_batch_shows_its_bug():
    batches = _batches()
    model = torch.nn.Linear(3, 2)
    wanted = _reference_weight(model, batches)
    _load(METHOD_WINDOW)["Trainer"](model).train(batches)
    assert not torch.allclose(model.weight, wanted)


def test_clear_after_the_step_is_silent_and_accumulates():
    assert _findings(METHOD_WINDOW_FIXED) == []
    batches = _batches()
    model = torch.nn.Linear(3, 2)
    wanted = _reference_weight(model, batches)
    _load(METHOD_WINDOW_FIXED)["Trainer"](model).train(batches)
    assert torch.allclose(model.weight, wanted, atol=1e-6)


def test_function_run_with_a_range_counter_is_reported():
    assert _findings(FUNCTION_WINDOW) == [(_line(FUNCTION_WINDOW, "optimizer.zero_grad()"), "ADL018")]


def test_window_on_a_parameter_no_loop_counts_is_silent():
    # the step's parameter is not a loop's counter (a caller decides when to step):
    # nothing shows the clear runs between the backward passes of one window
    source = METHOD_WINDOW.replace("self._train_step(batch, step)", "self._train_step(batch, 3)")
    assert _findings(source) == []


def test_method_stepping_every_call_is_silent_and_right():
    source = METHOD_WINDOW.replace("        if (step + 1) % self.accumulation == 0:\n"
                                   "            self.optimizer.step()\n",
                                   "        self.optimizer.step()\n").replace(
        "(loss / self.accumulation).backward()", "loss.backward()")
    assert _findings(source) == []
    batches = _batches()
    model = torch.nn.Linear(3, 2)
    _load(source)["Trainer"](model).train(batches)
    assert torch.isfinite(model.weight).all()


# ADL023: an entry of a result dictionary, under a string key or a key the object
# holds (`output[self.train_metric]`), backpropagated and kept in a list (or summed)
# across the loop, as a name is (r437, neuromancer's trainer).
DICT_ENTRY_KEPT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Problem(nn.Module):
        def __init__(self):
            super().__init__()
            self.policy = nn.Linear(2, 2)

        def forward(self, batch):
            return {"train_loss": (self.policy(batch["x"]) - batch["ref"]).pow(2).mean()}

    class Trainer:
        def __init__(self, model, data):
            self.model = model
            self.data = data
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            self.train_metric = "train_loss"

        def train(self):
            losses = []
            for batch in self.data:
                output = self.model(batch)
                self.optimizer.zero_grad()
                output[self.train_metric].backward()
                self.optimizer.step()
                losses.append(output[self.train_metric])
            return torch.mean(torch.stack(losses))
""")

DICT_ENTRY_SUMMED = textwrap.dedent("""
    import torch

    def fit(model, data, optimizer):
        totals = {"loss": 0.0}
        for batch in data:
            output = model(batch)
            optimizer.zero_grad()
            output["loss"].backward()
            optimizer.step()
            totals["loss"] += output["loss"]
        return totals
""")


def _data():
    torch.manual_seed(0)
    return [{"x": torch.randn(4, 2), "ref": torch.randn(4, 2)} for _ in range(3)]


def test_dict_entry_kept_in_a_list_is_reported():
    assert _findings(DICT_ENTRY_KEPT) == [(_line(DICT_ENTRY_KEPT, "losses.append("), "ADL023")]


def test_dict_entry_kept_in_a_list_shows_its_bug():
    ns = _load(DICT_ENTRY_KEPT)
    mean = ns["Trainer"](ns["Problem"](), _data()).train()
    assert mean.grad_fn is not None


def test_dict_entry_summed_is_reported():
    assert _findings(DICT_ENTRY_SUMMED) == [(_line(DICT_ENTRY_SUMMED, 'totals["loss"] +='), "ADL023")]


def test_the_fix_applied_is_silent_and_gives_the_same_numbers():
    fixed = DICT_ENTRY_KEPT.replace("losses.append(output[self.train_metric])",
                                    "losses.append(output[self.train_metric].detach())")
    assert _findings(fixed) == []
    buggy, right = _load(DICT_ENTRY_KEPT), _load(fixed)
    torch.manual_seed(1)
    model_a = buggy["Problem"]()
    model_b = right["Problem"]()
    model_b.load_state_dict(model_a.state_dict())
    mean_a = buggy["Trainer"](model_a, _data()).train()
    mean_b = right["Trainer"](model_b, _data()).train()
    assert mean_b.grad_fn is None and torch.equal(mean_a.detach(), mean_b)
    assert all(torch.equal(a, b) for a, b in zip(model_a.parameters(), model_b.parameters()))


def test_dict_entry_under_a_variable_key_or_restarted_is_silent():
    # a key of the loop (`output[k]`) may name anything; a list made anew in each
    # iteration keeps one graph at a time
    varying = DICT_ENTRY_KEPT.replace("losses.append(output[self.train_metric])",
                                      "losses.append(output[list(output)[0]])")
    assert _findings(varying) == []
    restarted = DICT_ENTRY_KEPT.replace("        losses = []\n", "").replace(
        "            output = self.model(batch)\n",
        "            output = self.model(batch)\n            losses = []\n")
    assert _findings(restarted) == []
    ns = _load(restarted)
    assert ns["Trainer"](ns["Problem"](), _data()).train().grad_fn is not None  # runs


# ADL020: the caller's tensor copied and made to require grad in the function
# (`batch = batch.clone().requires_grad_(True)`, or `t.detach().requires_grad_()`)
# is a leaf; a slice of it is not, so its `.grad` stays None (r432, a saliency
# helper after pytorch#4649).
SLICE_OF_COPY = textwrap.dedent("""
    import torch

    class SaliencyMap:
        def __init__(self, network):
            self.network = network

        def compute(self, batch, rows):
            batch = batch.clone().requires_grad_(True)
            sub_batch = batch[rows[0]:rows[1]]
            self.network(sub_batch).sum().backward()
            grad = sub_batch.grad
            return torch.abs(grad) / torch.abs(grad).max()
""")


def _network():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


def test_slice_of_a_copy_made_to_require_grad_is_reported():
    assert _findings(SLICE_OF_COPY) == [(_line(SLICE_OF_COPY, "grad = sub_batch.grad"), "ADL020")]
    detached = SLICE_OF_COPY.replace("batch.clone().requires_grad_(True)", "batch.detach().requires_grad_()")
    assert _findings(detached) == [(_line(detached, "grad = sub_batch.grad"), "ADL020")]


def test_slice_of_a_copy_shows_its_bug():
    import pytest
    with pytest.raises(TypeError):
        _load(SLICE_OF_COPY)["SaliencyMap"](_network()).compute(torch.randn(4, 4), (1, 3))


def test_the_suggested_leaf_applied_is_silent_and_gives_the_gradient():
    finding = lint_source(SLICE_OF_COPY, "case.py")[0]
    assert "sub_batch = batch[rows[0]:rows[1]].detach().clone().requires_grad_()" in finding.message
    fixed = SLICE_OF_COPY.replace("sub_batch = batch[rows[0]:rows[1]]",
                                  "sub_batch = batch[rows[0]:rows[1]].detach().clone().requires_grad_()")
    assert _findings(fixed) == []
    network = _network()
    x = torch.randn(4, 4)
    got = _load(fixed)["SaliencyMap"](network).compute(x, (1, 3))
    rows = x[1:3].clone().requires_grad_()
    network(rows).sum().backward()
    assert torch.equal(got, rows.grad.abs() / rows.grad.abs().max())


def test_grad_of_the_copy_itself_is_silent_and_right():
    source = SLICE_OF_COPY.replace("grad = sub_batch.grad", "grad = batch.grad[rows[0]:rows[1]]")
    assert _findings(source) == []
    got = _load(source)["SaliencyMap"](_network()).compute(torch.randn(4, 4), (1, 3))
    assert got.shape == (2, 4)


# ADL023: a closure that appends the loss it returns to a list of the enclosing
# function, called in a loop that backpropagates its result (r424, a line search's
# closure in neural-network-lyapunov): the list keeps every call's graph.
RECORDING_CLOSURE = textwrap.dedent("""
    import torch

    def descend(model, x, y, iterations=3, lr=0.1):
        params = list(model.parameters())
        losses = []

        def closure():
            loss = (model(x) - y).pow(2).mean()
            losses.append(loss)
            return loss

        for _ in range(iterations):
            for p in params:
                p.grad = None
            loss = closure()
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        return losses
""")


def _regression():
    torch.manual_seed(0)
    return torch.nn.Linear(3, 1), torch.randn(8, 3), torch.randn(8, 1)


def test_closure_recording_the_loss_it_returns_is_reported():
    assert _findings(RECORDING_CLOSURE) == [(_line(RECORDING_CLOSURE, "losses.append(loss)"), "ADL023")]
    losses = _load(RECORDING_CLOSURE)["descend"](*_regression())
    assert all(loss.grad_fn is not None for loss in losses)  # the bug: every graph kept


def test_the_closure_fix_applied_is_silent_and_descends_the_same():
    fixed = RECORDING_CLOSURE.replace("losses.append(loss)", "losses.append(loss.detach())")
    assert _findings(fixed) == []
    model_a, x, y = _regression()
    model_b, _, _ = _regression()
    got_a = _load(RECORDING_CLOSURE)["descend"](model_a, x, y)
    got_b = _load(fixed)["descend"](model_b, x, y)
    assert all(b.grad_fn is None and torch.equal(a.detach(), b) for a, b in zip(got_a, got_b))
    assert torch.equal(model_a.weight, model_b.weight)


def test_closure_recording_a_number_or_a_fresh_list_is_silent():
    as_number = RECORDING_CLOSURE.replace("losses.append(loss)", "losses.append(loss.item())")
    assert _findings(as_number) == []
    assert all(isinstance(v, float) for v in _load(as_number)["descend"](*_regression()))
    fresh = RECORDING_CLOSURE.replace("        loss = closure()\n",
                                      "        losses = []\n        loss = closure()\n")
    assert fresh != RECORDING_CLOSURE
    assert _findings(fresh) == []


# ADL018: a method that clears the optimizer and backpropagates, called on every
# iteration of a loop that steps nothing, with the step after the loop (r428,
# torchtitan's RL trainer: `forward_backward` per micro-batch, then `optim_step`).
CLEARED_PER_CALL = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class RLTrainer:
        def __init__(self, model, lr=0.1):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

        def forward_backward(self, batch, n):
            self.optimizer.zero_grad()
            loss = nn.functional.mse_loss(self.model(batch[0]), batch[1]) / n
            loss.backward()

        def optim_step(self):
            self.optimizer.step()

    def controller(trainer, microbatches):
        for mb in microbatches:
            trainer.forward_backward(mb, len(microbatches))
        trainer.optim_step()
""")

CLEARED_ONCE = CLEARED_PER_CALL.replace(
    "        self.optimizer.zero_grad()\n        loss =", "        loss =").replace(
    "    for mb in microbatches:\n", "    trainer.optimizer.zero_grad()\n    for mb in microbatches:\n")


def test_clear_in_each_call_before_a_step_after_the_loop_is_reported():
    assert _findings(CLEARED_PER_CALL) == [(_line(CLEARED_PER_CALL, "self.optimizer.zero_grad()"), "ADL018")]
    batches = _batches()
    model = torch.nn.Linear(3, 2)
    wanted = _reference_weight(model, batches)
    ns = _load(CLEARED_PER_CALL)
    ns["controller"](ns["RLTrainer"](model), batches)
    assert not torch.allclose(model.weight, wanted)  # the bug: the last micro-batch only


def test_clear_once_before_the_loop_is_silent_and_accumulates():
    assert CLEARED_ONCE != CLEARED_PER_CALL
    assert _findings(CLEARED_ONCE) == []
    batches = _batches()
    model = torch.nn.Linear(3, 2)
    wanted = _reference_weight(model, batches)
    ns = _load(CLEARED_ONCE)
    ns["controller"](ns["RLTrainer"](model), batches)
    assert torch.allclose(model.weight, wanted, atol=1e-6)


def test_calls_that_read_their_own_gradients_or_step_in_the_loop_are_silent():
    reads = CLEARED_PER_CALL.replace(
        "        loss.backward()\n",
        "        loss.backward()\n        return [p.grad.norm() for p in self.model.parameters()]\n")
    assert _findings(reads) == []
    stepped = CLEARED_PER_CALL.replace(
        "        trainer.forward_backward(mb, len(microbatches))\n",
        "        trainer.forward_backward(mb, len(microbatches))\n        trainer.optim_step()\n")
    assert stepped != CLEARED_PER_CALL and _findings(stepped) == []
    ns = _load(stepped)
    ns["controller"](ns["RLTrainer"](torch.nn.Linear(3, 2)), _batches())
