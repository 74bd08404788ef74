import tempfile

import torch
import torch.distributed as dist
from torch import nn

torch.manual_seed(0)

dist.init_process_group("gloo", init_method="file://" + tempfile.mktemp(), rank=0, world_size=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.aux_head = nn.Linear(3, 1)
        self.head = nn.Linear(3, 1)

    def forward(self, x, use_aux):
        h = self.body(x)
        if use_aux:
            return self.aux_head(h)
        return self.head(h)


model = nn.parallel.DistributedDataParallel(Net())  # PRIMARY
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x = torch.randn(4, 3)
    loss = model(x, use_aux=step == 1).sum()
    features = model.module.body(x).detach()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
