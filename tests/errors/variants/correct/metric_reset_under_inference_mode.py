# message: Inplace update to inference tensor outside InferenceMode is not allowed.
# code: AD110 (catalogue: inference_inplace_outside)
# trigger: a loss meter is reset inside an evaluation function decorated with
#   @torch.inference_mode(); the training loop then accumulates into it with +=
# source: none found; the pattern as users write it
# results: meter.total, meter.count, model
import torch
from torch import nn
import torch.nn.functional as F


class Meter:
    def reset(self):
        self.total = torch.zeros(())
        self.count = 0

    def update(self, value, n):
        self.total = self.total + value * n  # PRIMARY
        self.count += n


@torch.inference_mode()
def evaluate(model, batches, meter):
    meter.reset()
    for x, y in batches:
        meter.update(F.mse_loss(model(x), y), len(x))
    return meter.total / meter.count


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
meter = Meter()
evaluate(model, batches, meter)
for x, y in batches:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    meter.update(loss.detach(), len(x))
