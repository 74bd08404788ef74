"""Adding new vocabulary tokens to a pretrained BERT before fine-tuning (transformers#1413): the
user grows the vocabulary (`model.resize_token_embeddings(len(tokenizer))`) and then sets the new
token's embedding row by hand, `model.embeddings.word_embeddings.weight[-1, :] =
torch.zeros([model.config.hidden_size])`. The embedding weight is a parameter (a leaf that
requires grad), and assigning into a row of it is an in-place write through a view of that leaf:
"RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place
operation." The accepted answer: initializing weights is not part of what backward should see,
so do it with gradient recording off, `with torch.no_grad(): model.embeddings.word_embeddings.
weight[-1, :] = torch.zeros([model.config.hidden_size])`, then fine-tune as before.
Source: https://github.com/huggingface/transformers/issues/1413
expect: raises"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Embeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_len=16):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_len, hidden_size)
        self.norm = nn.LayerNorm(hidden_size)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.size(1)).unsqueeze(0)
        return self.norm(self.word_embeddings(input_ids) + self.position_embeddings(positions))


class TinyBertForSequenceClassification(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config.vocab_size, config.hidden_size)
        layer = nn.TransformerEncoderLayer(config.hidden_size, nhead=2, dim_feedforward=32,
                                           dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def resize_token_embeddings(self, new_num_tokens):
        old = self.embeddings.word_embeddings
        new = nn.Embedding(new_num_tokens, old.embedding_dim)
        with torch.no_grad():
            new.weight[: old.num_embeddings] = old.weight
        self.embeddings.word_embeddings = new
        self.config.vocab_size = new_num_tokens
        return new

    def forward(self, input_ids, labels=None):
        hidden = self.encoder(self.embeddings(input_ids))
        logits = self.classifier(hidden[:, 0])
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return loss, logits


config = SimpleNamespace(vocab_size=30, hidden_size=8, num_labels=2)
model = TinyBertForSequenceClassification(config)

# the tokenizer gained one domain token; its id is the last row of the grown table
new_vocab_size = config.vocab_size + 1
model.resize_token_embeddings(new_vocab_size)
with torch.no_grad():
    model.embeddings.word_embeddings.weight[-1, :] = torch.zeros([model.config.hidden_size])
new_token_id = new_vocab_size - 1

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
input_ids = torch.randint(0, new_vocab_size - 1, (6, 10))
input_ids[:, 3] = new_token_id
labels = torch.randint(0, 2, (6,))

losses = []
model.train()
for step in range(4):
    optimizer.zero_grad()
    loss, _ = model(input_ids, labels=labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {
    "losses": torch.tensor(losses),
    "new_token_row": model.embeddings.word_embeddings.weight[-1].detach().clone(),
    "params": [p.detach().clone() for p in model.parameters()],
}
