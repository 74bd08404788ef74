# message: Output 0 of SplitWithSizes is a view and is being modified inplace. This view is the output of a
#   function that returns multiple views. Such functions do not allow the output views to be
#   modified inplace. You should replace the inplace operation by an out-of-place one.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 25
# trigger: a top-1 mixture-of-experts layer sorts its tokens by expert and cuts them into one group per
#   expert with torch.split(tokens[order], sizes) (split_with_sizes, several views), then weights
#   each group by its router probability in place with group.mul_(...) before the expert
# source: none found; the pattern as users write it (MoE dispatch by sorting and splitting)
# results: model, losses
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class TopOneMoE(nn.Module):
    """Top-1 mixture of experts: tokens are sorted by expert, cut into one group per expert with
    torch.split by the group sizes, and each expert's output is weighted by the router's probability."""

    def __init__(self, dim=4, experts=3):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.router = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(experts))

    def forward(self, tokens):
        tokens = self.norm(tokens)
        probs = F.softmax(self.router(tokens), dim=-1)
        gate, choice = probs.max(dim=-1)
        order = choice.argsort()
        sizes = torch.bincount(choice, minlength=len(self.experts)).tolist()
        groups = torch.split(tokens[order], sizes)
        gates = torch.split(gate[order], sizes)
        outputs = []
        for expert, group, weight in zip(self.experts, groups, gates):
            group = group.mul(weight.unsqueeze(-1))
            outputs.append(expert(group))
        mixed = torch.cat(outputs)
        return torch.empty_like(mixed).index_copy(0, order, mixed)


torch.manual_seed(0)
model = TopOneMoE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
tokens = torch.randn(9, 4)
targets = torch.randn(9, 4)
losses = []
for step in range(3):
    loss = F.mse_loss(model(tokens), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
