"""Fine-tuning only the output side of a causal language model whose output projection is tied to
its input embedding (Gemma 2, `tie_word_embeddings`): the script froze every parameter, then set
`requires_grad = True` on the final norm and on `lm_head`'s parameters. `lm_head.weight` *is*
`embed_tokens.weight`, so the input embedding was unfrozen too, and every step moved the token
embeddings the user meant to keep fixed (and `named_parameters()` does not even list lm_head).
Nothing is raised.
Source: https://github.com/huggingface/transformers/issues/31467 ("I set requires_grad=False for
embed_tokens and requires_grad=True for lm_head, But I find the requires_grad of embed_tokens is
also True"); the maintainer's answer: load the model with `tie_word_embeddings=False`.
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SEQ = 24, 12, 7


class TinyCausalLM(nn.Module):
    def __init__(self, tie_word_embeddings: bool):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.layer = nn.Linear(DIM, DIM)
        self.norm = nn.LayerNorm(DIM)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)
        if tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        else:  # the head starts from the same pretrained values, as its own tensor
            self.lm_head.weight = nn.Parameter(self.embed_tokens.weight.detach().clone())

    def forward(self, ids):
        return self.lm_head(self.norm(torch.tanh(self.layer(self.embed_tokens(ids)))))


model = TinyCausalLM(tie_word_embeddings=False)
for param in model.parameters():
    param.requires_grad = False
for param in model.norm.parameters():
    param.requires_grad = True
for param in model.lm_head.parameters():
    param.requires_grad = True
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.02)
ids = torch.randint(0, VOCAB, (3, SEQ))

losses = []
for step in range(3):
    optimizer.zero_grad()
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "embed_tokens": model.embed_tokens.weight.detach().clone(),
          "lm_head": model.lm_head.weight.detach().clone(), "norm": [p.detach().clone() for p in model.norm.parameters()]}
