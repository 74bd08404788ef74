"""AD125 where the checkpointed function stores into a container its caller passes in (a
key/value cache made for generation) and reads it back under a condition: the recomputation in
backward() finds the first run's entries and works on longer tensors (set 18's robot policy,
MemoryVLA#18). The branch that reads the container is named, with the store; the advice is to
train without the cache, and the program trained that way is what the policy means."""

import torch

from helpers import run_as_script, run_plain

PROGRAM = """
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, index):
        super().__init__()
        self.index = index
        self.kv = nn.Linear(8, 16)
        self.q = nn.Linear(8, 8)

    def forward(self, x, cache):
        k, v = self.kv(x).chunk(2, dim=-1)
        if cache is not None:
            if self.index in cache:  # BRANCH
                k = torch.cat([cache[self.index][0], k], dim=1)
                v = torch.cat([cache[self.index][1], v], dim=1)
            cache[self.index] = (k, v)  # STORE
        weights = torch.softmax(self.q(x) @ k.transpose(1, 2), dim=-1)
        return x + weights @ v


blocks = nn.ModuleList([Block(0), Block(1)])
optimizer = torch.optim.SGD(blocks.parameters(), lr=0.1)
x = torch.randn(2, 3, 8)
losses = []
for step in range(2):
    cache = CACHE
    h = x
    for block in blocks:
        h = checkpoint(block, h, cache, use_reentrant=False)
    loss = h.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()  # BACKWARD
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in blocks.parameters()]}
"""


def test_the_branch_reading_the_filled_argument_is_named_with_its_store(tmp_path):
    outcome = run_as_script(tmp_path, PROGRAM.replace("CACHE", "{}"))
    assert "Recomputed values" in str(outcome.error)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD125"]
    assert diagnosis.primary.line == outcome.line("BRANCH")
    assert outcome.line("STORE") in [location.line for location in diagnosis.related]
    assert "pass no cache" in diagnosis.help[0].message and diagnosis.help[0].replacement is None
    # Training without the cache computes what the first (cache-filling) run of each block computed:
    # the same losses as the blocks run without checkpoint, cache and all.
    without_cache = run_plain(tmp_path, PROGRAM.replace("CACHE", "None"), "without_cache.py")["result"]
    plain = run_plain(tmp_path, PROGRAM.replace("CACHE", "{}").replace(
        "h = checkpoint(block, h, cache, use_reentrant=False)", "h = block(h, cache)"), "plain.py")["result"]
    assert torch.allclose(without_cache["losses"], plain["losses"])
