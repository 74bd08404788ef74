"""ADL028: a value with a graph returned by a function of a training step (it
backpropagates, or its caller backpropagates a part of the same result) and
kept by the caller across the iterations of its loop (appended to a list, or
stored in a dict, that lives across the loop): every iteration's graph stays
alive.  Each buggy program really keeps graphs when run; its corrected twin
(the change the finding asks for, applied) is silent, keeps no graph and
computes what a hand-written reference computes; correct programs of the same
shapes are silent and run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import torch

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _messages(source: str) -> list[str]:
    return [f.message for f in lint_source(source, "case.py")]


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# A trainer's `train_step` returns `{"loss": loss}` after the backward; `fit()`
# keeps the dicts in a history list: every step's graph stays alive.
TRAINER_HISTORY = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Trainer:
        def __init__(self, model, lr=0.1):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

        def train_step(self, x, y):
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            return {"loss": loss, "batch": x.shape[0]}

        def fit(self, batches):
            history = []
            for x, y in batches:
                metrics = self.train_step(x, y)
                history.append(metrics)
            return history

    def main():
        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
        return model, Trainer(model).fit(batches)
""")
TRAINER_HISTORY_FIXED = TRAINER_HISTORY.replace('{"loss": loss,', '{"loss": loss.item(),')

# A helper returns `(logits, loss.item())` after the backward; the caller keeps the
# logits of every batch for the epoch's accuracy.
HELPER_LOGITS = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def train_batch(model, optimizer, x, y):
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        return logits, loss.item()

    def epoch(model, optimizer, batches):
        all_logits, losses = [], []
        for x, y in batches:
            logits, loss_value = train_batch(model, optimizer, x, y)
            all_logits.append(logits)
            losses.append(loss_value)
        accuracy = (torch.cat(all_logits).argmax(1) == torch.cat([y for _, y in batches])).float().mean()
        return all_logits, losses, accuracy.item()

    def main():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
        return model, epoch(model, optimizer, batches)
""")
HELPER_LOGITS_FIXED = HELPER_LOGITS.replace("all_logits.append(logits)", "all_logits.append(logits.detach())")

# A method returns the module's output after the backward; the loop keeps each step's
# output on `self` (a list attribute) for a later visualisation.
METHOD_OUTPUT_ON_SELF = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class AutoencoderRunner:
        def __init__(self):
            self.net = nn.Sequential(nn.Linear(6, 2), nn.Tanh(), nn.Linear(2, 6))
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-2)
            self.reconstructions = []

        def step(self, x):
            self.optimizer.zero_grad()
            reconstruction = self.net(x)
            loss = (reconstruction - x).pow(2).mean()
            loss.backward()
            self.optimizer.step()
            return reconstruction

        def run(self, batches):
            for x in batches:
                reconstruction = self.step(x)
                self.reconstructions.append(reconstruction)
            return self.reconstructions

    def main():
        torch.manual_seed(0)
        runner = AutoencoderRunner()
        batches = [torch.randn(3, 6) for _ in range(3)]
        return runner.net, runner.run(batches)
""")
METHOD_OUTPUT_ON_SELF_FIXED = METHOD_OUTPUT_ON_SELF.replace(
    "self.reconstructions.append(reconstruction)", "self.reconstructions.append(reconstruction.detach())")

# Correct: the callee returns the loss `.item()`ed and the predictions detached.
CORRECT_CALLEE_CUTS = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def train_step(self, x, y):
            self.optimizer.zero_grad()
            prediction = self.model(x)
            loss = F.mse_loss(prediction, y)
            loss.backward()
            self.optimizer.step()
            return {"loss": loss.item(), "prediction": prediction.detach()}

        def fit(self, batches):
            history = []
            for x, y in batches:
                history.append(self.train_step(x, y))
            return history

    def main():
        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        return Trainer(model).fit([(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)])
""")

# Correct: the caller detaches what it keeps (the loss re-bound detached, the output cut).
CORRECT_CALLER_CUTS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(3, 2)

        def training_step(self, batch):
            x, y = batch
            out = self.body(x)
            loss = (out - y).pow(2).mean()
            return {"loss": loss, "out": out}

    def fit(model, batches):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        outputs = []
        for batch in batches:
            result = model.training_step(batch)
            optimizer.zero_grad()
            result["loss"].backward()
            optimizer.step()
            result = {key: value.detach() for key, value in result.items()}
            outputs.append(result)
        return outputs

    def main():
        torch.manual_seed(0)
        return fit(Model(), [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)])
""")

# Correct: the returned value is kept only within the iteration (a list made in the loop).
CORRECT_KEPT_WITHIN_ITERATION = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def train_step(model, optimizer, x):
        optimizer.zero_grad()
        out = model(x)
        loss = out.pow(2).mean()
        loss.backward()
        optimizer.step()
        return out, loss

    def train(model, batches):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        norms = []
        for x in batches:
            step_outputs = []
            out, loss = train_step(model, optimizer, x)
            step_outputs.append(out)
            norms.append(torch.stack(step_outputs).norm().item())
        return norms

    def main():
        torch.manual_seed(0)
        return train(nn.Linear(3, 2), [torch.randn(4, 3) for _ in range(2)])
""")


# Correct: the log-probabilities are kept on purpose for the backward after the
# episode (REINFORCE); the loop that keeps them runs no backward, the function does not.
CORRECT_KEPT_FOR_LATER_BACKWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(4, 2)

        def act(self, state):
            dist = torch.distributions.Categorical(logits=self.net(state))
            action = dist.sample()
            return action.item(), dist.log_prob(action)

    def train(policy, episodes=2, steps=4):
        optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
        history = []
        for _ in range(episodes):
            log_probs, rewards = [], []
            for _ in range(steps):
                action, log_prob = policy.act(torch.randn(4))
                log_probs.append(log_prob)
                rewards.append(float(action))
            loss = -(torch.stack(log_probs) * torch.tensor(rewards)).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append(loss.item())
        return history

    def main():
        torch.manual_seed(0)
        return train(Policy())
""")

# Correct: a module returns a result object; the step returns its float attribute
# (`out.loss_value`, summed from `.item()`s), which the loop keeps (seq2seq-summarizer's shape:
# an attribute of a module's result is not known to be a tensor).
CORRECT_FLOAT_ATTRIBUTE_OF_RESULT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Result:
        def __init__(self, loss, loss_value):
            self.loss = loss
            self.loss_value = loss_value

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        def forward(self, x, y):
            loss = (self.fc(x) - y).pow(2).mean()
            return Result(loss, loss.item())

    def train_batch(model, optimizer, x, y):
        optimizer.zero_grad()
        out = model(x, y)
        out.loss.backward()
        optimizer.step()
        return out.loss_value / x.shape[0]

    def train(model, batches):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        plot_losses = []
        for x, y in batches:
            plot_losses.append(train_batch(model, optimizer, x, y))
        return plot_losses

    def main():
        torch.manual_seed(0)
        return train(Model(), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)])
""")

def _parameters(model) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def test_trainer_history_of_loss_dicts_is_reported():
    assert _findings(TRAINER_HISTORY) == [(_line(TRAINER_HISTORY, "history.append(metrics)"), "ADL028")]
    message, = _messages(TRAINER_HISTORY)
    assert "`train_step()`" in message and "`loss`" in message and ".item()" in message
    model, history = _load(TRAINER_HISTORY)["main"]()
    assert all(entry["loss"].grad_fn is not None for entry in history)  # the bug: graphs kept


def test_trainer_history_fixed_is_silent_and_equal_to_reference():
    assert _findings(TRAINER_HISTORY_FIXED) == []
    model, history = _load(TRAINER_HISTORY_FIXED)["main"]()
    assert all(isinstance(entry["loss"], float) for entry in history)
    # reference: the same run written by hand, the loss logged as a number
    torch.manual_seed(0)
    reference = torch.nn.Linear(3, 1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(reference(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert [entry["loss"] for entry in history] == losses
    assert all(torch.equal(a, b) for a, b in zip(_parameters(model), _parameters(reference)))


def test_helper_logits_appended_is_reported():
    assert _findings(HELPER_LOGITS) == [(_line(HELPER_LOGITS, "all_logits.append(logits)"), "ADL028")]
    message, = _messages(HELPER_LOGITS)
    assert "`train_batch()`" in message and "`logits`" in message
    model, (all_logits, _, _) = _load(HELPER_LOGITS)["main"]()
    assert all(logits.grad_fn is not None for logits in all_logits)


def test_helper_logits_fixed_is_silent_and_equal_to_reference():
    assert _findings(HELPER_LOGITS_FIXED) == []
    model, (all_logits, losses, accuracy) = _load(HELPER_LOGITS_FIXED)["main"]()
    assert all(logits.grad_fn is None for logits in all_logits)
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
    expected_logits, expected_losses = [], []
    for x, y in batches:
        optimizer.zero_grad()
        logits = reference(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        expected_logits.append(logits.detach())
        expected_losses.append(loss.item())
    assert losses == expected_losses
    assert all(torch.equal(a, b) for a, b in zip(all_logits, expected_logits))
    assert all(torch.equal(a, b) for a, b in zip(_parameters(model), _parameters(reference)))


def test_method_output_kept_on_self_is_reported():
    assert _findings(METHOD_OUTPUT_ON_SELF) == [
        (_line(METHOD_OUTPUT_ON_SELF, "self.reconstructions.append(reconstruction)"), "ADL028")]
    net, kept = _load(METHOD_OUTPUT_ON_SELF)["main"]()
    assert all(r.grad_fn is not None for r in kept)


def test_method_output_on_self_fixed_is_silent_and_equal_to_reference():
    assert _findings(METHOD_OUTPUT_ON_SELF_FIXED) == []
    net, kept = _load(METHOD_OUTPUT_ON_SELF_FIXED)["main"]()
    assert all(r.grad_fn is None for r in kept)
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(6, 2), torch.nn.Tanh(), torch.nn.Linear(2, 6))
    optimizer = torch.optim.Adam(reference.parameters(), lr=1e-2)
    expected = []
    for x in [torch.randn(3, 6) for _ in range(3)]:
        optimizer.zero_grad()
        reconstruction = reference(x)
        (reconstruction - x).pow(2).mean().backward()
        optimizer.step()
        expected.append(reconstruction.detach())
    assert all(torch.equal(a, b) for a, b in zip(kept, expected))
    assert all(torch.equal(a, b) for a, b in zip(_parameters(net), _parameters(reference)))


def test_correct_callee_cuts_is_silent():
    assert _findings(CORRECT_CALLEE_CUTS) == []
    history = _load(CORRECT_CALLEE_CUTS)["main"]()
    assert all(entry["prediction"].grad_fn is None for entry in history)


def test_correct_caller_cuts_is_silent():
    assert _findings(CORRECT_CALLER_CUTS) == []
    outputs = _load(CORRECT_CALLER_CUTS)["main"]()
    assert all(value.grad_fn is None for entry in outputs for value in entry.values())


def test_correct_kept_within_iteration_is_silent():
    assert _findings(CORRECT_KEPT_WITHIN_ITERATION) == []
    assert len(_load(CORRECT_KEPT_WITHIN_ITERATION)["main"]()) == 2


def test_correct_kept_for_a_later_backward_is_silent():
    assert _findings(CORRECT_KEPT_FOR_LATER_BACKWARD) == []
    assert all(isinstance(loss, float) for loss in _load(CORRECT_KEPT_FOR_LATER_BACKWARD)["main"]())


def test_correct_float_attribute_of_a_result_object_is_silent():
    assert _findings(CORRECT_FLOAT_ATTRIBUTE_OF_RESULT) == []
    assert all(isinstance(loss, float) for loss in _load(CORRECT_FLOAT_ATTRIBUTE_OF_RESULT)["main"]())


def test_gradients_of_a_saliency_helper_kept_by_the_loop_are_silent():
    """`torch.autograd.grad` without `create_graph=True` gives gradients without a graph, and a
    function that only asks it for a gradient does not train."""
    path = Path(__file__).parents[1] / "errors" / "variants" / "correct" / "input_requires_grad_set_after_forward.py"
    assert _findings(path.read_text(encoding="utf-8")) == []
