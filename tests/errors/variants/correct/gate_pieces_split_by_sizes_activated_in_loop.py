# message: Output 0 of SplitWithSizesBackward0 is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 9
# trigger: an LSTM-like cell written by hand splits its gate pre-activations with split([...] * 4) and
#   applies sigmoid_ to each of the first three pieces in a loop
# source: none found; the pattern as users write it (hand-written LSTM cells)
# results: losses, cell
import torch
from torch import nn
import torch.nn.functional as F


class GatedCell(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.gates = nn.Linear(2 * width, 4 * width)

    def forward(self, x, h, c):
        pieces = self.gates(torch.cat([x, h], -1)).split([h.shape[-1]] * 4, dim=-1)
        pieces = [piece.sigmoid() for piece in pieces[:3]] + [pieces[3]]  # PRIMARY
        forget, update, output, candidate = pieces
        c = forget * c + update * candidate.tanh()
        return output * c.tanh(), c


torch.manual_seed(0)
cell = GatedCell(3)
optimizer = torch.optim.SGD(cell.parameters(), lr=0.1)
xs, target = torch.randn(4, 2, 3), torch.randn(2, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    h = c = torch.zeros(2, 3)
    for x in xs:
        h, c = cell(x, h, c)
    loss = F.mse_loss(h, target)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
