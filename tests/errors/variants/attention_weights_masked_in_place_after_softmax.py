# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [2, 4, 4]], which is output 0 of Softmax, is at version 1; expected
#   version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute
#   its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD101 (catalogue: saved_tensor_modified)
# set: 11
# trigger: a self-attention module's forward zeroes the attention weights of padded keys after the
#   softmax with weights.masked_fill_(...); softmax saved its output for backward
# source: none found; the pattern as users write it (padding masks applied after softmax instead
#   of to the scores before it)
# results: losses, model
import torch
from torch import nn


class MaskedSelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.query_key = nn.Linear(dim, 2 * dim)
        self.value = nn.Linear(dim, dim)

    def forward(self, x, padded):
        query, key = self.query_key(x).chunk(2, dim=-1)
        weights = torch.softmax(query @ key.transpose(-2, -1) / self.dim ** 0.5, dim=-1)
        weights.masked_fill_(padded[:, None, :], 0.0)  # PRIMARY
        return weights @ self.value(x)


torch.manual_seed(0)
model = MaskedSelfAttention(3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 4, 3)
padded = torch.tensor([[False, False, False, True], [False, False, True, True]])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model(x, padded).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
