"""A layer with a learnable threshold: the features above `self.thres` pass, the others are
dropped, written as a mask from the comparison `features > self.thres`. A comparison is not
(usefully) differentiable, so autograd does not reach `self.thres` through it: its `.grad` stays
None, the optimizer skips it, and the threshold keeps its initial value while the rest of the model
trains; the program runs without a word. The change (the forum answer): a "soft" threshold,
`torch.sigmoid(alpha * (features - self.thres))` with a sharpness alpha (2.5 in the answer), which
gives the threshold a well-defined gradient.
Source: https://discuss.pytorch.org/t/if-a-parameter-is-trainable-in-the-following-case/149907
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ThresholdGate(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.encode = nn.Linear(in_features, out_features)
        self.thres = nn.Parameter(torch.tensor([0.5]))

    def forward(self, x):
        features = self.encode(x)
        alpha = 2.5  # sharpness of the soft step
        mask = torch.sigmoid(alpha * (features - self.thres))
        return features * mask


model = nn.Sequential(ThresholdGate(6, 12), nn.Linear(12, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x = torch.randn(64, 6)
y = x[:, :1] - 0.5 * x[:, 1:2]

losses = []
for epoch in range(30):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": torch.tensor(losses), "threshold": model[0].thres.detach().clone(),
          "params": [p.detach().clone() for p in model.parameters()]}
