"""Multimodal brain-tumour MRI pretraining with missing-modality completion (masked autoencoder):
the modalities pass through a custom autograd Function that returns its input as-is (a view), and
the model then fills the masked patches of each modality in place (`x[l] = x[l] * mask + ...`);
PyTorch forbids in-place writes to a view made inside a custom Function.
Source: https://github.com/ccarliu/m3ae/issues/15 ("A view was created in no_grad mode and is being
modified inplace with grad mode enabled. This view was created inside a custom Function (or because
an input was returned as-is) ...", raised at `x[l] = x[l] * mask + self.limage[...] * (1-mask)`).
expect: raises"""
import torch
import torch.nn as nn


class ScaleGrad(torch.autograd.Function):
    """Identity in forward; scales the gradient of the shared encoder input in backward."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return 0.5 * grad


class CompletionNet(nn.Module):
    def __init__(self, modalities=4, size=16):
        super().__init__()
        self.stem = nn.Linear(size, size)
        self.limage = nn.Parameter(torch.zeros(modalities, size))
        self.decoder = nn.Linear(modalities * size, modalities * size)

    def forward(self, inputs, masks):
        x = ScaleGrad.apply(self.stem(inputs))
        for l in range(x.shape[0]):
            x[l] = x[l] * masks[l] + self.limage[l] * (1 - masks[l])
        return self.decoder(x.reshape(-1)).reshape(inputs.shape)


torch.manual_seed(0)
model = CompletionNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
volumes = torch.randn(3, 4, 16)
losses = []
for inputs in volumes:
    masks = (torch.rand(4, 16) > 0.3).float()
    loss = ((model(inputs, masks) - inputs) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in model.parameters()]}
