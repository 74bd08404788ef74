# message: can't retain_grad on Tensor that has requires_grad=False
# code: AD116 (catalogue: retain_grad_no_grad)
# set: 8
# trigger: the pretrained embedding is frozen (weight.requires_grad_(False)) while the head trains;
#   a saliency map calls retain_grad() on the embedding's output, which nothing makes require grad
# source: none found; the pattern as users write it (retain_grad on embeddings for saliency)
# results: saliency, model
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, embedded):
        return self.head(torch.tanh(embedded))


torch.manual_seed(0)
model = Tagger()
model.embed.weight.requires_grad_(False)
tokens = torch.tensor([[2, 5, 7, 1]])
embedded = model.embed(tokens)
embedded.requires_grad_()  # PRIMARY
model(embedded)[..., 0].sum().backward()
saliency = embedded.grad.norm(dim=-1)
