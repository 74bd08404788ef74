"""Fine-tuning a language model with its input embedding frozen, after adding tokens
(huggingface/transformers, `resize_token_embeddings`): the resize builds a new `nn.Embedding`,
copies the old rows into it and puts it in the old one's place. The new weight is created with
`requires_grad=True`, so the embedding that was frozen before the resize trains again, and the
optimizer built from the parameters that require grad updates it. Nothing is raised.
Source: https://github.com/huggingface/transformers/pull/26865 (fixes issue #26861:
"resize_token_embeddings should keep requires_grad unchanged for all parameters in embeddings";
the merged fix copies `requires_grad` from the old embedding's weight to the new one).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, NEW_TOKENS, DIM = 10, 2, 6


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.mixer = nn.Linear(DIM, DIM)
        self.lm_head = nn.Linear(DIM, VOCAB + NEW_TOKENS)

    def forward(self, ids):
        return self.lm_head(torch.tanh(self.mixer(self.embed_tokens(ids))))


def resize_token_embeddings(model, new_size):
    old = model.embed_tokens
    new = nn.Embedding(new_size, old.embedding_dim)
    with torch.no_grad():
        new.weight[: old.num_embeddings] = old.weight
        new.weight[old.num_embeddings:] = old.weight.mean(0)
    model.embed_tokens = new
    return new


model = TinyLM()
model.embed_tokens.weight.requires_grad_(False)  # keep the pretrained embedding frozen
resize_token_embeddings(model, VOCAB + NEW_TOKENS)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)

ids = torch.randint(0, VOCAB + NEW_TOKENS, (4, 6))
losses = []
for step in range(4):
    optimizer.zero_grad()
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB + NEW_TOKENS), ids[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
