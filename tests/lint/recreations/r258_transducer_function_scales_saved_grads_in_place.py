"""k2's RNN-T losses are built on a custom autograd `Function` (the mutual
information recursion) that computes the gradients of its inputs already
in `forward` and saves them with `ctx.save_for_backward(px_grad, py_grad)`.
Its `backward` scales the saved gradients by the incoming gradient in
place, `px_grad.mul_(ans_grad...)`, and returns them.  Training with two
optimizers calls `loss.backward(retain_graph=True)` and later backpropagates
the same loss again; the second backward unpacks saved tensors the first
one modified ("one of the variables needed for gradient computation has
been modified by an inplace operation").  The fix multiplies out of place.
Buggy lines: `px_grad.mul_(...)` and `py_grad.mul_(...)` in
`MutualInformationRecursionFunction.backward`.
Expected finding: ADL001 at each.
Source: https://github.com/k2-fsa/k2/pull/1106"""
import torch
import torch.nn as nn


class MutualInformationRecursionFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, px, py):
        scores = px + py
        ans = torch.logsumexp(scores.flatten(1), dim=1)
        px_grad = torch.softmax(scores.flatten(1), dim=1).view_as(px)
        py_grad = px_grad.clone()
        ctx.save_for_backward(px_grad, py_grad)
        return ans

    @staticmethod
    def backward(ctx, ans_grad):
        (px_grad, py_grad) = ctx.saved_tensors
        px_grad.mul_(ans_grad.reshape(-1, 1, 1))  # the failing write (ADL001 missed, see docs/lint.md)
        py_grad.mul_(ans_grad.reshape(-1, 1, 1))  # the failing write (ADL001 missed, see docs/lint.md)
        return px_grad, py_grad


def rnnt_loss(encoder_out, predictor_out):
    joint = encoder_out.unsqueeze(2) + predictor_out.unsqueeze(1)
    px = joint.sum(-1)
    py = joint.mean(-1)
    return -MutualInformationRecursionFunction.apply(px, py).mean()


class Transducer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(5, 4)
        self.predictor = nn.Linear(3, 4)

    def forward(self, feats, tokens):
        return rnnt_loss(self.encoder(feats), self.predictor(tokens))


def train_step(model, enc_opt, pred_opt, feats, tokens):
    loss = model(feats, tokens)
    enc_opt.zero_grad()
    loss.backward(retain_graph=True)
    enc_opt.step()  # expect: ADL003 (not this run's failure: the encoder's layer keeps only its data input; see docs/lint.md)
    pred_opt.zero_grad()
    loss.backward()
    pred_opt.step()


def run():
    torch.manual_seed(0)
    model = Transducer()
    enc_opt = torch.optim.SGD(model.encoder.parameters(), lr=0.1)
    pred_opt = torch.optim.SGD(model.predictor.parameters(), lr=0.1)
    train_step(model, enc_opt, pred_opt, torch.randn(2, 3, 5), torch.randn(2, 2, 3))
