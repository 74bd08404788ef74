"""A vision-language-action policy for a robot arm: a small transformer over observation tokens
predicts the next action, its blocks under non-reentrant activation checkpointing to save
memory. The policy is built for deployment with `use_cache=True`: each forward makes a key/value
cache and every attention block appends its keys and values to it. In training, backward()
recomputes each checkpointed block, and the recomputation appends to the cache the forward pass
already filled: the keys are twice as long as in the forward, and backward fails with
"torch.utils.checkpoint: Recomputed values for the following tensors have different metadata
than during the forward pass" (a sequence length doubled).
Source: https://github.com/shihao1895/MemoryVLA/issues/18 ("`CheckpointError` during backward
pass (recomputed tensor sequence length doubled)": the KV cache left enabled during the training
forward; training runs with the cache off).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

DIM = 16


class AttentionBlock(nn.Module):
    def __init__(self, index):
        super().__init__()
        self.index = index
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)

    def forward(self, tokens, cache):
        q, k, v = self.qkv(tokens).chunk(3, dim=-1)
        if cache is not None:
            if self.index in cache:
                k = torch.cat([cache[self.index][0], k], dim=1)
                v = torch.cat([cache[self.index][1], v], dim=1)
            cache[self.index] = (k, v)
        weights = torch.softmax(q @ k.transpose(1, 2) / DIM ** 0.5, dim=-1)
        return tokens + self.out(weights @ v)


class Policy(nn.Module):
    def __init__(self, use_cache):
        super().__init__()
        self.use_cache = use_cache
        self.blocks = nn.ModuleList([AttentionBlock(i) for i in range(2)])
        self.action_head = nn.Linear(DIM, 7)

    def forward(self, tokens):
        cache = {} if self.use_cache else None
        for block in self.blocks:
            tokens = checkpoint(block, tokens, cache, use_reentrant=False)
        return self.action_head(tokens[:, -1])


policy = Policy(use_cache=True)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
observations = torch.randn(4, 5, DIM)
expert_actions = torch.randn(4, 7)

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(policy(observations), expert_actions)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in policy.parameters()]}
