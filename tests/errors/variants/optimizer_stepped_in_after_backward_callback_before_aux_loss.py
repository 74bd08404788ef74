# message: one of the variables needed for gradient computation has been modified by an inplace operation:
#   [torch.FloatTensor [8, 8]], which is output 0 of AsStrided, is at version 2; expected version 1 instead.
#   Hint: enable anomaly detection to find the operation that failed to compute its gradient, with
#   torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD103 (catalogue: saved_tensor_modified; AD103 is the recorder's code for a write made by
#   optimizer.step())
# set: 17
# trigger: a Trainer-like class runs its callbacks after every backward() it makes; a callback's
#   on_after_backward steps the optimizer, and training_step backpropagates the main loss
#   (retain_graph=True), then an auxiliary reconstruction loss of the same forward
# source: none found; the pattern as users write it (a stepping callback written for one loss)
# results: model
import torch
from torch import nn


class StepCallback:
    def on_after_backward(self, trainer):
        trainer.optimizer.step()  # PRIMARY
        trainer.optimizer.zero_grad()


class Trainer:
    def __init__(self, model, callbacks):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.callbacks = callbacks

    def backward(self, loss, **kwargs):
        loss.backward(**kwargs)
        for callback in self.callbacks:
            callback.on_after_backward(self)

    def training_step(self, x, y):
        features = self.model["encoder"](x)
        main = nn.functional.mse_loss(self.model["head"](features), y)
        aux = nn.functional.mse_loss(self.model["decoder"](features), x)
        self.backward(main, retain_graph=True)
        self.backward(0.1 * aux)


torch.manual_seed(0)
model = nn.ModuleDict({"encoder": nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh()),
                       "head": nn.Linear(8, 1), "decoder": nn.Linear(8, 4)})
trainer = Trainer(model, [StepCallback()])
for _ in range(3):
    trainer.training_step(torch.randn(6, 4), torch.randn(6, 1))
