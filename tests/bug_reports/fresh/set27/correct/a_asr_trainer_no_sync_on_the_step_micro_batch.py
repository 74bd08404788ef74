"""Speech-recognition training with FunASR's DDP trainer and gradient accumulation: each
micro-batch runs under `my_context = model.no_sync if batch_idx % accum_grad != 0 else
nullcontext`, and the optimizer steps when `(batch_idx + 1) % accum_grad == 0`. The condition is
off by one: the first micro-batch of each window is the one whose gradients DDP all-reduces, and
the micro-batch that completes the window (the one before `step()`) runs under `no_sync`, so its
gradients stay on their own rank. Each rank then steps with its own accumulated gradient and the
replicas drift apart. No error. The pull request: "align DDP no_sync with gradient
accumulation"; the reviewing maintainer: "The old batch_idx % accum_grad condition synchronizes
the first microbatch and suppresses synchronization on the optimizer-step microbatch, leaving
rank-local accumulated gradients (4.0 vs 7.0 in the reproduction). The proposed (batch_idx + 1)
% accum_grad condition keeps early microbatches inside no_sync() and synchronizes the final
microbatch ... Approved." Re-created with two CPU ranks (gloo) forked from this program.
Source: https://github.com/modelscope/FunASR/pull/3472
expect: silent"""
import os
import socket
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE, ACCUM_GRAD, NUM_BATCHES = 2, 2, 6
FEATS, VOCAB = 10, 6


class CTCLikeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(FEATS, 16), nn.Tanh())
        self.ctc_lo = nn.Linear(16, VOCAB)

    def forward(self, speech, text):
        logits = self.ctc_lo(self.encoder(speech))
        return F.cross_entropy(logits.reshape(-1, VOCAB), text.reshape(-1))


def make_shard(rank):
    generator = torch.Generator().manual_seed(100 + rank)
    return [(torch.randn(3, 5, FEATS, generator=generator), torch.randint(0, VOCAB, (3, 5), generator=generator))
            for _ in range(NUM_BATCHES)]


class Trainer:
    def __init__(self, model, optim, accum_grad):
        self.model = model
        self.optim = optim
        self.accum_grad = accum_grad

    def train_epoch(self, dataloader):
        losses = []
        for batch_idx, (speech, text) in enumerate(dataloader):
            my_context = self.model.no_sync if (batch_idx + 1) % self.accum_grad != 0 else nullcontext
            with my_context():
                loss = self.model(speech, text) / self.accum_grad
                loss.backward()
            if (batch_idx + 1) % self.accum_grad == 0:
                self.optim.step()
                self.optim.zero_grad()
            losses.append(loss.item())
        return losses


def worker(rank, port, queue):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    torch.manual_seed(0)
    model = DDP(CTCLikeModel())
    optim = torch.optim.SGD(model.parameters(), lr=0.5)
    trainer = Trainer(model, optim, ACCUM_GRAD)
    losses = []
    for epoch in range(2):
        losses += trainer.train_epoch(make_shard(rank))
    queue.put((rank, losses, [p.detach().tolist() for p in model.module.parameters()]))
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch():
    context = mp.get_context("fork")
    queue = context.Queue()
    port = free_port()
    processes = [context.Process(target=worker, args=(rank, port, queue)) for rank in range(WORLD_SIZE)]
    for process in processes:
        process.start()
    outputs = sorted(queue.get(timeout=120) for _ in range(WORLD_SIZE))
    for process in processes:
        process.join(timeout=60)
        if process.exitcode != 0:
            raise RuntimeError(f"rank exited with {process.exitcode}")
    return outputs


outputs = launch()
result = {
    "losses": [torch.tensor(losses) for _, losses, _ in outputs],
    "params": [[torch.tensor(p) for p in params] for _, _, params in outputs],
}
