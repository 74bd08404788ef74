"""Full fine-tuning of a causal language model after adding new tokens (unsloth-zoo's
`add_new_tokens`): the helper is decorated with `@torch.inference_mode()`, so the resized
embedding and output layers it builds hold inference tensors; the first training step saves the
new `lm_head` weight for backward and fails.
Source: https://github.com/unslothai/unsloth-zoo/pull/137 ("Fix 'Inference tensors cannot be saved
for backward' when using add_new_tokens": the decorator is removed and only the part that must not
be tracked runs under `torch.no_grad()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, NEW = 10, 8, 3


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU())
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        h = self.embed_tokens(ids)
        return self.lm_head(h + self.mlp(h))


@torch.inference_mode()
def add_new_tokens(model, num_new_tokens):
    # New rows drawn around the old embeddings' mean, with their spread (mean resizing).
    old_embed, old_head = model.embed_tokens.weight, model.lm_head.weight
    old_vocab = old_embed.shape[0]
    embed = nn.Embedding(old_vocab + num_new_tokens, DIM)
    head = nn.Linear(DIM, old_vocab + num_new_tokens, bias=False)
    embed.weight[:old_vocab] = old_embed
    embed.weight[old_vocab:] = old_embed.mean(0) + torch.randn(num_new_tokens, DIM) * old_embed.std(0)
    head.weight[:old_vocab] = old_head
    head.weight[old_vocab:] = old_head.mean(0)
    model.embed_tokens, model.lm_head = embed, head


model = TinyCausalLM()
add_new_tokens(model, NEW)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
data = torch.randint(0, VOCAB + NEW, (4, 9))
losses = []
for step in range(3):
    logits = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB + NEW), data[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
