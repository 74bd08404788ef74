"""DeepCTR-Torch's models register the weights they regularise with
`add_regularization_weight(self.dnn_linear.weight, l2=...)`, which stored
`list(weight_list)`: for a single `Parameter` that is the list of its rows,
views that `unbind` returns.  After the first `optim.step()` writes the
parameter in place, `get_regularization_loss()` in the next batch reads the
stale views and fails ("Output 0 of UnbindBackward0 is a view and its base
or another view of its base has been modified inplace").  The fix (v0.2.3)
wraps a `Parameter` in a list instead of iterating it.
Buggy line: `weight_list = list(weight_list)` in `add_regularization_weight`.
Expected finding: views of a parameter kept across an optimizer step (no rule
yet).
Source: https://github.com/shenweichen/DeepCTR-Torch/issues/278"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseModel(nn.Module):
    def __init__(self, in_dim=4, l2_reg_dnn=1e-3):
        super().__init__()
        self.regularization_weight = []
        self.dnn = nn.Linear(in_dim, 8)
        self.dnn_linear = nn.Linear(8, 1, bias=False)
        self.add_regularization_weight(self.dnn.parameters(), l2=l2_reg_dnn)
        self.add_regularization_weight(self.dnn_linear.weight, l2=l2_reg_dnn)

    def add_regularization_weight(self, weight_list, l1=0.0, l2=0.0):
        weight_list = list(weight_list)  # missed: none
        self.regularization_weight.append((weight_list, l1, l2))

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
        return torch.sigmoid(self.dnn_linear(F.relu(self.dnn(x))))

    def fit(self, batches, lr=0.1):
        optim = torch.optim.Adagrad(self.parameters(), lr=lr)
        for x, y in batches:
            y_pred = self(x).squeeze()
            optim.zero_grad()
            loss = F.binary_cross_entropy(y_pred, y)
            total_loss = loss + self.get_regularization_loss()
            total_loss.backward()
            optim.step()


def run():
    torch.manual_seed(0)
    model = BaseModel()
    batches = [(torch.randn(3, 4), torch.tensor([0.0, 1.0, 1.0])) for _ in range(2)]
    model.fit(batches)
