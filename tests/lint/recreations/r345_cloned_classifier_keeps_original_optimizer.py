"""ART's `PyTorchClassifier.clone_for_refitting()` built a fresh model of the
same architecture for shadow-model membership inference but handed the clone
the original classifier's optimizer, which holds the original model's
parameters.  Fitting the clone computes gradients on the clone's parameters
and steps the original's: "the cloned model(s) was not getting trained while
strangely the original model's parameters were updated".  Nothing raises.
The fix (#1580) creates a new optimizer of the same type over the clone's
parameters.
Buggy line: `optimizer=self._optimizer` in `clone_for_refitting`.
Expected finding: an optimizer stepped for a model whose parameters it does
not hold (no rule yet).
Source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/issues/1579"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class PyTorchClassifier:
    def __init__(self, model, loss, optimizer):
        self._model = model
        self._loss = loss
        self._optimizer = optimizer

    @property
    def model(self):
        return self._model

    def fit(self, x, y, nb_epochs=1):
        self._model.train()
        for _ in range(nb_epochs):
            self._optimizer.zero_grad()
            loss = self._loss(self._model(x), y)
            loss.backward()
            self._optimizer.step()

    def clone_for_refitting(self):
        model = copy.deepcopy(self._model)
        for layer in model.children():
            if hasattr(layer, "reset_parameters"):
                layer.reset_parameters()
        return PyTorchClassifier(model, self._loss, optimizer=self._optimizer)  # missed: none


def bug_shows():
    """Fitting the clone leaves the clone unchanged and moves the original."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3))
    classifier = PyTorchClassifier(model, F.cross_entropy, torch.optim.SGD(model.parameters(), lr=0.5))
    shadow = classifier.clone_for_refitting()
    shadow_before = shadow.model[0].weight.detach().clone()
    original_before = classifier.model[0].weight.detach().clone()
    x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
    classifier.fit(x, y)
    shadow.fit(x, y)
    shadow_unchanged = torch.equal(shadow.model[0].weight, shadow_before)
    return shadow_unchanged and not torch.equal(classifier.model[0].weight, original_before)
