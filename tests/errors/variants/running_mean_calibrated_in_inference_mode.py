# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 4
# trigger: an input normaliser calibrates its running mean in an @torch.inference_mode() method,
#   then the training loop updates the mean in place (mul_/add_) outside inference mode
# source: none found; the pattern as users write it
# results: losses, model, normaliser.mean
import torch
from torch import nn
import torch.nn.functional as F


class Normaliser:
    def __init__(self):
        self.mean = None

    @torch.inference_mode()
    def calibrate(self, x):
        self.mean = x.mean(dim=0)

    def update(self, x, momentum=0.9):
        self.mean.mul_(momentum).add_((1 - momentum) * x.mean(dim=0))  # PRIMARY

    def __call__(self, x):
        return x - self.mean


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
normaliser = Normaliser()
normaliser.calibrate(torch.randn(10, 3))
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
losses = []
for x, y in batches:
    normaliser.update(x)
    optimizer.zero_grad()
    loss = F.mse_loss(model(normaliser(x)), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
