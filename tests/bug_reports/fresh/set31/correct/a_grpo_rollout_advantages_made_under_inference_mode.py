"""GRPO fine-tuning of a small causal LM: the trainer samples completions, scores them and
normalises the rewards into group advantages inside `torch.inference_mode()` (the generation
path), then reuses those tensors in the policy-gradient loss. The loss multiplies the probability
ratio by the advantages, which autograd must save for backward, and the step fails with
"Inference tensors cannot be saved for backward. To work around you can make a clone to get a
normal tensor and use it in autograd." The fix PyTorch's maintainers point to (pytorch#161164's
review) is to run the rollout under `torch.no_grad()` instead of `torch.inference_mode()`.
Source: https://github.com/unslothai/unsloth/issues/2434
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, PROMPT_LEN, COMPLETION_LEN, GROUP = 12, 4, 5, 4


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=VOCAB, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.lm_head(h)


def reward_fn(completions):
    """Rewards completions that use even tokens and end on token 0."""
    return (completions % 2 == 0).float().mean(-1) + (completions[:, -1] == 0).float()


def sample(model, prompts):
    ids = prompts
    for _ in range(COMPLETION_LEN):
        probs = model(ids)[:, -1].softmax(-1)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def completion_logps(model, ids):
    logits = model(ids[:, :-1])[:, PROMPT_LEN - 1:]
    return torch.gather(logits.log_softmax(-1), 2, ids[:, PROMPT_LEN:, None]).squeeze(-1)


class GRPOTrainer:
    def __init__(self, model, lr=5e-3, clip=0.2):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.clip = clip

    def rollout(self, prompt):
        prompts = prompt.repeat(GROUP, 1)
        with torch.no_grad():
            ids = sample(self.model, prompts)
            old_logps = completion_logps(self.model, ids)
            rewards = reward_fn(ids[:, PROMPT_LEN:])
            advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
        return ids, old_logps, advantages

    def step(self, prompt):
        ids, old_logps, advantages = self.rollout(prompt)
        new_logps = completion_logps(self.model, ids)
        ratio = torch.exp(new_logps - old_logps)
        clipped = torch.clamp(ratio, 1 - self.clip, 1 + self.clip)
        per_token = -torch.min(ratio * advantages[:, None], clipped * advantages[:, None])
        loss = per_token.mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()


model = TinyCausalLM()
trainer = GRPOTrainer(model)
losses = []
for step in range(3):
    torch.manual_seed(100 + step)
    prompt = torch.randint(0, VOCAB, (1, PROMPT_LEN))
    losses.append(trainer.step(prompt))
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
