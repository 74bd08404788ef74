# message: Output 0 of Unbind is a view and is being modified inplace. This view is the output of a function that returns multiple views.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 4
# trigger: a recurrent encoder walks over seq.unbind(1) and masks each step's embedding in place
#   (x_t.mul_(keep)) before the cell
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.cell = nn.Linear(8, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, tokens, keep):
        h = torch.zeros(tokens.size(0), 4)
        for x_t, keep_t in zip(self.embed(tokens).unbind(1), keep.unbind(1)):
            x_t = x_t * keep_t.unsqueeze(1)  # PRIMARY
            h = torch.tanh(self.cell(torch.cat([x_t, h], dim=1)))
        return self.head(h)


torch.manual_seed(0)
model = Encoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
keep = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
y = torch.randn(2, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(tokens, keep), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
