"""The near twin: the scaler (`self.amp`) unscales, the clip bounds the gradients, then the
scaler steps the optimizer."""
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
            self.amp.unscale_(self.optim)
            torch.nn.utils.clip_grad_value_(self.model.parameters(), self.max_grad)
            self.amp.step(self.optim)
            self.amp.update()


def run():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    Trainer(model).fit([(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)])
    return model
