# message: Cannot insert a Tensor that requires grad as a constant. Consider making it a parameter or
#   input, or detaching the gradient
# code: AD143 (catalogue: trace_constant_requires_grad)
# set: 16
# trigger: a tied-weights autoencoder caches the decoder weight as self.encoder.weight.t().contiguous() in __init__
#   (a tensor computed from a parameter, which requires grad); the model is exported with
#   torch.jit.trace
# source: none found; the pattern as users write it (a transposed weight cached once for speed)
# results: out
import torch
from torch import nn


class TiedAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 3, bias=False)
        self.decoder_weight = self.encoder.weight.t().contiguous()  # PRIMARY

    def forward(self, x):
        return nn.functional.linear(torch.sigmoid(self.encoder(x)), self.decoder_weight)


torch.manual_seed(0)
model = TiedAutoencoder()
example = torch.randn(2, 6)
traced = torch.jit.trace(model, example)
out = traced(torch.randn(4, 6))
