"""A forum thread "Inplace operation changes is_leaf attribute" tries several
writes on a tensor made with `torch.randn(10, 3, 2, 32, requires_grad=True)`:
`c += 1`, `c.add_(1)` and `c.index_copy_(...)` raise "a leaf Variable that
requires grad is being used in an in-place operation", while `c[:] += 1`
appeared to pass but left `c` no longer a leaf (so the optimizer holding
`c` would never see a gradient).  Current PyTorch raises on that form too
("a view of a leaf Variable ...").  Re-created as a prompt pool whose
learnable key table is created with `requires_grad=True` and then shifted
through a full slice to centre it before training.  Raises when the pool is
built.
Buggy line: `self.keys[:] += self.offset` (in-place write through a view of
a leaf that requires grad).
Source: https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297"""
import torch
import torch.nn.functional as F


class PromptPool:
    def __init__(self, pool_size=10, length=3, dim=32, offset=1.0):
        self.keys = torch.randn(pool_size, length, 2, dim, requires_grad=True)
        self.offset = offset
        self.keys[:] += self.offset  # expect: ADL014

    def parameters(self):
        return [self.keys]

    def select(self, query, top_k=2):
        keys = self.keys.mean(dim=(1, 2))
        sim = F.normalize(query, dim=-1) @ F.normalize(keys, dim=-1).T
        return sim.topk(top_k, dim=-1)


def run():
    torch.manual_seed(0)
    pool = PromptPool()
    optimizer = torch.optim.Adam(pool.parameters(), lr=1e-3)
    query = torch.randn(4, 32)
    values, _ = pool.select(query)
    loss = -values.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
