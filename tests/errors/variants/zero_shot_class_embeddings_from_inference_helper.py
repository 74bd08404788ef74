# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved)
# set: 8
# helpers: lib_text.py
# trigger: a CLIP-like linear probe: a helper in another file embeds the class names with the frozen
#   text encoder under torch.inference_mode(); the trained image projection is multiplied by those
#   embeddings (matmul saves them for the projection's gradient)
# source: none found; the pattern as users write it (zero-shot heads built once, then fine-tuned)
# results: losses, projection
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_text import class_embeddings  # noqa: E402

torch.manual_seed(0)
text_encoder = nn.Embedding(20, 4).requires_grad_(False)
projection = nn.Linear(6, 4)
classes = class_embeddings(text_encoder, torch.tensor([[1, 2], [3, 4], [5, 6]]))
optimizer = torch.optim.SGD(projection.parameters(), lr=0.1)
images, labels = torch.randn(5, 6), torch.tensor([0, 1, 2, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    logits = F.normalize(projection(images), dim=-1) @ classes.t() / 0.1
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
