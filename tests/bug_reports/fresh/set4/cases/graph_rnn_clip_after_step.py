"""Variational graph RNN training: gradient clipping (`clip_grad_norm`) is called after
`optimizer.step()`, so the update uses the unclipped gradients and the clipping does nothing
(no error).
Source: https://github.com/VGraphRNN/VGRNN/issues/4 ("clip_grad_norm() is called after opt.step()
so it isn't doing anything. It should either be removed or moved before the optimizer updates
the model").
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
num_nodes, feat, hidden = 6, 4, 8
adjacency = (torch.rand(3, num_nodes, num_nodes) > 0.6).float()
features = torch.randn(3, num_nodes, feat)
gcn = nn.Linear(feat, hidden)
cell = nn.GRUCell(hidden, hidden)
decoder = nn.Linear(hidden, hidden)
params = [*gcn.parameters(), *cell.parameters(), *decoder.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-2)

losses = []
for epoch in range(3):
    h = torch.zeros(num_nodes, hidden)
    loss = 0
    for t in range(3):
        a_hat = adjacency[t] + torch.eye(num_nodes)
        x = torch.relu(a_hat @ gcn(features[t]) / a_hat.sum(1, keepdim=True))
        h = cell(x, h)
        z = decoder(h)
        logits = z @ z.t()
        loss = loss + nn.functional.binary_cross_entropy_with_logits(logits, adjacency[t]) * 10
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    nn.utils.clip_grad_norm_(params, 0.1)
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in params]}
