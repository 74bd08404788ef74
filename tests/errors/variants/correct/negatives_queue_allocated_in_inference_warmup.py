# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone
#   to get a normal tensor before doing inplace update.See
#   https://github.com/pytorch/rfcs/pull/17 for more details.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 12
# trigger: a contrastive learner allocates its queue of negatives lazily in a warm-up method decorated
#   with @torch.inference_mode(); the training step then writes new keys into a slot of the queue by
#   index assignment (self.queue[slot] = keys)
# source: none found; the pattern as users write it (MoCo-style queues filled by a warm-up pass)
# results: losses, model, queue
import torch
from torch import nn
import torch.nn.functional as F


class Contrastive(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.queue = None

    @torch.no_grad()  # PRIMARY
    def warm_up(self, x):
        self.queue = torch.stack([F.normalize(self.encoder(x), dim=1)] * 2)

    def step_loss(self, x, slot):
        query = F.normalize(self.encoder(x), dim=1)
        negatives = self.queue.reshape(-1, 4).clone()
        loss = (query @ negatives.t()).logsumexp(dim=1).mean()
        self.queue[slot] = query.detach()
        return loss


torch.manual_seed(0)
model = Contrastive()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 3)
model.warm_up(x)
losses = []
for step in range(2):
    optimizer.zero_grad()
    loss = model.step_loss(x, step % 2)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
queue = model.queue
