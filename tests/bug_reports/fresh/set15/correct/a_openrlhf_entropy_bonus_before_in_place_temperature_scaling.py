"""Policy-gradient fine-tuning of a language model with a sampling temperature and an entropy
bonus (OpenRLHF, openrlhf/models/actor.py and models/utils.py): the actor casts the logits to
float32 (`.to(torch.float32)` returns the very same tensor when they already are), computes the
entropy bonus from them, and then `log_probs_from_logits` divides the same tensor by the
temperature in place, `logits.div_(temperature)`. The entropy was meant to describe the tempered
policy the sampler uses, softmax(logits / T); and `logsumexp` and the product in the entropy keep
the logits for their backward, so with a non-zero entropy coefficient `loss.backward()` raises
"one of the variables needed for gradient computation has been modified by an inplace operation".
Source: https://github.com/OpenRLHF/OpenRLHF/pull/1319 ("Actor.forward called
compute_entropy(output["logits"]) before log_probs_from_logits divided the same tensor in place by
self.temperature ... apply --rollout.temperature to the actor logits once, right after the fp32
cast; compute the entropy bonus and the policy log probs from the same scaled logits").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SEQ, BATCH, TEMPERATURE, ENTROPY_COEF = 20, 12, 6, 3, 0.7, 0.01


def compute_entropy(logits):
    pd = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)


def log_probs_from_logits(logits, labels, temperature=1.0):
    if temperature != 1.0:
        logits.div_(temperature)
    return torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mix = nn.Linear(DIM, DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)

    def forward(self, sequences, temperature):
        logits = self.lm_head(torch.tanh(self.mix(self.embed(sequences)))).to(torch.float32)
        logits = logits / temperature
        entropy = compute_entropy(logits[:, :-1])
        log_probs = log_probs_from_logits(logits[:, :-1], sequences[:, 1:])
        return log_probs, entropy


actor = Actor()
optimizer = torch.optim.Adam(actor.parameters(), lr=1e-2)
sequences = torch.randint(0, VOCAB, (BATCH, SEQ))
advantages = torch.randn(BATCH, SEQ - 1)

losses = []
for step in range(3):
    optimizer.zero_grad()
    log_probs, entropy = actor(sequences, TEMPERATURE)
    loss = -(advantages * log_probs).mean() - ENTROPY_COEF * entropy.mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in actor.parameters()]}
