"""Supervised contrastive fine-tuning (SCL for pre-trained language models): the loss is
`lam * contrastive_l + (1 - lam) * cross_loss`, where the contrastive term is computed in numpy on
`hiden_state.cpu().detach().numpy()`. The term is a number, not part of the graph: it changes the
printed loss but trains nothing, and the encoder learns from the cross-entropy alone.
Source: https://github.com/sl-93/SUPERVISED-CONTRASTIVE-LEARNING-FOR-PRE-TRAINED-LANGUAGE-MODEL-FINE-TUNING/issues/2
("when calculating contrastive_loss, you use detach. Can gradients be updated?"; the answer: a
port of the same function to torch operations, so that it is differentiable).
expect: silent"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
BATCH, FEATURES, HIDDEN, CLASSES = 8, 10, 6, 2


def cosine_similarity(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return a @ b.T


def contrastive_loss(temp, embedding, label):
    cosine_sim = cosine_similarity(embedding, embedding)
    dis = cosine_sim[~np.eye(cosine_sim.shape[0], dtype=bool)].reshape(cosine_sim.shape[0], -1)
    dis = np.exp(dis / temp)
    cosine_sim = np.exp(cosine_sim / temp)
    row_sum = dis.sum(axis=1)
    loss = 0
    for i in range(len(embedding)):
        n_i = label.tolist().count(label[i]) - 1
        inner_sum = 0
        for j in range(len(embedding)):
            if label[i] == label[j] and i != j:
                inner_sum = inner_sum + np.log(cosine_sim[i][j] / row_sum[i])
        if n_i != 0:
            loss += inner_sum / (-n_i)
    return loss


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.Tanh())
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        hiden_state = self.encoder(x)
        return self.head(hiden_state), hiden_state


model = Classifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()
tem, lam = 0.3, 0.9
losses = []
for step in range(3):
    b_inputs = torch.randn(BATCH, FEATURES)
    b_labels = torch.tensor([0, 1] * (BATCH // 2))
    logits, hiden_state = model(b_inputs)
    cross_loss = loss_fn(logits, b_labels)
    contrastive_l = contrastive_loss(tem, hiden_state.cpu().detach().numpy(), b_labels)
    loss = (lam * contrastive_l) + (1 - lam) * cross_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach().float())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
