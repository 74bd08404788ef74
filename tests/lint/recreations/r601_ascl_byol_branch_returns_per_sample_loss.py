"""Adaptive Soft Contrastive Learning (ASCL, ICPR 2022): the model wraps MoCo
and BYOL; `forward` dispatches to `_forward_moco` or `_forward_byol` and the
training loop calls `loss = net(im_1, im_2, targets)` then `loss.backward()`.
The MoCo branch returns a mean cross-entropy, but the BYOL branch returns
`2 - 2 * (hq * k.detach()).sum(dim=-1)`, one loss per sample.  With
`--model byol` the training fails with "grad can be implicitly created only
for scalar outputs"; the reporter asked whether it should be summed (the
BYOL loss is meant to be averaged over the batch).  Re-created as the
repository's model (momentum key encoder, predictor, `_forward_byol` with its
plain branch, the queue update) and its `train` loop on random image pairs.
Raises at the first batch.
Buggy line: `loss = 2 - 2 * (hq * k.detach()).sum(dim=-1)` (per-sample,
never reduced).
Source: https://github.com/MrChenFeng/Adaptive-Soft-Contrastive-Learning_ICPR2022/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelBase(nn.Module):
    def __init__(self, projection_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(8, projection_dim))

    def forward(self, x):
        return self.net(x)


class ASCL(nn.Module):
    def __init__(self, dim=16, K=64, m=0.99, model='byol'):
        super().__init__()
        self.K, self.m, self.model = K, m, model
        self.encoder_q = ModelBase(dim)
        self.encoder_k = ModelBase(dim)
        if self.model == 'byol':
            self.predictor = nn.Sequential(nn.Linear(dim, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, dim))
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1. - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys, targets):
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + keys.shape[0]] = keys.t()
        self.queue_ptr[0] = (ptr + keys.shape[0]) % self.K

    def _forward_byol(self, im_q, im_k, targets):
        with torch.no_grad():
            self._momentum_update_key_encoder()
        q = self.encoder_q(im_q)
        k = self.encoder_k(im_k)
        hq = F.normalize(self.predictor(q), dim=-1, p=2)
        k = F.normalize(k, dim=-1, p=2)
        loss = 2 - 2 * (hq * k.detach()).sum(dim=-1)  # missed: no rule (backward of a non-scalar loss)
        self._dequeue_and_enqueue(k, targets)
        return loss

    def forward(self, im_q, im_k, targets):
        if self.model == 'byol':
            return self._forward_byol(im_q, im_k, targets)
        raise ValueError(f'Wrong model! Should be moco or byol rather than {self.model}!')


def train(net, data_loader, train_optimizer):
    net.train()
    for i, [[im_1, im_2], targets] in enumerate(data_loader):
        loss = net(im_1, im_2, targets)
        train_optimizer.zero_grad()
        loss.backward()
        train_optimizer.step()


def run():
    torch.manual_seed(0)
    net = ASCL(model='byol')
    optimizer = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.06, momentum=0.9)
    loader = [[[torch.randn(8, 3, 16, 16), torch.randn(8, 3, 16, 16)], torch.randint(0, 10, (8,))] for _ in range(2)]
    train(net, loader, optimizer)
