# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 10
# trigger: a regressor's predict() method carries @torch.set_grad_enabled(False) as its decorator
#   (meant for serving); the training loop computes its loss from predict(), which has no history
# source: none found; the pattern as users write it (set_grad_enabled used as a decorator)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))

    def predict(self, x):  # PRIMARY
        return self.net(x).squeeze(-1)


torch.manual_seed(0)
model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model.predict(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
