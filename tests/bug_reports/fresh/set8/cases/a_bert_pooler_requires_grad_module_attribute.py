"""Sentence classification on top of a pre-trained BERT-style encoder, with allennlp's
`BertPooler(requires_grad=False)` to keep the pooler frozen: the pooler sets
`self.pooler.requires_grad = requires_grad`, an attribute on the module, which freezes nothing.
The trainer gives the optimizer every parameter that requires grad, so the "frozen" pooler is
trained (no error).
Source: https://github.com/allenai/allennlp/issues/2927 ("`trainable` and `requires_grad` have no
effect in `BertForClassification` and `BertPooler`"; fixed in allennlp#2932 by looping over the
pooler's parameters and setting `requires_grad` on each).
expect: silent"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, CLASSES = 30, 16, 3


class PretrainedBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(VOCAB, DIM)
        self.encoder = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU(), nn.Linear(DIM, DIM))
        self.pooler = nn.Sequential(nn.Linear(DIM, DIM), nn.Tanh())


class BertPooler(nn.Module):
    def __init__(self, pretrained_model, requires_grad=True, dropout=0.0):
        super().__init__()
        self.pooler = copy.deepcopy(pretrained_model.pooler)
        self.pooler.requires_grad = requires_grad
        self._dropout = nn.Dropout(p=dropout)

    def forward(self, tokens):
        return self._dropout(self.pooler(tokens[:, 0]))


class Classifier(nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert
        self.seq2vec = BertPooler(bert, requires_grad=False)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, ids):
        tokens = self.bert.encoder(self.bert.embeddings(ids))
        return self.head(self.seq2vec(tokens))


model = Classifier(PretrainedBert())
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
ids = torch.randint(0, VOCAB, (8, 5))
labels = torch.randint(0, CLASSES, (8,))
losses = []
for step in range(3):
    loss = F.cross_entropy(model(ids), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
