# message: Attempting to unscale FP16 gradients.
# code: AD151 (catalogue: amp_float16_parameters)
# set: 28
# trigger: a text classifier starts from pretrained word vectors that a loader in another file returns
#   in float16; nn.Embedding.from_pretrained(vectors, freeze=False) keeps their dtype, so one trained
#   table is float16 in a float32 model; unscale_() before clipping under GradScaler refuses its gradient
# source: after pytorch/pytorch#74739 (GradScaler refusing "just 1 module of fp16 in the fp32 model")
# helpers: lib_vectors28.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_vectors28 import load_word_vectors  # noqa: E402


class BagClassifier(nn.Module):
    def __init__(self, vectors, classes=3):
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(vectors.float(), freeze=False)  # PRIMARY
        self.head = nn.Linear(vectors.shape[1], classes)

    def forward(self, tokens):
        return self.head(self.embed(tokens).float().mean(1))


torch.manual_seed(0)
model = BagClassifier(load_word_vectors(30, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8)
losses = []
for _ in range(3):
    tokens, labels = torch.randint(0, 30, (6, 5)), torch.randint(0, 3, (6,))
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens), labels)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
