"""Fine-tuning OpenAI's transformer LM on a classification task (huggingface/
pytorch-openai-transformer-lm, `train.py`): the transformer and the task's classification head
(`ClfHead`) are separate modules, and the optimizer is built from `model.parameters()` only. No
error: backward() gives the head gradients, but no optimizer steps it, so the freshly initialised
head never changes while the transformer is trained to fit it. The accepted fix: the optimizer's
target contains the head's parameters as well.
Source: https://github.com/huggingface/pytorch-openai-transformer-lm/pull/6
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SEQ, CLASSES = 13, 16, 6, 3


class TransformerModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.block = nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, DIM), nn.GELU(), nn.Linear(DIM, DIM))

    def forward(self, tokens):
        h = self.embed(tokens)
        return h + self.block(h)


class ClfHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.0)
        self.linear = nn.Linear(DIM, CLASSES)

    def forward(self, h):
        return self.linear(self.dropout(h[:, -1]))


model = TransformerModel()
clf_head = ClfHead()
model_opt = torch.optim.Adam(model.parameters(), lr=1e-2)

tokens = torch.randint(0, VOCAB, (8, SEQ))
labels = torch.randint(0, CLASSES, (8,))

losses = []
for step in range(5):
    model_opt.zero_grad()
    clf_logits = clf_head(model(tokens))
    loss = F.cross_entropy(clf_logits, labels)
    loss.backward()
    model_opt.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in list(model.parameters()) + list(clf_head.parameters())]}
