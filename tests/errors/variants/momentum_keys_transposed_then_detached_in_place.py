# message: Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel
#   (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP
#   buckets, and hence detach_() cannot be called on these gradients. To fix this error, please
#   refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.
# code: AD108 (catalogue: detach_view_inplace)
# set: 6
# trigger: a MoCo-like contrastive step enqueues the key encoder's outputs, transposed to fit the
#   queue's layout, with keys.t().detach_()
# source: none found; the pattern as users write it
# results: losses, query_encoder, queue
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
query_encoder = nn.Linear(4, 3)
key_encoder = nn.Linear(4, 3)
queue = torch.randn(3, 8)
optimizer = torch.optim.SGD(query_encoder.parameters(), lr=0.1)
losses = []
for step in range(2):
    x = torch.randn(4, 4)
    queries = F.normalize(query_encoder(x), dim=1)
    keys = F.normalize(key_encoder(x + 0.05 * torch.randn(4, 4)), dim=1)
    positives = (queries * keys.detach()).sum(1, keepdim=True)
    negatives = queries @ queue
    logits = torch.cat([positives, negatives], dim=1) / 0.1
    optimizer.zero_grad()
    loss = F.cross_entropy(logits, torch.zeros(4, dtype=torch.long))
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    start = 4 * step
    queue[:, start:start + 4] = keys.t().detach_()  # PRIMARY
