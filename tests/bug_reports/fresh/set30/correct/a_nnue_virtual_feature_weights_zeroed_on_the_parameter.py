"""Stockfish's nnue-pytorch trainer: the input layer covers the real HalfKP features and, after
them, "virtual" (factorizer) features whose weights must start at zero. `NNUE.__init__` calls
`_zero_virtual_feature_weights`, which takes `weights = self.input.weight`, writes
`weights[:, a:b] = 0.0` for each virtual range and re-wraps `self.input.weight =
nn.Parameter(weights)`. The weight is a leaf that requires grad, so on current PyTorch building
the model fails with "a view of a leaf Variable that requires grad is being used in an in-place
operation". The fix (PR 75): do the writes under `with torch.no_grad():`.
Source: https://github.com/official-stockfish/nnue-pytorch/pull/75
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeatureSet:
    """40 real features followed by two blocks of virtual (factorized) ones."""
    num_real_features = 40
    num_features = 56

    def get_virtual_feature_ranges(self):
        return [(40, 48), (48, 56)]


class NNUE(nn.Module):
    def __init__(self, feature_set, L1=16, L2=8, L3=8):
        super().__init__()
        self.feature_set = feature_set
        self.input = nn.Linear(feature_set.num_features, L1)
        self.l1 = nn.Linear(2 * L1, L2)
        self.l2 = nn.Linear(L2, L3)
        self.output = nn.Linear(L3, 1)
        self._zero_virtual_feature_weights()

    def _zero_virtual_feature_weights(self):
        weights = self.input.weight
        with torch.no_grad():
            for a, b in self.feature_set.get_virtual_feature_ranges():
                weights[:, a:b] = 0.0
        self.input.weight = nn.Parameter(weights)

    def forward(self, us, them, w_in, b_in):
        w = self.input(w_in)
        b = self.input(b_in)
        l0_ = (us * torch.cat([w, b], dim=1)) + (them * torch.cat([b, w], dim=1))
        l0_ = torch.clamp(l0_, 0.0, 1.0)
        l1_ = torch.clamp(self.l1(l0_), 0.0, 1.0)
        l2_ = torch.clamp(self.l2(l1_), 0.0, 1.0)
        return self.output(l2_)


model = NNUE(FeatureSet())
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
losses = []
for step in range(4):
    us = (torch.rand(16, 1) > 0.5).float()
    them = 1.0 - us
    w_in = (torch.rand(16, 56) > 0.8).float()
    b_in = (torch.rand(16, 56) > 0.8).float()
    score = torch.randn(16, 1) * 300
    q = model(us, them, w_in, b_in)
    loss = F.mse_loss(torch.sigmoid(q * 600 / 361), torch.sigmoid(score / 361))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
