import torch
import torch.autograd.forward_ad as fwAD
from torch import nn


class InputSensitivity:
    """Logs the directional derivative of the model's output along the first input feature."""

    def on_train_epoch_start(self, trainer):
        self.direction = None

    def on_train_batch_end(self, trainer, batch):
        x, _ = batch
        direction = torch.zeros_like(x)
        direction[:, 0] = 1.0
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, direction)  # PRIMARY
            tangent = fwAD.unpack_dual(trainer.model(dual)).tangent
        trainer.sensitivities.append(tangent.abs().mean().item())


class Trainer:
    def __init__(self, model, callbacks):
        self.model, self.callbacks = model, callbacks
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.losses, self.sensitivities = [], []

    def fit(self, batches, epochs=2):
        for _ in range(epochs):
            for callback in self.callbacks:
                callback.on_train_epoch_start(self)
            for x, y in batches:
                loss = nn.functional.mse_loss(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.losses.append(loss.item())
                for callback in self.callbacks:
                    callback.on_train_batch_end(self, (x, y))


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
trainer = Trainer(model, [InputSensitivity()])
trainer.fit(batches)
