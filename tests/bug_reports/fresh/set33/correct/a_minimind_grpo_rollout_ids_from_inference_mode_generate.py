"""MiniMind (jingyaogong/minimind), trainer/train_grpo.py with trainer/rollout_engine.py: the rollout
engine samples completions with the policy's own `generate`, which model_minimind.py decorates
with `@torch.inference_mode()`, so the returned `output_ids` are inference tensors. The GRPO step
then runs the policy on them with grad on (`res = model_unwrapped(outputs, ...)`) and gathers the
log-probabilities of the sampled tokens (`.gather(2, outputs[:, 1:].unsqueeze(-1))`); on 4 GPUs it
failed with "Inference tensors cannot be saved for backward. ... or use `torch.no_grad()` instead
of `torch.inference_mode()`". The reporter cloned `outputs` at the two uses in the training
script; the maintainer's fix (commit bdee223, "the root cause, not a downstream patch") clones
once where the rollout is made: `output_ids = model.generate(...).clone()`.
Source: https://github.com/jingyaogong/minimind/issues/754
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM = 12, 16


class MiniMindForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.block = nn.Sequential(nn.Linear(DIM, DIM), nn.Tanh())
        self.lm_head = nn.Linear(DIM, VOCAB)

    def forward(self, input_ids, attention_mask=None):
        h = self.embed_tokens(input_ids)
        h = self.block(h.cumsum(1) / torch.arange(1, input_ids.size(1) + 1).view(1, -1, 1))
        return self.lm_head(h)

    @torch.inference_mode()
    def generate(self, input_ids, max_new_tokens, temperature=1.0):
        for _ in range(max_new_tokens):
            logits = self(input_ids)[:, -1, :] / temperature
            next_token = torch.multinomial(F.softmax(logits, dim=-1), 1)
            input_ids = torch.cat([input_ids, next_token], dim=1)
        return input_ids


def compute_per_token_logps(model, input_ids, n_keep):
    logits = model(input_ids)[:, :-1, :]
    logps = F.log_softmax(logits, dim=-1).gather(2, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return logps[:, -n_keep:]


class TorchRolloutEngine:
    def __init__(self, policy_model):
        self.policy_model = policy_model

    def rollout(self, prompt_ids, num_generations, max_new_tokens, temperature=0.8):
        model = self.policy_model
        with torch.no_grad():
            output_ids = model.generate(
                prompt_ids.repeat_interleave(num_generations, dim=0),
                max_new_tokens=max_new_tokens,
                temperature=temperature,
            ).clone()  # [B*num_gen, P+R]
            prompt_len = prompt_ids.size(1)
            completion_ids = output_ids[:, prompt_len:]  # [B*num_gen, R]
            per_token_logps = compute_per_token_logps(model, output_ids, completion_ids.size(1))
        return output_ids, completion_ids, per_token_logps


def calculate_rewards(completion_ids):
    # rule reward: how often the answer uses token 3, minus a length-independent offset
    return (completion_ids == 3).float().mean(dim=1) - 0.1


model = MiniMindForCausalLM()
rollout_engine = TorchRolloutEngine(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
num_generations, beta = 4, 0.0

losses = []
for step in range(3):
    prompt_ids = torch.randint(0, VOCAB, (2, 3))
    outputs, completion_ids, old_per_token_logps = rollout_engine.rollout(prompt_ids, num_generations, max_new_tokens=5)
    rewards = calculate_rewards(completion_ids)

    res = model(outputs)
    per_token_logps = F.log_softmax(res[:, :-1, :], dim=-1).gather(2, outputs[:, 1:].unsqueeze(-1)).squeeze(-1)
    per_token_logps = per_token_logps[:, -completion_ids.size(1):]

    grouped_rewards = rewards.view(-1, num_generations)
    mean_r = grouped_rewards.mean(dim=1).repeat_interleave(num_generations)
    std_r = grouped_rewards.std(dim=1, unbiased=False).repeat_interleave(num_generations)
    advantages = (rewards - mean_r) / (std_r + 1e-4)

    ratio = torch.exp(per_token_logps - old_per_token_logps.detach())
    loss = -(ratio * advantages.unsqueeze(1)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
