# message: Output 0 of UnbindBackward0 is a view and its base or another view of its base has been modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.
# code: AD138 (catalogue: split_base_modified)
# set: 9
# trigger: a slot-attention-like module unbinds its slots to score each one, then normalises the
#   slot tensor in place (div_) before the scores are used
# source: none found; the pattern as users write it (in-place normalisation of a state tensor)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Slots(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Linear(3, 4)
        self.score = nn.Linear(4, 1)

    def forward(self, x):
        slots = self.encode(x)
        per_slot = [self.score(slot) for slot in slots.unbind(1)]
        slots = slots.div(slots.norm(dim=-1, keepdim=True).detach())  # PRIMARY
        return torch.cat(per_slot, -1) + slots.sum(-1)


torch.manual_seed(0)
model = Slots()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(2, 5, 3), torch.randn(2, 5)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
