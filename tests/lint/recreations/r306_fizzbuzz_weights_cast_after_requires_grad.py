"""A book's "numpy-like" FizzBuzz network creates its weights with
`torch.randn(..., requires_grad=True).type(dtype)`, where `dtype` names the
tensor type to train in (`torch.cuda.FloatTensor` when a GPU is present;
this re-creation trains in double precision, which copies the same way on
the CPU).  `.type()` returns a copy, so `w1`, `w2`, `b1`, `b2` are results of
an op, not leaves: `loss.backward()` never fills their `.grad`, and the
hand-written update `w1 -= lr * w1.grad` fails on `None`.  The fix creates
the tensors with `dtype=`/`device=` and `requires_grad=True` in one call.
Buggy line: `w1 = torch.randn(input_size, hidden_size, requires_grad=True).type(dtype)`.
Expected finding: ADL020 at each `.grad` read of the update, where the rule
reports (its related location is the binding).
Source: https://github.com/hhsecond/HandsOnDeepLearningWithPytorch/issues/2"""
import torch

dtype = torch.DoubleTensor


def binary_encoder(n, input_size=10):
    return [n >> d & 1 for d in range(input_size)]


def train(epochs=2, lr=0.01, input_size=10, hidden_size=16, output_size=4):
    x = torch.tensor([binary_encoder(i, input_size) for i in range(1, 9)]).type(dtype)
    y = torch.tensor([[1, 0, 0, 0]] * 8).type(dtype)
    w1 = torch.randn(input_size, hidden_size, requires_grad=True).type(dtype)
    w2 = torch.randn(hidden_size, output_size, requires_grad=True).type(dtype)
    b1 = torch.zeros(1, hidden_size, requires_grad=True).type(dtype)
    b2 = torch.zeros(1, output_size, requires_grad=True).type(dtype)
    for _ in range(epochs):
        a2 = x.matmul(w1).add(b1).sigmoid()
        hyp = a2.matmul(w2).add(b2)
        loss = (hyp - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad  # expect: ADL020
            w2 -= lr * w2.grad  # expect: ADL020
            b1 -= lr * b1.grad  # expect: ADL020
            b2 -= lr * b2.grad  # expect: ADL020
        w1.grad.zero_()
        w2.grad.zero_()
        b1.grad.zero_()
        b2.grad.zero_()


def run():
    torch.manual_seed(0)
    train()
