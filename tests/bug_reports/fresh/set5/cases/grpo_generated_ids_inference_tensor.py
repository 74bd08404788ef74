"""GRPO fine-tuning of a language model: completions are sampled under `torch.inference_mode()`
(fast generation), and the sampled token ids are then fed to the policy for the training forward;
the embedding lookup saves its index tensor for backward, and an inference tensor cannot be saved.
Source: https://github.com/unslothai/unsloth/issues/2434 ("GRPO Qwen3 Failed: Inference tensors
cannot be saved for backward. To work around you can make a clone to get a normal tensor and use
it in autograd.").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab, dim = 20, 16
policy = nn.Sequential(nn.Embedding(vocab, dim), nn.Linear(dim, vocab))
optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-3)
prompts = torch.randint(0, vocab, (4, 3))


def sample_completions(prompt_ids, length=4):
    with torch.inference_mode():
        ids = prompt_ids
        for _ in range(length):
            logits = policy(ids)[:, -1]
            ids = torch.cat([ids, torch.multinomial(F.softmax(logits, -1), 1)], dim=1)
    return ids


losses = []
for step in range(2):
    ids = sample_completions(prompts)
    rewards = (ids[:, 3:] % 2 == 0).float().mean(1)
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
    logps = F.log_softmax(policy(ids[:, :-1]), -1).gather(2, ids[:, 1:, None]).squeeze(2)[:, 2:]
    loss = -(advantages[:, None] * logps).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in policy.parameters()]}
