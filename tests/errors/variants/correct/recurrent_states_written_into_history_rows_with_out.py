# message: tanh(): functions with out=... arguments don't support automatic differentiation, but one of
#   the arguments requires grad.
# code: AD117 (catalogue: out_requires_grad)
# set: 12
# trigger: a hand-written recurrent module preallocates the history of its states and writes each
#   step's state into its row with torch.tanh(..., out=history[t]) inside the loop over time
# source: none found; the pattern as users write it (out= into rows of a preallocated history)
# results: losses, model
import torch
from torch import nn


class TinyRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.input = nn.Linear(2, 3)
        self.recurrent = nn.Linear(3, 3, bias=False)

    def forward(self, seq):
        history = [torch.zeros(3)]
        for t in range(seq.shape[0]):
            history.append(torch.tanh(self.input(seq[t]) + self.recurrent(history[t])))  # PRIMARY
        return torch.stack(history[1:])


torch.manual_seed(0)
model = TinyRNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
seq, target = torch.randn(4, 2), torch.randn(4, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(seq) - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
