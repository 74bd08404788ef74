"""Sophia's GPT training loop estimates the Hessian every `hess_interval`
steps: it samples labels from the model's own logits and backpropagates the
cross-entropy against them, then calls `optimizer.update_hessian()`.  The
reference script runs a fresh forward pass for that estimate; a user who
moved the estimate into a helper reused the `logits` of the training step,
whose graph `loss.backward()` had already freed ("Trying to backward through
the graph a second time").  The fix runs the model again on the batch.
Buggy line: `loss_sampled.backward()` in `update_hessian_estimate`.
Expected finding: ADL019 there.
Source: https://github.com/Liuhong99/Sophia/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyGPT(nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.block = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, idx, targets=None):
        x = self.wte(idx)
        x = x + self.block(x)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def update_hessian_estimate(optimizer, logits):
    samp_dist = torch.distributions.Categorical(logits=logits)
    y_sample = samp_dist.sample()
    loss_sampled = F.cross_entropy(logits.view(-1, logits.size(-1)), y_sample.view(-1))
    loss_sampled.backward()  # expect: ADL019
    optimizer.zero_grad(set_to_none=True)


def train(model, optimizer, batches, hess_interval=2):
    for iter_num, (X, Y) in enumerate(batches):
        logits, loss = model(X, Y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if iter_num % hess_interval == hess_interval - 1:
            update_hessian_estimate(optimizer, logits)


def run():
    torch.manual_seed(0)
    model = TinyGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [(torch.randint(0, 11, (2, 5)), torch.randint(0, 11, (2, 5))) for _ in range(2)]
    train(model, optimizer, batches)
