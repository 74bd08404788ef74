"""DeepCTR-Torch (DeepFM on Criteo) on PyTorch >= 1.7: at construction the model registers its
regularized weights with `self.regularization_weight.append((list(weight_list), l1, l2))`. For an
`nn.Parameter` (the linear part's weight) `list(...)` iterates it, so the model keeps one row view
per row, created by `unbind` when the model was built. The first `optimizer.step()` updates the
parameter in place, and the next batch's regularization loss, computed from those stored views,
fails with "Output 0 of UnbindBackward0 is a view and its base or another view of its base has
been modified inplace. This view is the output of a function that returns multiple views. Such
functions do not allow the output views to be modified inplace" (PyTorch 1.6 returned
SelectBackward views and trained).
Source: https://github.com/shenweichen/DeepCTR-Torch/issues/130 (the answer: "When `weight_list`
is a tensor or a Parameter, `list(weight_list)` returns list of UnbindBackward tensors"; the fix
that was released: "For a Parameter, put it in a list": `if isinstance(weight_list,
torch.nn.parameter.Parameter): weight_list = [weight_list]`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DeepFM(nn.Module):
    def __init__(self, field_sizes=(10, 20, 15), embed_dim=4, l2_reg_embedding=1e-3, l2_reg_linear=1e-3):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Embedding(n, embed_dim) for n in field_sizes])
        self.linear_weight = nn.Parameter(torch.randn(len(field_sizes), 1) * 0.01)
        self.dnn = nn.Sequential(nn.Linear(len(field_sizes) * embed_dim, 16), nn.ReLU(), nn.Linear(16, 1))
        self.regularization_weight = []
        self.add_regularization_weight(self.embeddings.parameters(), l2=l2_reg_embedding)
        self.add_regularization_weight(self.linear_weight, l2=l2_reg_linear)

    def add_regularization_weight(self, weight_list, l1=0.0, l2=0.0):
        self.regularization_weight.append((list(weight_list), l1, l2))

    def get_regularization_loss(self):
        total_reg_loss = torch.zeros((1,))
        for weight_list, l1, l2 in self.regularization_weight:
            for parameter in weight_list:
                if l1 > 0:
                    total_reg_loss += torch.sum(l1 * torch.abs(parameter))
                if l2 > 0:
                    total_reg_loss += torch.sum(l2 * torch.square(parameter))
        return total_reg_loss

    def forward(self, x):
        embedded = torch.stack([emb(x[:, i]) for i, emb in enumerate(self.embeddings)], dim=1)
        fm_sum = embedded.sum(dim=1)
        fm = 0.5 * (fm_sum.pow(2) - embedded.pow(2).sum(dim=1)).sum(dim=1, keepdim=True)
        linear = x.float() @ self.linear_weight * 0.01
        return torch.sigmoid(linear + fm + self.dnn(embedded.flatten(1)))


model = DeepFM()
optim = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.stack([torch.randint(0, n, (64,)) for n in (10, 20, 15)], dim=1)
y = (x[:, 0] % 2).float()
losses = []
for epoch in range(3):
    y_pred = model(x).squeeze()
    optim.zero_grad()
    loss = F.binary_cross_entropy(y_pred, y, reduction="sum")
    reg_loss = model.get_regularization_loss()
    total_loss = loss + reg_loss
    total_loss.backward()
    optim.step()
    losses.append(total_loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
