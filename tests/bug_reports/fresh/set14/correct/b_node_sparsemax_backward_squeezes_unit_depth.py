"""DeepTab's NODE trees of depth 1 with the sparsemax backward squeezing only the reduced axis
(`squeeze(dim)`), so that the feature-selection logits get sparsemax's gradient.
Source: https://github.com/OpenTabular/DeepTab/issues/453 (fixed in
https://github.com/OpenTabular/DeepTab/pull/459)."""
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
        v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze(dim)
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
