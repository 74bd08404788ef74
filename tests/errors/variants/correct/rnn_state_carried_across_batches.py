# message: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed).
# code: AD302 (catalogue: backward_twice)
# trigger: an RNNCell's hidden state is carried from one batch to the next without detach(), so
#   the second batch's backward() reaches into the first batch's freed graph
# source: https://learn.biosrag.com/ai/rnn-training-4.html
# results: losses, rnn, head
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
rnn, head = nn.RNNCell(3, 4), nn.Linear(4, 1)
optimizer = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
batches = [([torch.randn(2, 3) for _ in range(2)], torch.randn(2, 1)) for _ in range(3)]
hidden = torch.zeros(2, 4)
losses = []
for steps, target in batches:
    optimizer.zero_grad()
    state = hidden.detach()  # PRIMARY
    for x in steps:
        state = rnn(x, state)
    loss = F.mse_loss(head(state), target)
    losses.append(loss.item())
    loss.backward()
    optimizer.step()
    hidden = state
