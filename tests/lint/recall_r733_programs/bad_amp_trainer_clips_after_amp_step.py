"""A trainer keeps its gradient scaler as `self.amp` and clips the gradients after the scaler
steps the optimizer: the step used the unclipped gradients, the clip bounds nothing."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, max_grad=0.01):
        self.model = model
        self.optim = torch.optim.SGD(model.parameters(), lr=0.5)
        self.amp = torch.amp.GradScaler("cpu", init_scale=256.0)
        self.max_grad = max_grad

    def fit(self, batches):
        for x, y in batches:
            self.optim.zero_grad()
            loss = nn.functional.mse_loss(self.model(x), y) * 100.0
            self.amp.scale(loss).backward()
            self.amp.step(self.optim)
            torch.nn.utils.clip_grad_value_(self.model.parameters(), self.max_grad)
            self.amp.update()


def run(clip_first=False):
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    trainer = Trainer(model)
    batches = [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)]
    if not clip_first:
        trainer.fit(batches)
        return model
    for x, y in batches:
        trainer.optim.zero_grad()
        loss = nn.functional.mse_loss(model(x), y) * 100.0
        trainer.amp.scale(loss).backward()
        trainer.amp.unscale_(trainer.optim)
        torch.nn.utils.clip_grad_value_(model.parameters(), trainer.max_grad)
        trainer.amp.step(trainer.optim)
        trainer.amp.update()
    return model


def bug_shows():
    return not torch.allclose(run().weight, run(clip_first=True).weight)
