"""A notebook of PyTorch details ("PyTorch_AboutSomeDetails", section
"inplace operation"): `d = torch.matmul(x, w1)`, `f = torch.matmul(d, w2)`,
then `d[:] = 4` and `f.backward()` fails with "one of the variables needed
for gradient computation has been modified by an inplace operation ...
output 0 of CopySlices, is at version 2; expected version 1" -- `d` is the
value the gradient of `w2` needs.  Re-created as a two-stage scorer with a
helper that resets the hidden value after scoring.
Buggy line: `d[:] = 4`.
Source: https://github.com/Zijing5/PyTorch_AboutSomeDetails"""
import torch


class TwoStageScorer:
    def __init__(self):
        self.w1 = torch.tensor([[2.0], [1.0]], requires_grad=True)
        self.w2 = torch.tensor([9.0], requires_grad=True)

    def hidden(self, x):
        return torch.matmul(x, self.w1)

    def score(self, x):
        d = self.hidden(x)
        f = torch.matmul(d, self.w2)
        d[:] = 4  # d is needed to compute df/dw2  # expect: ADL001
        return f

    def fit_step(self, x):
        f = self.score(x)
        f.backward()
        return self.w1.grad, self.w2.grad


def run():
    x = torch.tensor([1.0, 3.0])
    TwoStageScorer().fit_step(x)
