"""Vocab-parallel cross entropy: `logits = logits.float()` is a no-op on float32, so the
following `logits -= logits_max` writes into the model's logits, which the z-loss saved.
Source: https://github.com/NVIDIA/Megatron-LM/pull/1594 (fix: clone when already float32).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
head = nn.Linear(6, 10)
hidden = torch.randn(4, 6)
target = torch.tensor([1, 3, 5, 7])


def cross_entropy(vocab_logits, target):
    vocab_logits = vocab_logits.float()
    logits_max = vocab_logits.max(dim=-1, keepdim=True)[0]
    vocab_logits -= logits_max
    exp_logits = vocab_logits.exp()
    predicted = vocab_logits.gather(1, target.unsqueeze(1)).squeeze(1)
    return (exp_logits.sum(-1).log() - predicted).mean()


logits = head(hidden)
z_loss = 1e-2 * torch.logsumexp(logits, dim=-1).pow(2).mean()
loss = cross_entropy(logits, target) + z_loss
loss.backward()
result = {"loss": loss.detach(), "w": head.weight.grad, "b": head.bias.grad}
