"""ADL030: an EMA / momentum "teacher" update that averages a model's
parameters into another's and never touches the buffers (batch-norm running
statistics), in a project that builds batch-norm layers.

Each buggy shape is found at its parameter loop and really leaves the averaged
model's running statistics at their initial values (run-time oracle); the change
the message names (average or copy the buffers too), applied, makes the EMA
model's statistics follow the student's, and the linter is silent on it.
Correct near-twins stay silent: buffers copied, a state_dict EMA, a model family
without batch norm, a MoCo-style key encoder that runs its own forward passes,
an RL soft target update.  Opt-in since set Z (0 of 2 real on its first fresh
set): linted here with every rule selected.  The averaged model must be put in
eval mode somewhere (where it normalises with its stale statistics): a target
network forwarded only in train mode (MADDPG) is silent."""

from __future__ import annotations

import sys
import textwrap

import torch

from autograd_doctor.lint.engine import Selection, lint_source

HEADER = """\
import copy
import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))

"""

TRAIN = """

def train(update):
    torch.manual_seed(0)
    model = make_model()
    ema = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        loss = model(torch.randn(8, 4) * 2 + 1).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        update(ema, model)
    ema.eval()
    return ema, model
"""

BUGGY = {
    # a plain function, `.data` chained mul_/add_
    "function_data_chain": ("""
@torch.no_grad()
def update(ema, model, decay=0.9):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.data.mul_(decay).add_(p.data, alpha=1 - decay)
""", "for e, p in zip("),
    # named parameters, copy_ of a blend
    "named_copy": ("""
@torch.no_grad()
def update(teacher, student, m=0.9):
    for (_, t), (_, s) in zip(teacher.named_parameters(), student.named_parameters()):
        t.copy_(t * m + s * (1 - m))
""", "for (_, t), (_, s) in zip("),
    # `.data =` assignment
    "data_assign": ("""
def update(target, source, m=0.9):
    for tp, sp in zip(target.parameters(), source.parameters()):
        tp.data = m * tp.data + (1 - m) * sp.data
""", "for tp, sp in zip("),
    # lerp_ in a method of an EMA holder
    "class_lerp": ("""
class Averager:
    def __init__(self, beta=0.9):
        self.beta = beta

    @torch.no_grad()
    def __call__(self, ema_model, model):
        for ema_p, p in zip(ema_model.parameters(), model.parameters()):
            ema_p.lerp_(p, 1 - self.beta)


def update(ema, model):
    Averager()(ema, model)
""", "for ema_p, p in zip("),
}

FIXED_BUFFERS = """
    for eb, b in zip({0}.buffers(), {1}.buffers()):
        eb.copy_(b)
"""


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def findings(source: str, select=("ALL",)):
    return [f for f in lint_source(source, selection=Selection(select=select)) if f.code == "ADL030"]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_buggy_shapes_are_found_at_the_parameter_loop_and_really_skip_the_statistics():
    for name, (body, loop_text) in BUGGY.items():
        source = HEADER + body + TRAIN
        found = findings(source)
        assert [f.line for f in found] == [line_of(source, loop_text)], name
        assert "buffers" in found[0].message and "running" in found[0].message, name
        ema, model = load(source, name).train(load(source, name).update)
        assert torch.equal(ema[1].running_mean, torch.zeros(6)), name  # never moved
        assert not torch.equal(model[1].running_mean, torch.zeros(6)), name


def test_the_buffers_averaged_too_is_silent_and_follows_the_student():
    pairs = {"function_data_chain": ("ema", "model"), "named_copy": ("teacher", "student"),
             "data_assign": ("target", "source")}
    for name, (a, b) in pairs.items():
        body = BUGGY[name][0].rstrip("\n") + "\n" + FIXED_BUFFERS.format(a, b)
        source = HEADER + body + TRAIN
        assert findings(source) == [], name
        ema, model = load(source, name).train(load(source, name).update)
        assert torch.equal(ema[1].running_mean, model[1].running_mean), name


CORRECT = {
    # YOLOv5-style: the whole state dict (buffers included)
    "state_dict_ema": """
class ModelEMA:
    def __init__(self, model, decay=0.99):
        self.ema = copy.deepcopy(model).eval()
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        msd = model.state_dict()
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                v *= self.decay
                v += (1 - self.decay) * msd[k].detach()
""",
    # MoCo: the key encoder runs its own forward passes in train mode
    "moco_key_encoder": """
class MoCo(nn.Module):
    def __init__(self, m=0.99):
        super().__init__()
        self.encoder_q = make_model()
        self.encoder_k = make_model()
        self.m = m

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    def forward(self, im_q, im_k):
        q = self.encoder_q(im_q)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = self.encoder_k(im_k)
        return q, k
""",
    # a gradient copy between two models' parameters, not an average
    "grad_copy": """
def share_grads(model, shared):
    for p, sp in zip(model.parameters(), shared.parameters()):
        sp._grad = p.grad
""",
    # reading only
    "distance": """
def distance(a, b):
    total = 0.0
    for p, q in zip(a.parameters(), b.parameters()):
        total += (p - q).pow(2).sum().item()
    return total
""",
}

NO_BATCHNORM = """
import torch
import torch.nn as nn

critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
critic_target = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def soft_update(target, source, tau=0.005):
    for tp, p in zip(target.parameters(), source.parameters()):
        tp.data.copy_(tau * p.data + (1 - tau) * tp.data)
"""


def test_an_update_nobody_calls_or_whose_model_nobody_reads_is_silent():
    body, _ = BUGGY["function_data_chain"]
    assert findings(HEADER + body) == []  # defined, never called
    unused = HEADER + body + """

def train(model):
    ema = copy.deepcopy(model)
    update(ema, model)
"""
    assert findings(unused) == []  # the EMA model is never read
    assert findings(unused + "    return ema\n") == []  # never put in eval mode here
    assert len(findings(unused + "    ema.eval()\n    return ema\n")) == 1


def test_correct_near_twins_are_silent():
    for name, body in CORRECT.items():
        assert findings(HEADER + body) == [], name
    assert findings(NO_BATCHNORM) == []


def test_buffer_loop_off_by_default_does_not_count():
    source = HEADER + textwrap.dedent("""
    class EMA:
        def __init__(self, model, decay=0.9, with_buffers=False):
            self.module = copy.deepcopy(model)
            self.decay = decay
            self.with_buffers = with_buffers

        @torch.no_grad()
        def update(self, model):
            for ema_p, p in zip(self.module.parameters(), model.parameters()):
                ema_p.mul_(self.decay).add_(p, alpha=1 - self.decay)
            if self.with_buffers:
                for ema_b, b in zip(self.module.buffers(), model.buffers()):
                    ema_b.copy_(b)


    def train(model):
        ema = EMA(model)
        ema.update(model)
        ema.module.eval()
        return ema.module
    """)
    assert [f.line for f in findings(source)] == [line_of(source, "for ema_p, p in zip(")]
    assert findings(source.replace("with_buffers=False", "with_buffers=True")) == []
