"""Decisions kept across time never rest on an address alone.

CPython hands a freed object's memory to the next object of its size: an optimizer made anew
each epoch takes its predecessor's address every other epoch, and a parameter of a model made
after another was dropped often sits where one of the old model's did. State the doctor keeps
between calls (optimizers that stepped, parameters a backward reached or a forward used,
modules that ran) is kept by identity (recording/identity.py), and memory (a numpy() view, a
logged write) with its storage, weakly, so that a later object at a freed address inherits
nothing. Each test forces the reuse (it frees objects, makes many of the same kind and keeps one
at a freed address, asserting it found one) and checks the decision an address-keyed record got
wrong: silence where a bug is (AD221, AD301), a report on a correct program (AD301), another
line blamed (AD202, a failure's culprit write, AD211's reach)."""

import weakref

import torch

from autograd_doctor.analysis.idle_terms import _stepped_among
from autograd_doctor.recording.identity import IdentityMap, IdentitySet
from autograd_doctor.recording.write_log import LoggedWrite, WriteLog, storage_base
from helpers import run_plain, run_program

# AD221: fifty warm-up optimizers step, clear and are dropped; the head's optimizer, made at the
# address of one of them, clears the head's gradients every epoch and never steps. (The dropped
# ones once filled the table of followed optimizers, and a stepped one's id said "stepped".)
NEVER_STEPPED_AT_A_STEPPED_ONES_ADDRESS = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
head = nn.Linear(16, 3)
x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
warmups = [torch.optim.SGD(backbone.parameters(), lr=lr) for lr in torch.logspace(-4, 0, 50).tolist()]
for warmup in warmups:  # a learning-rate range test: one step each
    F.cross_entropy(head(backbone(x)), y).backward()
    warmup.step()
    warmup.zero_grad()
freed = {id(o) for o in warmups}
del warmups, warmup
candidates = [torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9) for _ in range(200)]
reused = [o for o in candidates if id(o) in freed]
assert reused, "no later optimizer was made at a freed address"
opt_head = reused[0]
del candidates, reused
opt_backbone = torch.optim.Adam(backbone.parameters(), lr=1e-2)
for epoch in range(4):
    opt_backbone.zero_grad()
    opt_head.zero_grad()  # CLEAR
    loss = F.cross_entropy(head(backbone(x)), y)
    loss.backward()  # BACKWARD
    opt_backbone.step()
"""


def test_an_optimizer_at_a_stepped_ones_address_that_never_steps_is_reported(tmp_path):
    outcome = run_program(tmp_path, NEVER_STEPPED_AT_A_STEPPED_ONES_ADDRESS)
    assert outcome.error is None, outcome.error
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD221"]
    assert diagnosis.primary.line == outcome.line("BACKWARD")
    assert [r.line for r in diagnosis.related] == [outcome.line("CLEAR")]


# AD301: a first experiment's parameters are reached by a backward and dropped; the second
# model's encoder weight is made at one of their addresses, and the loss cuts the encoder off.
CUT_PARAMETER_AT_A_REACHED_ONES_ADDRESS = """
import torch
import torch.nn as nn
torch.manual_seed(0)
first = [nn.Parameter(torch.randn(2)) for _ in range(300)]
sum(p.pow(2).sum() for p in first).backward()
freed = {id(p) for p in first}
del first
weights = [nn.Parameter(torch.randn(4, 3)) for _ in range(300)]
reused = [w for w in weights if id(w) in freed]
assert reused, "no later parameter was made at a freed address"
encoder, head = nn.Linear(3, 4), nn.Linear(4, 1)
encoder.weight = reused[0]
del weights, reused
model = nn.Sequential(encoder, head)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(8, 3)
    features = encoder(x).detach()  # CUT
    loss = head(features).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()  # BACKWARD
    optimizer.step()
"""


def test_a_cut_parameter_at_a_reached_ones_address_is_reported(tmp_path):
    outcome = run_program(tmp_path, CUT_PARAMETER_AT_A_REACHED_ONES_ADDRESS)
    assert outcome.error is None, outcome.error
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert diagnosis.extra["parameters"] == ["encoder.weight", "encoder.bias"]
    assert diagnosis.primary.line == outcome.line("CUT")


# Correct: a bag of parameters all used by a forward (a metric computed with gradients on), then
# dropped; the next model holds a registered parameter its forward never uses, made at a freed
# address. A parameter no forward used took no part: nothing cut it.
UNUSED_PARAMETER_AT_A_USED_ONES_ADDRESS = """
import torch
import torch.nn as nn
torch.manual_seed(0)

class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        for i in range(300):
            self.register_parameter(f"p{i}", nn.Parameter(torch.randn(2)))

    def forward(self, x):
        return x * sum(p.sum() for p in self.parameters())

class Regressor(nn.Module):
    def __init__(self, spare):
        super().__init__()
        self.linear = nn.Linear(3, 1)
        self.spare = spare  # registered, kept for later, never used by forward

    def forward(self, x):
        return self.linear(x)

bag = Bag()
metric = bag(torch.randn(4)).sum().item()
freed = {id(p) for p in bag.parameters()}
del bag
candidates = [nn.Parameter(torch.randn(3)) for _ in range(300)]
reused = [p for p in candidates if id(p) in freed]
assert reused, "no later parameter was made at a freed address"
model = Regressor(reused[0])
del candidates, reused
optimizer = torch.optim.SGD(model.linear.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    loss = (model(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = model.linear.weight.detach().clone()
"""


def test_an_unused_parameter_at_a_used_ones_address_stays_silent(tmp_path):
    outcome = run_program(tmp_path, UNUSED_PARAMETER_AT_A_USED_ONES_ADDRESS)
    assert outcome.error is None, outcome.error
    assert [d.code for d in outcome.diagnoses] == []
    plain = run_plain(tmp_path, UNUSED_PARAMETER_AT_A_USED_ONES_ADDRESS, name="plain.py")
    assert torch.equal(outcome.namespace["weights"], plain["weights"])  # the doctor changed nothing


def test_an_identity_set_forgets_an_object_when_it_dies():
    stepped, last_step = IdentitySet(), IdentityMap()
    first = [torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1) for _ in range(50)]
    stepped.update(first)
    last_step[first[0]] = 7
    assert first[0] in stepped and last_step.get(first[0]) == 7 and len(stepped) == 50
    freed = {id(o) for o in first}
    del first
    later = [torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1) for _ in range(200)]
    reused = [o for o in later if id(o) in freed]
    assert reused, "no later optimizer was made at a freed address"
    assert not any(o in stepped or last_step.get(o, 0) for o in later) and len(stepped) == 0
    stepped.add(reused[0])
    assert reused[0] in stepped and all(o not in stepped for o in later if o is not reused[0])


# AD202 (verify_saved): numpy() of tensors whose memory is freed, then a saved tensor made in
# that memory and changed behind PyTorch's back (DLPack). The numpy() line had nothing to do with
# it: the report points at the save, not at the numpy() of the freed memory.
SAVED_IN_MEMORY_A_FREED_NUMPY_VIEW_HAD = """
import torch
x = torch.linspace(-1, 1, 256, requires_grad=True)
logged = [torch.sigmoid(x.detach() * k) for k in range(50)]
print([t.numpy().sum() for t in logged])  # NUMPY
freed = {t.data_ptr() for t in logged}
del logged
outputs = [torch.sigmoid(x) for _ in range(200)]  # SAVE
reused = [z for z in outputs if z.data_ptr() in freed]
assert reused, "no later tensor was made in freed memory"
z = reused[0]
del outputs, reused
shared = torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(z.detach()))
torch.ops.aten.fill_.Scalar(shared, 7.0)
z.sum().backward()  # BACKWARD
"""


def test_a_numpy_view_of_freed_memory_is_not_blamed_for_a_later_tensor_there(tmp_path):
    outcome = run_program(tmp_path, SAVED_IN_MEMORY_A_FREED_NUMPY_VIEW_HAD, verify_saved=True)
    assert outcome.error is None, outcome.error
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD202"]
    assert diagnosis.primary.line == outcome.line("SAVE")
    assert outcome.line("NUMPY") not in [location.line for location in diagnosis.related]


def test_a_logged_write_into_freed_memory_is_not_a_later_tensors_there():
    # The default mode names the culprit of "modified by an inplace operation" from its log of
    # writes, matched by memory and versions. A tensor freed after a logged write leaves its
    # memory, and version 0 -> 1, to the next tensor of its size: that write is not the next's.
    log = WriteLog()
    first = [torch.zeros(256) for _ in range(50)]
    for tensor in first:
        entry = LoggedWrite("Tensor.add_", (), storage_base(tensor), tensor._version, seq=1)
        tensor.add_(1)
        entry.version_after = tensor._version
        log.add(entry, tensor)
    freed = {storage_base(t) for t in first}
    assert [len(log.writes_into(t, 0, 1)) for t in first] == [1] * 50
    del first, tensor
    later = [torch.zeros(256) for _ in range(200)]
    reused = [t for t in later if storage_base(t) in freed]
    assert reused, "no later tensor was made in freed memory"
    reused[0].mul_(2)  # a write the log never saw, 0 -> 1
    assert log.writes_into(reused[0], 0, 1) == []


def test_a_leaf_read_at_one_backward_is_not_a_parameter_made_at_its_address_before_the_next():
    # AD211 reads what a loss's terms reach after one backward() and judges them when the next
    # starts, against the parameters the optimizers stepped since. A leaf freed in between
    # (a perturbation made anew each step) is not a parameter made later at its address.
    perturbations = [torch.zeros(4, 3, requires_grad=True) for _ in range(50)]
    reached = {id(leaf): weakref.ref(leaf) for leaf in perturbations}
    assert _stepped_among(reached, {id(leaf): leaf for leaf in perturbations}) == set(reached)
    del perturbations
    later = [torch.nn.Parameter(torch.zeros(4, 3)) for _ in range(300)]
    stepped = {id(p): p for p in later}
    assert stepped.keys() & reached.keys(), "no later parameter was made at a freed address"
    assert _stepped_among(reached, stepped) == set()
