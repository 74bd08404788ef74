"""Iterative normalisation (IterNorm) registers its running whitening matrix
as an expanded identity, `self.register_buffer('running_wm',
torch.eye(num_channels).expand(num_groups, num_channels, num_channels))`,
and its autograd `Function` updates the running statistics in place,
`running_wmat.copy_(momentum * wm + (1. - momentum) * running_wmat)`.  All
groups share one `eye`'s memory, so the first training forward fails ("more
than one element of the written-to tensor refers to a single memory
location"); the fix appends `.clone()` to the buffer.
Buggy line: `running_wmat.copy_(...)` on the expanded buffer (made in `__init__`).
Expected finding: ADL012 there.
Source: https://github.com/huangleiBuaa/IterNorm-pytorch/issues/2"""
import torch.nn
from torch.nn import Parameter


class iterative_normalization_py(torch.autograd.Function):
    @staticmethod
    def forward(ctx, *args, **kwargs):
        X, running_mean, running_wmat, nc, ctx.T, eps, momentum, training = args
        ctx.g = X.size(1) // nc
        x = X.transpose(0, 1).contiguous().view(ctx.g, nc, -1)
        _, d, m = x.size()
        if training:
            mean = x.mean(-1, keepdim=True)
            xc = x - mean
            P = [None] * (ctx.T + 1)
            P[0] = torch.eye(d).to(X).expand(ctx.g, d, d)
            Sigma = torch.baddbmm(P[0], xc, xc.transpose(1, 2), beta=eps, alpha=1. / m)
            rTr = (Sigma * P[0]).sum((1, 2), keepdim=True).reciprocal_()
            Sigma_N = Sigma * rTr
            for k in range(ctx.T):
                P[k + 1] = torch.baddbmm(P[k], torch.matrix_power(P[k], 3), Sigma_N, beta=1.5, alpha=-0.5)
            wm = P[ctx.T].mul_(rTr.sqrt())
            running_mean.copy_(momentum * mean + (1. - momentum) * running_mean)
            running_wmat.copy_(momentum * wm + (1. - momentum) * running_wmat)  # missed: ADL012
        else:
            xc = x - running_mean
            wm = running_wmat
        xn = wm.matmul(xc)
        ctx.save_for_backward(wm)
        return xn.view(X.size(1), X.size(0), *X.size()[2:]).transpose(0, 1).contiguous()

    @staticmethod
    def backward(ctx, grad):
        wm, = ctx.saved_tensors
        g_ = grad.transpose(0, 1).contiguous().view(ctx.g, wm.size(1), -1)
        g_x = wm.transpose(-2, -1).matmul(g_)
        return g_x.view(grad.size(1), grad.size(0), *grad.size()[2:]).transpose(0, 1).contiguous(), \
            None, None, None, None, None, None, None


class IterNorm(torch.nn.Module):
    def __init__(self, num_features, num_groups=1, T=5, dim=2, eps=1e-5, momentum=0.1):
        super(IterNorm, self).__init__()
        self.T = T
        self.eps = eps
        self.momentum = momentum
        self.num_groups = num_groups
        self.num_channels = num_features // num_groups
        shape = [1] * dim
        shape[1] = num_features
        self.weight = Parameter(torch.ones(*shape))
        self.bias = Parameter(torch.zeros(*shape))
        self.register_buffer('running_mean', torch.zeros(num_groups, self.num_channels, 1))
        self.register_buffer('running_wm', torch.eye(self.num_channels).expand(num_groups, self.num_channels, self.num_channels))

    def forward(self, X):
        X_hat = iterative_normalization_py.apply(X, self.running_mean, self.running_wm, self.num_channels, self.T,
                                                 self.eps, self.momentum, self.training)
        return X_hat * self.weight + self.bias


def run():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), IterNorm(8, num_groups=2), torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.randn(16, 6)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
