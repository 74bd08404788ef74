"""GRPO fine-tuning of a small causal language model with an entropy bonus: the per-token entropy is
computed in chunks by a memory-saving helper, `probs = logps.exp(); probs.mul_(logps);
entropy = probs.sum(-1).neg_()`, and `entropy_coef * entropy` is subtracted from the policy loss.
`exp` saves its output for backward, and `probs.mul_(logps)` overwrites that output in place, so
`loss.backward()` raises "one of the variables needed for gradient computation has been modified by
an inplace operation: [...], which is output 0 of ExpBackward0" as soon as the entropy term is part
of the loss.
Source: https://github.com/huggingface/trl/pull/7125 (review of "vectorise selective_log_softmax":
"`entropy_from_logits` now does `probs.mul_(logps)` on the output of `logps.exp()`. Autograd saves
that `exp` output for backward, so the in-place mul raises a version-mismatch RuntimeError when
entropy is part of the loss. GRPO's entropy bonus path calls this on live logits"); the correct
version multiplies out of place, `-(torch.exp(logps) * logps).sum(-1)`.
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HID, PROMPT, COMPLETION, GROUP = 24, 16, 4, 5, 4
ENTROPY_COEF, CHUNK = 0.01, 8


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HID)
        self.rnn = nn.GRU(HID, HID, batch_first=True)
        self.lm_head = nn.Linear(HID, VOCAB)

    def forward(self, ids):
        return self.lm_head(self.rnn(self.embed(ids))[0])


def entropy_from_logits(logits, chunk_size=CHUNK):
    flat_logits = logits.reshape(-1, logits.size(-1))
    entropies = []
    for chunk in flat_logits.split(chunk_size, dim=0):
        logps = F.log_softmax(chunk, dim=-1)
        entropies.append(-(torch.exp(logps) * logps).sum(-1))
    return torch.cat(entropies).reshape(logits.shape[:-1])


def reward(completions):
    # Stand-in reward model: completions that use many distinct tokens score higher.
    return torch.tensor([len(set(row.tolist())) / COMPLETION for row in completions])


model = TinyCausalLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
prompt = torch.randint(0, VOCAB, (1, PROMPT)).expand(GROUP, -1)
completions = torch.randint(0, VOCAB, (GROUP, COMPLETION))
losses = []
for step in range(3):
    ids = torch.cat([prompt, completions], dim=1)
    logits = model(ids)[:, PROMPT - 1:-1]
    per_token_logps = torch.gather(F.log_softmax(logits, dim=-1), 2, completions.unsqueeze(2)).squeeze(2)
    rewards = reward(completions)
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
    ratio = torch.exp(per_token_logps - per_token_logps.detach())
    policy_loss = -(ratio * advantages.unsqueeze(1)).mean()
    entropy = entropy_from_logits(logits)
    loss = policy_loss - ENTROPY_COEF * entropy.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
