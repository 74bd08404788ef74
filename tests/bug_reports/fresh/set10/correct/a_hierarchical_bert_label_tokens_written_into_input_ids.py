"""Hierarchical multi-label text classification with BERT run twice (a blog post on a "variable
version number" backward error): the first pass predicts the level-1 label, whose embedding is then
written into the last three positions of the same input tensors, `context[:, -3:] = extra` and
`mask[:, -3:] = 1`, before the second pass predicts the level-2 label. The first pass's embedding
lookup and attention masking saved `context` and `mask` for backward; the in-place writes change
them, and `loss.backward()` raises "one of the variables needed for gradient computation has been
modified by an inplace operation" (a LongTensor at version 1, expected 0).
Source: https://www.codetd.com/en/article/17161119 ("[Backward solution and principle] There is a
variable version number mechanism error in the network model during gradient update": "because the
values of context and mask have been modified once in the middle"; the correct version writes the
label tokens into copies of the inputs, so the first pass keeps the values it saved).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, N_A, N_B = 30, 16, 5, 7


class TinyBert(nn.Module):
    """Token embedding, one masked mixing layer and a tanh pooler: what the classifier uses of BERT."""

    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(VOCAB, DIM)
        self.layer = nn.Linear(DIM, DIM)
        self.pooler = nn.Linear(DIM, DIM)

    def forward(self, input_ids, attention_mask):
        hidden = torch.relu(self.layer(self.embeddings(input_ids)))
        weights = attention_mask.unsqueeze(-1).float()
        pooled = (hidden * weights).sum(1) / weights.sum(1)
        return hidden, torch.tanh(self.pooler(pooled))


class HierarchicalClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = TinyBert()
        self.fc1 = nn.Linear(DIM, N_A)
        self.fc2 = nn.Linear(DIM, N_B)

    def forward(self, x, label_A_emb):
        context = x[0]   # token ids
        mask = x[2]      # attention mask
        d1 = self.bert(context, attention_mask=mask)
        context, mask = context.clone(), mask.clone()
        logit1 = self.fc1(d1[1])
        idx = torch.max(logit1.data, 1)[1]
        extra = label_A_emb[idx]              # the level-1 label written as three tokens
        context[:, -3:] = extra
        mask[:, -3:] = 1
        d2 = self.bert(context, attention_mask=mask)
        logit2 = self.fc2(d2[1])
        return logit1, logit2


model = HierarchicalClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
label_A_emb = torch.randint(0, VOCAB, (N_A, 3))   # token ids that spell each level-1 label

losses = []
for step in range(3):
    token_ids = torch.randint(0, VOCAB, (4, 10))
    segment_ids = torch.zeros(4, 10, dtype=torch.long)
    attention_mask = torch.ones(4, 10, dtype=torch.long)
    attention_mask[:, 7:] = 0                     # padding, later taken by the label tokens
    label_A, label_B = torch.randint(0, N_A, (4,)), torch.randint(0, N_B, (4,))
    logit1, logit2 = model((token_ids, segment_ids, attention_mask), label_A_emb)
    loss = F.cross_entropy(logit1, label_A) + F.cross_entropy(logit2, label_B)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
