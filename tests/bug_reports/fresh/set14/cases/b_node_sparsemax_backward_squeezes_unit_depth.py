"""DeepTab's NODE model (oblivious differentiable decision trees for tabular data) chooses each
tree level's split feature with a sparsemax over the input features, written as a custom
`torch.autograd.Function`. Its backward divides by the support size with a bare `.squeeze()`:
`grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze()`. With trees of depth 1 the
selection logits have shape (features, trees, 1), so `squeeze()` also drops the depth axis; the
division broadcasts to (trees, trees), the returned gradient has the wrong shape, and autograd
sums it back to the input's shape without complaint. The feature-selection logits get wrong
gradients on every step (no error, no warning).
Source: https://github.com/OpenTabular/DeepTab/issues/453 ("sparsemax gradients wrong for size-1
dims"), fixed in https://github.com/OpenTabular/DeepTab/pull/459 (`squeeze(dim)`, which removes only
the reduced axis).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

FEATURES, TREES, DEPTH = 5, 3, 1


def sparsemax_threshold_and_support(x, dim):
    sorted_x, _ = torch.sort(x, dim=dim, descending=True)
    cumsum = sorted_x.cumsum(dim) - 1
    shape = [1] * x.dim()
    shape[dim] = -1
    rhos = torch.arange(1, x.shape[dim] + 1, dtype=x.dtype).view(shape)
    support = rhos * sorted_x > cumsum
    support_size = support.sum(dim=dim).unsqueeze(dim)
    tau = cumsum.gather(dim, support_size - 1) / support_size.to(x.dtype)
    return tau, support_size


class SparsemaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        x = x - x.max(dim=dim, keepdim=True).values
        tau, supp_size = sparsemax_threshold_and_support(x, dim)
        output = torch.clamp(x - tau, min=0)
        ctx.save_for_backward(supp_size, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        supp_size, output = ctx.saved_tensors
        dim = ctx.dim
        grad_input = grad_output.clone()
        grad_input[output == 0] = 0
        v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze()
        v_hat = v_hat.unsqueeze(dim)
        grad_input = torch.where(output != 0, grad_input - v_hat, grad_input)
        return grad_input, None


class ObliviousDecisionTrees(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_selection_logits = nn.Parameter(torch.randn(FEATURES, TREES, DEPTH))
        self.thresholds = nn.Parameter(torch.zeros(TREES, DEPTH))
        self.response = nn.Parameter(torch.randn(TREES, 2 ** DEPTH))

    def forward(self, x):
        selectors = SparsemaxFunction.apply(self.feature_selection_logits, 0)  # features x trees x depth
        feature_values = torch.einsum("bi,ind->bnd", x, selectors)
        go_left = torch.sigmoid(4.0 * (feature_values - self.thresholds))  # batch x trees x depth
        leaf_weights = torch.stack([go_left[..., 0], 1 - go_left[..., 0]], dim=-1)
        return (leaf_weights * self.response).sum(-1).mean(-1)


x = torch.randn(32, FEATURES)
y = x[:, 0] - 0.5 * x[:, 2]
model = ObliviousDecisionTrees()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for step in range(6):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
