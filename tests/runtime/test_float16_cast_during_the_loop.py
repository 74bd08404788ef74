"""AD151 does not name a cast that ran before the loop when the run shows another cast made the
trained parameters float16: the optimizer's state holds float32 tensors for them (Adam's moments are
made in the parameter's dtype at its first step), so they were float32 at a step inside the loop.
Set 28's diffusers#13895 (a validation pipeline built around the live UNet moved with
`.to(device, dtype=torch.float16)`): the report named the frozen UNet's cast before the LoRA
adapters were even added, and its help (cast that one to float32) still failed. Now the report
stays at the refused call, says what the state shows, and its help is advice (no line is known).

Another shape, written before the change was run on it: a classifier whose frozen backbone is cast
to float16 before the loop and whose trained head is halved mid-loop by an export helper
(`model.half()` to save a checkpoint). That cast is in the loop, so it is still named (the check rejects only a
cast that ran once, before the loop). The correct near-twins (a copy exported, a pipeline moved
without float16) train silently; a model cast to float16 before its first step keeps the concrete
help (tests/errors/variants)."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_as_script, run_plain, run_program

EXPORT_HALVES_THE_TRAINED_MODEL = """
    import copy
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            with torch.autocast("cpu", dtype=torch.float16):
                return self.head(self.backbone(x)).float()


    def export_checkpoint(model, store):
        store.append({k: v.clone() for k, v in EXPORTED.state_dict().items()})


    model = Classifier()
    model.backbone.requires_grad_(False)
    model.backbone.to(torch.float16)  # PRE-LOOP CAST
    optimizer = torch.optim.Adam(model.head.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler("cpu")
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    store = []
    for step in range(4):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)  # UNSCALE
        scaler.step(optimizer)
        scaler.update()
        if step == 1:
            EXPORTED = HALVING
            export_checkpoint(model, store)
    result = [p.detach().clone() for p in model.head.parameters()]
"""


def _program(halving: str) -> str:
    return EXPORT_HALVES_THE_TRAINED_MODEL.replace("HALVING", halving)


def test_a_cast_inside_the_loop_is_still_named(tmp_path):
    # the run-time check only rejects a cast that ran once, before the loop; this one is in it
    outcome = run_as_script(tmp_path, _program("model.half()"))
    assert outcome.error is not None and "FP16" in str(outcome.error)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD151")
    assert "EXPORTED = model.half()" in outcome.source.splitlines()[diagnosis.primary.line - 1]
    assert diagnosis.primary.line != outcome.line("PRE-LOOP CAST")


def test_exporting_a_copy_trains_and_stays_silent(tmp_path):
    outcome = run_program(tmp_path, _program("copy.deepcopy(model).half()"))
    assert outcome.error is None
    assert not outcome.diagnoses
    assert len(run_plain(tmp_path, _program("copy.deepcopy(model).half()"))["result"]) == 2


DREAMBOOTH_SHAPE = '''
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class Lora(nn.Module):
        def __init__(self, base):
            super().__init__()
            self.base = base
            self.down = nn.Linear(base.in_features, 2, bias=False)
            self.up = nn.Linear(2, base.out_features, bias=False)

        def forward(self, x):
            return self.base(x) + self.up(self.down(x))


    class Pipe:
        def __init__(self, net):
            self.net = net

        def to(self, dtype=None):
            self.net.to(dtype=dtype)
            return self


    net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
    net.requires_grad_(False)
    net.to(dtype=torch.float16)  # PRE-LOOP CAST
    net[0] = Lora(net[0])
    for p in net.parameters():
        if p.requires_grad:
            p.data = p.to(torch.float32)
    trainable = [p for p in net.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-3)
    scaler = torch.amp.GradScaler("cpu")
    x = torch.randn(6, 4)
    for step in range(3):
        with torch.autocast("cpu", dtype=torch.float16):
            loss = net(x).float().pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)  # UNSCALE
        scaler.step(optimizer)
        scaler.update()
        if step == 0:
            Pipe(net).to(dtype=WEIGHT_DTYPE)  # VALIDATION
'''


def test_a_validation_pipeline_cast_of_the_live_model_is_not_blamed_on_the_first_cast(tmp_path):
    outcome = run_as_script(tmp_path, DREAMBOOTH_SHAPE.replace("WEIGHT_DTYPE", "torch.float16"))
    assert outcome.error is not None and "FP16" in str(outcome.error)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD151")
    # The run records the cast (recording/module_casts.py): the pipeline's `.to(dtype=...)` line, which
    # chose the dtype that Pipe.to forwards to the live model, is named, and the help drops `dtype=`
    # (tests/runtime/test_set30_leftovers.py); it used to be advice at the unscale_() line.
    assert diagnosis.primary.line == outcome.line("VALIDATION")
    assert "Pipe(net).to(dtype=torch.float16)" in diagnosis.primary.source
    assert diagnosis.help[0].replacement == "Pipe(net).to()"
    fixed = apply_replacement(outcome.source, diagnosis.help[0].location, diagnosis.help[0].replacement)
    got = run_plain(tmp_path, fixed, name="fixed.py")
    want = run_plain(tmp_path, textwrap.dedent(DREAMBOOTH_SHAPE.replace("WEIGHT_DTYPE", "None")), name="answer.py")
    assert all(torch.equal(a, b) for a, b in zip(got["trainable"], want["trainable"]))


def test_a_pipeline_moved_without_float16_stays_silent(tmp_path):
    outcome = run_program(tmp_path, DREAMBOOTH_SHAPE.replace("WEIGHT_DTYPE", "None"))
    assert outcome.error is None
    assert not outcome.diagnoses
