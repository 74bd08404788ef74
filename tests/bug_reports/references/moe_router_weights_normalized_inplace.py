import torch
import torch.nn as nn

torch.manual_seed(0)
router = nn.Linear(6, 4, bias=False)
x = torch.randn(5, 6)
scores = router(x).softmax(dim=-1)
expert_weights, expert_indices = torch.topk(scores, 2, dim=-1)
expert_weights = expert_weights / torch.norm(expert_weights, p=2, dim=-1, keepdim=True)
expert_outs = torch.randn(5, 2, 3)
out = torch.einsum("tai,ta->ti", expert_outs, expert_weights)
out.pow(2).sum().backward()
grads = [router.weight.grad]
