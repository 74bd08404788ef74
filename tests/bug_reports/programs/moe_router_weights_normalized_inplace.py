"""A mixture-of-experts router normalizes the top-k expert weights in place by their norm,
which torch.norm saved for its backward.
Source: https://github.com/databricks/megablocks/pull/70 ("Change router weight norm from
in-place": `expert_weights /= norm` became `expert_weights = expert_weights / norm`)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
router = nn.Linear(6, 4, bias=False)
x = torch.randn(5, 6)
scores = router(x).softmax(dim=-1)
expert_weights, expert_indices = torch.topk(scores, 2, dim=-1)
expert_weights /= torch.norm(expert_weights, p=2, dim=-1, keepdim=True)  # PRIMARY
expert_outs = torch.randn(5, 2, 3)
out = torch.einsum("tai,ta->ti", expert_outs, expert_weights)
out.pow(2).sum().backward()
grads = [router.weight.grad]
