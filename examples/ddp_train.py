"""A tiny DistributedDataParallel training loop on CPU (gloo) with an optional in-place bug.

Run it under the doctor with torchrun, two processes on one machine:

    OMP_NUM_THREADS=1 torchrun --standalone --nproc_per_node=2 \\
        -m autograd_doctor run --json report.json examples/ddp_train.py --bug-rank 1

Rank 1 then writes into a tensor that autograd saved; its report says `[rank 1]`
and goes to report.rank1.json. `--bug-rank all` makes every rank fail, `--bug-rank
none` trains cleanly and checks that DDP averaged the gradients on every rank.
"""

import argparse
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bug-rank", default="none", help="rank that makes the in-place mistake: N, all or none")
    parser.add_argument("--steps", type=int, default=3)
    options = parser.parse_args()

    # A short timeout: if a peer dies, the survivors give up quickly instead of waiting 30 minutes.
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    buggy = options.bug_rank == "all" or options.bug_rank == str(rank)

    for step in range(options.steps):
        torch.manual_seed(100 * step + rank)  # each rank sees different data
        inputs, targets = torch.randn(4, 8), torch.randn(4, 1)
        scores = torch.sigmoid(model(inputs))
        if buggy and step == 1:
            scores[0] = 0.5  # BUG: sigmoid saved `scores` for backward
        loss = ((scores - targets) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        check_gradients_in_sync(model, rank, world)
        optimizer.step()
        print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
    dist.barrier()
    # No destroy_process_group(): on torch 2.13 CPU it sometimes aborts the process
    # ("terminate called without an active exception"); exiting closes gloo cleanly.


def check_gradients_in_sync(model: nn.Module, rank: int, world: int) -> None:
    """DDP's bucket hooks averaged every gradient: all ranks hold the same values."""
    flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    if not all(torch.equal(gathered[0], other) for other in gathered[1:]):
        raise AssertionError(f"rank {rank}: gradients differ across ranks; DDP did not all-reduce them")


if __name__ == "__main__":
    main()
