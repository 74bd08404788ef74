"""TRL's GRPOTrainer with `num_iterations > 1`: the batch of prompts and sampled completions (and
the old per-token log-probabilities and advantages) is produced once under
`torch.inference_mode()` and buffered, and each of the following `num_iterations` optimisation
steps recomputes the policy's per-token log-probabilities on that buffered batch. The first
backward fails with "RuntimeError: Inference tensors cannot be saved for backward. To work around
you can make a clone to get a normal tensor and use it in autograd." (only with
`num_iterations > 1` in the reports). The fix: produce the buffered batch under `torch.no_grad()`
instead of `torch.inference_mode()`.
Source: https://github.com/huggingface/trl/issues/2953
(also https://github.com/huggingface/trl/issues/2983)
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, PROMPT_LEN, COMPLETION_LEN, NUM_GENERATIONS = 12, 4, 3, 4


class TinyPolicy(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.mix = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, VOCAB)

    def forward(self, input_ids):
        h = self.embed(input_ids)
        h = h + torch.tanh(self.mix(torch.cumsum(h, dim=1) / torch.arange(1, h.shape[1] + 1)[:, None]))
        return self.lm_head(self.norm(h))


def get_per_token_logps(model, input_ids, logits_to_keep):
    logits = model(input_ids)[:, -logits_to_keep - 1:-1]
    targets = input_ids[:, -logits_to_keep:]
    return torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def reward_fn(completions):
    return (completions == 3).float().sum(dim=1)


def generate_and_score(model, prompts):
    with torch.inference_mode():
        ids = prompts.repeat_interleave(NUM_GENERATIONS, dim=0)
        for _ in range(COMPLETION_LEN):
            next_logits = model(ids)[:, -1]
            ids = torch.cat([ids, torch.multinomial(next_logits.softmax(-1), 1)], dim=1)
        old_logps = get_per_token_logps(model, ids, COMPLETION_LEN)
        rewards = reward_fn(ids[:, PROMPT_LEN:]).view(-1, NUM_GENERATIONS)
        advantages = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)).view(-1)
    return {"input_ids": ids, "old_per_token_logps": old_logps, "advantages": advantages}


model = TinyPolicy()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
num_iterations, epsilon = 2, 0.2
losses = []
for step in range(2):
    prompts = torch.randint(0, VOCAB, (2, PROMPT_LEN))
    batch = generate_and_score(model, prompts)
    for _ in range(num_iterations):
        logps = get_per_token_logps(model, batch["input_ids"], COMPLETION_LEN)
        ratio = torch.exp(logps - batch["old_per_token_logps"])
        clipped = torch.clamp(ratio, 1 - epsilon, 1 + epsilon)
        adv = batch["advantages"].unsqueeze(1)
        loss = -torch.min(ratio * adv, clipped * adv).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
