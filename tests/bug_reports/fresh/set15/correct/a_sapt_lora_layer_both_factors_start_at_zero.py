"""LoRA adapters on a frozen T5 (circle-hit/SAPT, src/t5_prompt.py `LoRALayer`): the adapter adds
`x @ A^T @ B^T * scaling` to a frozen projection. The version the reporter copied created both
factors with `torch.zeros`: the update B @ A is zero, and the gradient of each factor is the other
factor times the output's gradient, so both gradients are exactly zero at every step and the
adapter never moves. Nothing is raised, no `.grad` is None; the loss just stays where the frozen
model puts it.
Source: https://github.com/circle-hit/SAPT/issues/11 ("During Training I got the grad of LoRALayer
all zero ... both lora_A and lora_B is all zero. Things are solved after I modified the definition
of lora_A": `self.lora_A = nn.Parameter(torch.randn((in_features, r)) * std_dev)`, std_dev =
1/sqrt(r)).
expect: silent"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, RANK, CLASSES = 30, 16, 4, 3


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: int = 8):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(r))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


class TinyEncoderClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.query = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, ids):
        return self.head(torch.tanh(self.query(self.embed(ids))).mean(dim=1))


model = TinyEncoderClassifier()
model.requires_grad_(False)  # the pretrained model stays frozen; only the adapter trains
model.query = LoRALinear(model.query, RANK)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.05)
ids = torch.randint(0, VOCAB, (4, 6))
labels = torch.tensor([0, 1, 2, 1])

losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(ids), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "lora": [model.query.lora_A.detach().clone(),
                                                  model.query.lora_B.detach().clone()]}
