import torch
from torch import nn
torch.manual_seed(0)
lstm = nn.LSTM(4, 8, batch_first=True); head = nn.Linear(8, 1)
opt = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), 1e-3)
state = None
data = torch.randn(2, 20, 4)
for chunk in data.split(5, dim=1):
    if state is not None:
        state = tuple(s.detach() for s in state)
    out, state = lstm(chunk, state)
    loss = head(out).pow(2).mean()
    opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(lstm.parameters(), 1.0); opt.step()
buf = torch.zeros(3, 8)
outs = []
h = torch.zeros(1, 8)
cell = nn.GRUCell(4, 8)
for t in range(3):
    h = cell(torch.randn(1, 4), h)
    outs.append(h)
torch.stack(outs).sum().backward()
print("ok")
