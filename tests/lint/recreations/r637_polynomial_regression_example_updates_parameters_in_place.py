"""A pull request to the PyTorch examples repository fixes its polynomial
regression example, whose update `param.add_(-0.1 * param.grad)` over
`fc.parameters()` fails since PyTorch 1.5 with "a leaf Variable that
requires grad is being used in an in-place operation" (the reviewer of the
word-language-model fix asked for the same line of `regression/main.py` to be
fixed).  Re-created as the example's script shape: `make_features`, a target
polynomial `f`, `get_batch`, a `nn.Linear` model and a loop that resets
gradients, backpropagates the smooth L1 loss and applies the gradient by
hand, with gradients on.  Raises at the first update.
Buggy line: `param.add_(-0.1 * param.grad)` (in-place write to a parameter
outside `torch.no_grad()`).
Source: https://github.com/pytorch/examples/pull/781"""
import torch
import torch.nn.functional as F

POLY_DEGREE = 4


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x, w_target, b_target):
    return x.mm(w_target) + b_target.item()


def get_batch(w_target, b_target, batch_size=32):
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x, w_target, b_target)
    return x, y


def run():
    torch.manual_seed(0)
    w_target = torch.randn(POLY_DEGREE, 1) * 5
    b_target = torch.randn(1) * 5
    fc = torch.nn.Linear(w_target.size(0), 1)
    for batch_idx in range(1, 4):
        batch_x, batch_y = get_batch(w_target, b_target)
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.add_(-0.1 * param.grad)  # expect: ADL014
        if loss < 1e-3:
            break
