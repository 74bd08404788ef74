"""A forum thread, "How to define a leaf tensor in PyTorch 0.4.1": a tensor
made with `requires_grad=True` and then moved (`.cuda()`) is not a leaf:
"The ordering of requires_grad and the cuda() call matters.  After
requires_grad = True, any operation (such as x.cuda() or x * 2) is recorded
and treated as a differentiable operation."  Its `.grad` stays None and an
optimizer refuses it ("can't optimize a non-leaf Tensor").  Re-created as a
hand-written logistic model whose parameters are made with
`requires_grad=True` and then moved to the run's device and dtype.  Raises.
Buggy line: `w = torch.randn(..., requires_grad=True).to(device, dtype)`.
Source: https://discuss.pytorch.org/t/how-to-define-a-leaf-tensor-in-pytorch-0-4-1/28461"""
import torch


class LogisticModel:
    def __init__(self, n_features, device="cpu", dtype=torch.float64):
        self.w = torch.randn(n_features, 1, requires_grad=True).to(device, dtype)  # expect: ADL020
        self.b = torch.zeros(1, requires_grad=True).to(device, dtype)

    def parameters(self):
        return [self.w, self.b]

    def __call__(self, x):
        return torch.sigmoid(x @ self.w + self.b)


def fit(x, y, epochs=2):
    model = LogisticModel(x.shape[1])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return model


def run():
    torch.manual_seed(0)
    x = torch.randn(8, 3, dtype=torch.float64)
    y = (x[:, :1] > 0).double()
    fit(x, y)
