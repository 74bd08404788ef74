"""Fine-tuning a BERT-style model whose word embedding was split into shards for pipelining
(huggingface/optimum-graphcore, `modeling_utils.py`'s `SerializedEmbedding.deserialize`): to run
the model unsharded again, the shards are stacked back into one layer with
`nn.Embedding.from_pretrained(torch.vstack([...]), padding_idx=0)`. `from_pretrained` freezes the
weight by default (`freeze=True`), so after `deparallelize()` the word embeddings no longer train.
No error: the optimizer holds only the parameters that require grad and the rest of the model
trains. The merged fix passes `freeze=False` (the caller chooses).
Source: https://github.com/huggingface/optimum-graphcore/pull/304
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SPLITS, CLASSES = 12, 8, 3, 2


class SerializedEmbedding(nn.Module):
    def __init__(self, embedding, splits):
        super().__init__()
        rows = embedding.num_embeddings // splits
        self.split_embeddings = nn.ModuleList(
            nn.Embedding.from_pretrained(embedding.weight[i * rows:(i + 1) * rows].detach().clone(), freeze=False)
            for i in range(splits))

    def deserialize(self):
        return nn.Embedding.from_pretrained(torch.vstack([l.weight for l in self.split_embeddings]), padding_idx=0, freeze=False)


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, DIM, padding_idx=0)
        self.encoder = nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, DIM), nn.GELU())
        self.classifier = nn.Linear(DIM, CLASSES)

    def parallelize(self):
        self.word_embeddings = SerializedEmbedding(self.word_embeddings, SPLITS)

    def deparallelize(self):
        self.word_embeddings = self.word_embeddings.deserialize()

    def forward(self, input_ids):
        h = self.encoder(self.word_embeddings(input_ids))
        return self.classifier(h.mean(dim=1))


model = TinyBert()
model.parallelize()
model.deparallelize()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2, weight_decay=0.0)

input_ids = torch.randint(1, VOCAB, (6, 5))
labels = torch.randint(0, CLASSES, (6,))

losses = []
for step in range(5):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(input_ids), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
