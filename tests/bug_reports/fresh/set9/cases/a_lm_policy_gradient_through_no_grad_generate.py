"""Policy-gradient fine-tuning of a small causal language model (REINFORCE on sampled
continuations): the log-probabilities of the sampled tokens are taken from the scores that
`generate()` returns. Like transformers' `generate`, the model's `generate` is decorated with
`@torch.no_grad()`, so the scores carry no graph and `loss.backward()` raises "element 0 of
tensors does not require grad and does not have a grad_fn".
Source: https://github.com/huggingface/transformers/issues/3720 ("Disable @torch.no_grad() for
model.generate()?"; the answer: back-propagating through generate() is not supported; sample with
generate() and compute the log-probabilities of the generated tokens with a forward pass that
tracks gradients, as TRL's trainers do).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=20, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids):
        hidden, _ = self.rnn(self.embed(input_ids))
        return self.lm_head(hidden)

    @torch.no_grad()
    def generate(self, input_ids, max_new_tokens):
        scores = []
        for _ in range(max_new_tokens):
            logits = self(input_ids)[:, -1]
            scores.append(logits)
            next_token = torch.multinomial(F.softmax(logits, dim=-1), 1)
            input_ids = torch.cat([input_ids, next_token], dim=1)
        return input_ids, torch.stack(scores, dim=1)


def reward_fn(sequences):
    # reward continuations that use even token ids
    return (sequences % 2 == 0).float().mean(dim=1)


model = TinyCausalLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
prompt = torch.randint(0, 20, (4, 3))
rewards_seen = []
for step in range(3):
    sequences, scores = model.generate(prompt, max_new_tokens=5)
    generated = sequences[:, prompt.shape[1]:]
    log_probs = F.log_softmax(scores, dim=-1).gather(2, generated.unsqueeze(-1)).squeeze(-1)
    rewards = reward_fn(generated)
    loss = -(log_probs.sum(dim=1) * (rewards - rewards.mean())).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    rewards_seen.append(rewards.mean())
result = {"rewards": rewards_seen, "params": [p.detach().clone() for p in model.parameters()]}
