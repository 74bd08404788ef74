# message: Can't detach views in-place. Use detach() instead.
# code: AD108 (catalogue: detach_view_inplace)
# trigger: a GRU's last-layer state h_n[-1] (a view of h_n) is kept as a summary after each
#   training step and detached in place with detach_()
# source: none found; the pattern as users write it
# results: summary, rnn, head
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
rnn, head = nn.GRU(3, 4, num_layers=2, batch_first=True), nn.Linear(4, 1)
optimizer = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
batches = [(torch.randn(2, 5, 3), torch.randn(2, 1)) for _ in range(2)]
summary = None
for x, y in batches:
    optimizer.zero_grad()
    _, h_n = rnn(x)
    last = h_n[-1]
    loss = F.mse_loss(head(last), y)
    loss.backward()
    optimizer.step()
    last.detach_()  # PRIMARY
    summary = last
