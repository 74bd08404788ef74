# message: you can only change requires_grad flags of leaf variables.
# code: AD115 (catalogue: requires_grad_non_leaf)
# trigger: to stop gradients into the encoder, a model's forward sets `h.requires_grad = False`
#   on the encoder's output (an attribute assignment, not requires_grad_())
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.encoder(x)
        h = h.detach()  # PRIMARY
        return self.head(h)


torch.manual_seed(0)
model = Model()
loss = model(torch.randn(5, 4)).pow(2).mean()
loss.backward()
