"""vector-quantize-pytorch's `EuclideanCodebook` with a learnable codebook and
`affine_param=True` keeps running statistics of the codebook and of the batch
as buffers, updated in every training forward by `update_with_decay`, which
re-registered `old_value * decay + new_value * (1 - decay)`.  The new value is
computed from the learnable codebook (a `Parameter`) and from the input, so
each buffer keeps a graph that chains every earlier step's; the forward uses
the buffers to rescale the codebook, so the next step's backward pass reaches
the previous step's freed graph.  The reporter saw the graph kept alive until
out of memory; the fix (#57) detaches the new value before registering it.
Buggy line: `value = old_value * decay + new_value * (1 - decay)` in
`update_with_decay`.
Expected finding: ADL017 (a graph tensor kept on a module) at the
`register_buffer`, or ADL019 at the backward.
Source: https://github.com/lucidrains/vector-quantize-pytorch/pull/57"""
import torch
import torch.nn as nn


class EuclideanCodebook(nn.Module):
    def __init__(self, dim=3, codebook_size=4, decay=0.9):
        super().__init__()
        self.embed = nn.Parameter(torch.randn(codebook_size, dim))
        self.decay = decay
        self.register_buffer("codebook_mean", None)
        self.register_buffer("batch_mean", None)

    def update_with_decay(self, buffer_name, new_value, decay):
        old_value = getattr(self, buffer_name)
        if old_value is None:
            self.register_buffer(buffer_name, new_value)
            return
        value = old_value * decay + new_value * (1 - decay)
        self.register_buffer(buffer_name, value)  # missed: ADL017

    def update_affine(self, data, embed):
        self.update_with_decay("codebook_mean", embed.mean(0, keepdim=True), self.decay)
        self.update_with_decay("batch_mean", data.mean(0, keepdim=True), self.decay)

    def forward(self, x):
        embed = self.embed
        if self.training:
            self.update_affine(x, embed)
            embed = (embed - self.codebook_mean) + self.batch_mean
        dist = torch.cdist(x, embed)
        ind = dist.argmin(dim=-1)
        quantize = embed[ind]
        return quantize, (quantize - x).pow(2).mean()


def run():
    torch.manual_seed(0)
    encoder = nn.Linear(5, 3)
    codebook = EuclideanCodebook()
    optimizer = torch.optim.Adam(list(encoder.parameters()) + list(codebook.parameters()), lr=1e-2)
    for _ in range(3):
        x = encoder(torch.randn(8, 5))
        _, loss = codebook(x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
