"""APPFL's client optimizer (`ClientOptim.update`) trains the local model
for its local epochs and clips the gradients with
`torch.nn.utils.clip_grad_norm_` after `optimizer.step()`: the update has
already used the unclipped gradient, so `clip_value` does nothing.  The fix
moves the clipping before the step.
Buggy line: `torch.nn.utils.clip_grad_norm_(...)` in `ClientOptim.update`.
Source: https://github.com/APPFL/APPFL/issues/197"""
import copy

import torch
import torch.nn as nn


class ClientOptim:
    def __init__(self, model, loss_fn, dataloader, num_local_epochs=1, lr=0.1, clip_value=0.05, clip_norm=2):
        self.model = model
        self.loss_fn = loss_fn
        self.dataloader = dataloader
        self.num_local_epochs = num_local_epochs
        self.lr = lr
        self.clip_value = clip_value
        self.clip_norm = clip_norm

    def update(self):
        self.model.train()
        optimizer = torch.optim.SGD(self.model.parameters(), lr=self.lr)
        for t in range(self.num_local_epochs):
            for data, target in self.dataloader:
                optimizer.zero_grad()
                output = self.model(data)
                loss = self.loss_fn(output, target)
                loss.backward()
                optimizer.step()
                if self.clip_value is not False:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_value, norm_type=self.clip_norm)  # expect: ADL022
        return copy.deepcopy(self.model.state_dict())


def bug_shows():
    """The local update ignores the clipping: parameters differ from an SGD
    step on the clipped gradient, written by hand."""
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    reference = copy.deepcopy(model)
    data, target = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
    ClientOptim(model, nn.CrossEntropyLoss(), [(data, target)]).update()
    nn.CrossEntropyLoss()(reference(data), target).backward()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.05, norm_type=2)
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.1 * p.grad
    return not all(torch.allclose(a, b) for a, b in zip(model.parameters(), reference.parameters()))
