"""A hyperbolic RNN for sequence classification: a GRU encodes each sequence, the final state is
mapped onto the Poincare ball, and the logits are signed distances to learned hyperplanes of the
ball (a `MobiusDist2Hyperplane` head). Each hyperplane's normal direction is a parameter on the
unit sphere, created as a Riemannian-manifold parameter and projected onto its manifold at
construction: `ManifoldParameter(tangent, manifold=sphere).proj_()`. `proj_()` copies the
projection into the parameter in place, and the parameter is a leaf that requires grad, so
building the model raises "a leaf Variable that requires grad is being used in an in-place
operation." The manifold library's maintainer: in-place methods on leaf parameters now need a
`torch.no_grad()` context; the model's module was updated to project under it.
Source: https://github.com/ferrine/hyrnn/issues/11 ("RuntimeError: a leaf Variable that requires
grad has been used in an in-place operation." at `self.tangent = geoopt.ManifoldParameter(tangent,
manifold=sphere).proj_()`)
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# --- a minimal Riemannian-manifold toolkit -----------------------------------------------------
def copy_or_set_(dest, source):
    return dest.copy_(source)


class Sphere:
    def projx(self, x):
        return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-15)


class PoincareBall:
    def __init__(self, c=1.0):
        self.c = c

    def expmap0(self, u):
        sqrt_c = self.c ** 0.5
        u_norm = u.norm(dim=-1, keepdim=True).clamp_min(1e-15)
        return torch.tanh(sqrt_c * u_norm) * u / (sqrt_c * u_norm)

    def mobius_add(self, x, y):
        c = self.c
        xy = (x * y).sum(-1, keepdim=True)
        x2 = x.pow(2).sum(-1, keepdim=True)
        y2 = y.pow(2).sum(-1, keepdim=True)
        num = (1 + 2 * c * xy + c * y2) * x + (1 - c * x2) * y
        return num / (1 + 2 * c * xy + c ** 2 * x2 * y2).clamp_min(1e-15)

    def dist2plane(self, x, p, a):
        c = self.c
        sqrt_c = c ** 0.5
        diff = self.mobius_add(-p, x)
        diff_norm2 = diff.pow(2).sum(-1).clamp_min(1e-15)
        sc_diff_a = (diff * a).sum(-1)
        a_norm = a.norm(dim=-1)
        num = 2 * sqrt_c * sc_diff_a
        denom = (1 - c * diff_norm2) * a_norm
        return torch.asinh(num / denom.clamp_min(1e-15)) / sqrt_c


class ManifoldParameter(nn.Parameter):
    def __new__(cls, data=None, manifold=None, requires_grad=True):
        instance = nn.Parameter.__new__(cls, data, requires_grad)
        instance.manifold = manifold
        return instance

    def proj_(self):
        return copy_or_set_(self, self.manifold.projx(self))


# --- the model -----------------------------------------------------------------------------------
class MobiusDist2Hyperplane(nn.Module):
    def __init__(self, in_features, out_features, c=1.0):
        super().__init__()
        self.ball = PoincareBall(c)
        sphere = Sphere()
        self.point = nn.Parameter(torch.zeros(out_features, in_features))
        tangent = torch.randn(out_features, in_features)
        with torch.no_grad():
            self.tangent = ManifoldParameter(tangent, manifold=sphere).proj_()

    def forward(self, x):
        x = x.unsqueeze(-2)
        point = self.ball.expmap0(self.point)
        return self.ball.dist2plane(x, point, self.tangent)


class HyperbolicRNNClassifier(nn.Module):
    def __init__(self, n_inputs, n_hidden, n_classes):
        super().__init__()
        self.rnn = nn.GRU(n_inputs, n_hidden, batch_first=True)
        self.ball = PoincareBall()
        self.head = MobiusDist2Hyperplane(n_hidden, n_classes)

    def forward(self, seq):
        _, h = self.rnn(seq)
        return self.head(self.ball.expmap0(h[-1]))


def make_batch(n=32, length=6, dim=4):
    labels = torch.randint(0, 2, (n,))
    seq = torch.randn(n, length, dim) * 0.5
    seq[:, :, 0] += labels.float().unsqueeze(1) - 0.5
    return seq, labels


model = HyperbolicRNNClassifier(4, 8, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(15):
    seq, labels = make_batch()
    logits = model(seq)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        model.head.tangent.proj_()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
print("final loss", losses[-1].item())
