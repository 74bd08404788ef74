# message: Output 0 of Unbind is a view and is being modified inplace. This view is the output
#   of a function that returns multiple views. Such functions do not allow the output views to be
#   modified inplace. You should replace the inplace operation by an out-of-place one.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 12
# trigger: a two-stream module's forward unpacks a stacked tensor into its two streams by Python
#   unpacking (content, style = torch.stack(...), which iterates with unbind) and rectifies one
#   stream in place with relu_()
# source: none found; the pattern as users write it (tuple unpacking of a stacked tensor)
# results: losses, model
import torch
from torch import nn


class TwoStream(nn.Module):
    def __init__(self):
        super().__init__()
        self.content = nn.Linear(3, 4)
        self.style = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        content, style = torch.stack([self.content(x), self.style(x)])
        content = content.relu()  # PRIMARY
        return self.head(content * torch.sigmoid(style))


torch.manual_seed(0)
model = TwoStream()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
