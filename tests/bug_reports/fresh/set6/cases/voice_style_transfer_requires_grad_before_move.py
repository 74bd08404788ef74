"""Voice style transfer with a random CNN: the generated spectrogram is optimized directly; it is
created from the numpy noise with `requires_grad=True` and only then moved to the device and cast
to float32, so the tensor handed to the optimizer is the result of that conversion, not a leaf.
Source: https://github.com/mazzzystar/randomCNN-voice-transfer/issues/16 ("can't optimize a
non-leaf Tensor"; maintainer: "we can not set requires_grad=True before .cuda()", fixed by setting
it after the move).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
device = torch.device("cpu")


class RandomCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, kernel_size=(3, 1), bias=False)
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        return torch.relu(self.conv(x))


def gram(features):
    f = features.flatten(2)
    return f @ f.transpose(1, 2) / f.shape[-1]


model = RandomCNN().to(device)
content = torch.from_numpy(rng.standard_normal((1, 1, 32, 20))).float().to(device)
style = torch.from_numpy(rng.standard_normal((1, 1, 32, 20))).float().to(device)
content_features, style_gram = model(content), gram(model(style))

a_noise = rng.standard_normal((1, 1, 32, 20)) * 1e-3
a_G_var = torch.tensor(a_noise, requires_grad=True).to(device).float()
optimizer = torch.optim.Adam([a_G_var], lr=0.05)
losses = []
for step in range(5):
    features = model(a_G_var)
    loss = ((features - content_features) ** 2).mean() + 10 * ((gram(features) - style_gram) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "spectrogram": a_G_var.detach().clone()}
