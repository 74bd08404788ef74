"""PPO for RLHF (tatsu-lab/alpaca_farm, rl/rl_trainer.py `step_with_rollouts`): gradients are
accumulated over several rollout micro-batches inside `accelerator.accumulate(...)`, whose wrapped
optimizer turns `step()` and `zero_grad()` into no-ops except at the micro-batch that ends the
window. The loop cleared the gradients with the model's own `self.policy.zero_grad(set_to_none=True)`
after `self.optimizer.step()`; the module's `zero_grad` is not wrapped, so it cleared them after
every micro-batch, and each optimizer step applied only the last micro-batch's gradient: the
effective batch was one micro-batch, silently (no error, no warning). Here the accelerate wrapper
is re-created by a small class with the same behaviour.
Source: https://github.com/tatsu-lab/alpaca_farm/pull/58 ("fix zero grad bug. resolves #57":
`self.policy.zero_grad(set_to_none=True)` becomes `self.optimizer.zero_grad(set_to_none=True)`).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, DIM, BATCH, MICRO_BATCHES, ACCUMULATION, CLIP = 12, 8, 4, 6, 3, 0.2


class AccumulatingOptimizer:
    """As accelerate's AcceleratedOptimizer inside `accelerator.accumulate`: step() and zero_grad()
    run only at the micro-batch that ends an accumulation window."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.sync_gradients = False

    def step(self):
        if self.sync_gradients:
            self.optimizer.step()

    def zero_grad(self, set_to_none=True):
        if self.sync_gradients:
            self.optimizer.zero_grad(set_to_none=set_to_none)


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Embedding(VOCAB, DIM), nn.Tanh())
        self.policy_head = nn.Linear(DIM, VOCAB)
        self.value_head = nn.Linear(DIM, 1)

    def forward(self, queries):
        hidden = self.body(queries)
        return self.policy_head(hidden).log_softmax(-1), self.value_head(hidden).squeeze(-1)


policy = ActorCritic()
optimizer = AccumulatingOptimizer(torch.optim.Adam(policy.parameters(), lr=1e-2))

# Fixed rollouts: a query token, the sampled response token, its old log-probability and return.
queries = torch.randint(0, VOCAB, (MICRO_BATCHES, BATCH))
responses = torch.randint(0, VOCAB, (MICRO_BATCHES, BATCH))
old_logprobs = torch.log(torch.full((MICRO_BATCHES, BATCH), 1.0 / VOCAB))
returns = torch.randn(MICRO_BATCHES, BATCH)


def compute_loss(batch_idx):
    logprobs, values = policy(queries[batch_idx])
    logprob = logprobs.gather(-1, responses[batch_idx].unsqueeze(-1)).squeeze(-1)
    advantages = returns[batch_idx] - values.detach()
    ratio = torch.exp(logprob - old_logprobs[batch_idx])
    pg_loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
    value_loss = (values - returns[batch_idx]).pow(2).mean()
    return pg_loss + 0.5 * value_loss


losses = []
for batch_idx in range(MICRO_BATCHES):
    optimizer.sync_gradients = (batch_idx + 1) % ACCUMULATION == 0
    ppo_loss = compute_loss(batch_idx)
    (ppo_loss / ACCUMULATION).backward()
    if optimizer.sync_gradients:
        torch.nn.utils.clip_grad_norm_(policy.parameters(), CLIP)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    losses.append(ppo_loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in policy.parameters()]}
