# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 5
# trigger: a Lightning-like module computes its loss in shared_step, decorated with
#   @torch.no_grad() because validation_step used it first; training_step calls it too and a
#   Trainer-like loop backpropagates the result with torch.autograd.backward
# source: none found; the pattern as users write it
# results: trainer.losses, trainer.validation, module
import torch
from torch import nn
import torch.nn.functional as F


class LitRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))

    def shared_step(self, batch):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def training_step(self, batch):
        return self.shared_step(batch)

    def validation_step(self, batch):
        with torch.no_grad():
            return self.shared_step(batch)


class Trainer:
    def __init__(self, module):
        self.module = module
        self.optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        self.losses, self.validation = [], []

    def fit(self, batches, validation_batch):
        for batch in batches:
            self.optimizer.zero_grad()
            loss = self.module.training_step(batch)
            torch.autograd.backward(loss)
            self.optimizer.step()
            self.losses.append(loss.item())
            self.validation.append(self.module.validation_step(validation_batch).item())


torch.manual_seed(0)
module = LitRegressor()
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
trainer = Trainer(module)
trainer.fit(batches, (torch.randn(4, 3), torch.randn(4, 1)))
