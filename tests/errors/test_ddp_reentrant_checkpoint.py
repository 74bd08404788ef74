"""AD185: DistributedDataParallel over blocks run through a reentrant checkpoint
(`checkpoint(blk, x, use_reentrant=True)`) with `find_unused_parameters=True`: the block's
backward runs as a backward() of its own and DDP's hook of its parameters fires twice, "Expected
to mark a variable ready only once" (held-out set 22, accelerate#389 / FocalNet#4). Named at the
checkpoint call; the help passes `use_reentrant=False`, and the fixed program trains as the
program without checkpoints does. One gloo rank; each run is a subprocess (a failed program
leaves its process group initialised)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import marked_line, write  # noqa: E402

from autograd_doctor.analysis.fixes import apply_replacement  # noqa: E402
from autograd_doctor.diagnosis.model import Location  # noqa: E402

MESSAGE = "Expected to mark a variable ready only once"

SOURCE = textwrap.dedent("""
    import sys
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

        def forward(self, x):
            return x + self.mlp(x)

    class Backbone(nn.Module):
        def __init__(self, use_checkpoint=True):
            super().__init__()
            self.use_checkpoint = use_checkpoint
            self.stem = nn.Linear(6, 8)
            self.blocks = nn.ModuleList([Block() for _ in range(2)])
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            x = self.stem(x)
            for blk in self.blocks:
                if self.use_checkpoint:
                    x = checkpoint(blk, x, use_reentrant=True)  # PRIMARY
                else:
                    x = blk(x)
            return self.head(x)

    model = nn.parallel.DistributedDataParallel(Backbone(), find_unused_parameters=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    for step in range(3):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    torch.save([p.detach() for p in model.module.parameters()], sys.argv[1])
    dist.destroy_process_group()
""")


def _run(*args, cwd):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=180, cwd=cwd)


def test_the_reentrant_checkpoint_is_named_and_the_help_trains_as_without_checkpoints(tmp_path):
    import torch

    path = write(tmp_path, SOURCE, "program")
    plain = _run(path, str(tmp_path / "plain.pt"), cwd=tmp_path)
    assert plain.returncode != 0 and MESSAGE in plain.stderr

    report = tmp_path / "report.json"
    watched = _run("-m", "autograd_doctor", "run", "--json", str(report), path, str(tmp_path / "w.pt"), cwd=tmp_path)
    assert watched.returncode == 1 and MESSAGE in watched.stderr
    diagnosis = next(d for d in json.loads(report.read_text())["diagnoses"] if d["code"] == "AD185")
    assert diagnosis["primary"]["line"] == marked_line(SOURCE, "PRIMARY")
    assert "blocks.1.mlp.3.bias" in diagnosis["notes"][0] or "blocks." in diagnosis["notes"][0]
    assert any(loc["role"] == "ddp" for loc in diagnosis["related"])

    suggestion = diagnosis["help_details"][0]
    fixed = apply_replacement(SOURCE, Location(file=path, line=suggestion["line"]), suggestion["replacement"])
    assert "checkpoint(blk, x, use_reentrant=False)" in fixed
    result = _run(write(tmp_path, fixed, "fixed"), str(tmp_path / "fixed.pt"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    without = SOURCE.replace("Backbone()", "Backbone(use_checkpoint=False)")
    reference = _run(write(tmp_path, without, "without"), str(tmp_path / "without.pt"), cwd=tmp_path)
    assert reference.returncode == 0, reference.stderr
    got, want = torch.load(tmp_path / "fixed.pt"), torch.load(tmp_path / "without.pt")
    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(got, want))


def test_silent_with_a_non_reentrant_checkpoint(tmp_path):
    source = SOURCE.replace("use_reentrant=True", "use_reentrant=False")
    path = write(tmp_path, source, "program")
    report = tmp_path / "report.json"
    watched = _run("-m", "autograd_doctor", "run", "--json", str(report), path, str(tmp_path / "w.pt"), cwd=tmp_path)
    assert watched.returncode == 0, watched.stderr
    assert not json.loads(report.read_text())["diagnoses"]
