"""RLHF fine-tuning with an RLOO-style trainer (huggingface/trl's `PPOv2Trainer` / `RLOOTrainer`):
the user wanted "the same model" as the starting policy and the KL reference, and passed one
object twice, `policy=policy_model, ref_policy=policy_model`. The reference log-probabilities are
then computed by the very model being trained, so the per-token KL penalty `logp - ref_logp` is
zero at every step and the policy drifts freely toward the reward model's optimum; nothing fails.
The reporter: "I was creating a `policy` model and passing it ... as both `policy` and
`ref_policy` ... This was a dumb mistake that just burned quite a bit of time and compute"; the
intended program keeps a separate frozen copy of the initial policy as the reference.
Source: https://github.com/huggingface/trl/issues/2046
expect: silent"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, PROMPT_LEN, GEN_LEN = 12, 16, 3, 5


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.rnn = nn.GRU(DIM, DIM, batch_first=True)
        self.lm_head = nn.Linear(DIM, VOCAB)

    def forward(self, input_ids):
        hidden, _ = self.rnn(self.embed(input_ids))
        return self.lm_head(hidden)


class RewardModel(nn.Module):
    """Rewards completions made of high token ids (a stand-in for a learned reward model)."""

    def forward(self, completions):
        return (completions.float() / (VOCAB - 1)).mean(dim=1)


def token_logprobs(model, sequences):
    logits = model(sequences[:, :-1])[:, PROMPT_LEN - 1:]
    logp = F.log_softmax(logits, dim=-1)
    return logp.gather(-1, sequences[:, PROMPT_LEN:].unsqueeze(-1)).squeeze(-1)


class RLOOTrainer:
    def __init__(self, policy, ref_policy, reward_model, kl_coef=0.5, rloo_k=4, lr=0.05):
        self.policy = policy
        self.ref_policy = ref_policy
        self.reward_model = reward_model
        self.kl_coef = kl_coef
        self.rloo_k = rloo_k
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
        self.generator = torch.Generator().manual_seed(1)

    @torch.no_grad()
    def generate(self, prompts):
        sequences = prompts.repeat_interleave(self.rloo_k, dim=0)
        for _ in range(GEN_LEN):
            probs = F.softmax(self.policy(sequences)[:, -1], dim=-1)
            next_token = torch.multinomial(probs, 1, generator=self.generator)
            sequences = torch.cat([sequences, next_token], dim=1)
        return sequences

    def step(self, prompts):
        sequences = self.generate(prompts)
        with torch.no_grad():
            ref_logprobs = token_logprobs(self.ref_policy, sequences)
            old_logprobs = token_logprobs(self.policy, sequences)
            kl = (old_logprobs - ref_logprobs).sum(dim=1)
            score = self.reward_model(sequences[:, PROMPT_LEN:])
            rlhf_reward = score - self.kl_coef * kl
            grouped = rlhf_reward.view(-1, self.rloo_k)
            baseline = (grouped.sum(dim=1, keepdim=True) - grouped) / (self.rloo_k - 1)
            advantages = (grouped - baseline).flatten()
        logprobs = token_logprobs(self.policy, sequences)
        loss = -(advantages * logprobs.sum(dim=1)).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item(), kl.mean().item(), score.mean().item()


policy_model = TinyCausalLM()
trainer = RLOOTrainer(
    policy=policy_model,
    ref_policy=copy.deepcopy(policy_model).eval().requires_grad_(False),
    reward_model=RewardModel(),
)
prompts = torch.randint(0, VOCAB, (4, PROMPT_LEN), generator=torch.Generator().manual_seed(2))

history = []
for update in range(12):
    history.append(trainer.step(prompts))

result = {
    "history": torch.tensor(history),
    "policy": [p.detach().clone() for p in policy_model.parameters()],
}
