"""SparseLLM's layer-wise solver updates a chunk of the sparse activations by
gradient descent on a leaf: `s_batch -= s_learning_rate * s_batch.grad` after
`loss_s.backward()`, outside `no_grad()` ("a leaf Variable that requires grad
is being used in an in-place operation").
Source: https://github.com/BaiTheBest/SparseLLM/issues/13"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)

    def forward(self, x):
        return self.fc(x)


def update_s(s, W, z_target, chunk_size=4, s_learning_rate=0.01, iters=2):
    for start in range(0, s.shape[1], chunk_size):
        chunk = slice(start, start + chunk_size)
        s_batch = s[:, chunk].clone().float().requires_grad_(True)
        for _ in range(iters):
            pred = F.linear(s_batch, W[:, chunk])
            loss_s = F.mse_loss(pred, z_target)
            loss_s.backward()
            s_batch -= s_learning_rate * s_batch.grad  # missed: ADL014
            s_batch.grad.zero_()
        s[:, chunk] = s_batch.detach().to(dtype=s.dtype)
    return s


def run():
    torch.manual_seed(0)
    layer = DenseLayer(8, 6)
    s = torch.randn(5, 8)
    z_target = torch.randn(5, 6)
    update_s(s, layer.fc.weight.detach(), z_target)
