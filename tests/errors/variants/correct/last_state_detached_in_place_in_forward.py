# message: Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().
# code: AD139 (catalogue: detach_saved_inplace)
# set: 4
# trigger: a recurrent module keeps its last state for the next batch with
#   self.last_state = h.detach_() at the end of forward; tanh saved h for backward
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.rec, self.head = nn.Linear(3, 4), nn.Linear(4, 4), nn.Linear(4, 1)
        self.last_state = torch.zeros(2, 4)

    def forward(self, sequence):
        h = self.last_state
        outputs = []
        for x_t in sequence.unbind(1):
            h = torch.tanh(self.inp(x_t) + self.rec(h))
            outputs.append(self.head(h))
        self.last_state = h.detach()  # PRIMARY
        return torch.stack(outputs, dim=1)


torch.manual_seed(0)
model = Recurrent()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(2, 3, 3), torch.randn(2, 3, 1)) for _ in range(2)]
losses = []
for x, y in batches:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
