"""torch_scatter's `scatter_softmax` (2.0.3) re-centred the scores per group,
then exponentiated and normalised them in place:
`recentered_scores_exp = recentered_scores.exp_()` and, at the end,
`recentered_scores_exp.div_(normalizing_constants)`.  `exp_` keeps its
result for backward; the `div_` overwrites it, so a GAT layer built on it
fails in `loss.backward()` ("one of the variables needed for gradient
computation has been modified by an inplace operation").  The fix divides out
of place.
Buggy line: `recentered_scores_exp.div_(...)` in `scatter_softmax`.
Expected finding: ADL001 there (`exp_` keeps its result).
Source: https://github.com/rusty1s/pytorch_scatter/issues/119"""
import torch


def scatter_max(src, index, dim_size):
    out = torch.full((dim_size,), float("-inf"))
    return out.scatter_reduce(0, index, src, reduce="amax")


def scatter_sum(src, index, dim_size):
    return torch.zeros(dim_size).index_add(0, index, src)


def scatter_softmax(src, index, eps=1e-12):
    dim_size = int(index.max()) + 1
    max_value_per_index = scatter_max(src.detach(), index, dim_size)
    max_per_src_element = max_value_per_index.gather(0, index)
    recentered_scores = src - max_per_src_element
    recentered_scores_exp = recentered_scores.exp_()
    sum_per_index = scatter_sum(recentered_scores_exp, index, dim_size)
    normalizing_constants = sum_per_index.add_(eps).gather(0, index)
    return recentered_scores_exp.div_(normalizing_constants)  # expect: ADL001


def run():
    torch.manual_seed(0)
    src = torch.randn(6, requires_grad=True)
    index = torch.tensor([0, 1, 0, 1, 2, 1])
    out = torch.sum(scatter_softmax(src, index) * torch.arange(6.0))
    out.backward()
