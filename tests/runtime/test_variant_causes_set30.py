"""Causes found by held-out variants set 30 (docs/errors.md, "Held-out variants", set 30), each tested on
another program of the same cause (not the variant) and on a correct near-twin; the variants themselves
are run by tests/errors/test_held_out_variants.py.

AD203: a torch function given one of its own inputs as `out=` (`torch.index_select(x, 0, order, out=x)`)
was not diagnosed: the default capture wraps in-place methods, not `out=` arguments, so PyTorch's message
reached the catalogue without a diagnosis, and the catalogue had none for it.

AD152: a sparse gradient combined with a dense tensor was found only as `x.grad` on the raising line; a
tensor hook's argument (`lambda grad: grad + ...`) is a name. Inside a hook, making it dense fails too
(a hook must keep the gradient's layout), so the help is advice there.

AD307: a method decorated with @torch.no_grad() that stores a tensor on `self`, read by another method
that computes the loss, was AD301's "check the function called here": the decorator search followed calls,
not attributes.

AD133: `self.queue.resize_(...)` on a registered buffer that a value with history was stored into got the
out-of-place resize, which keeps this step's graph in the buffer (the next backward() fails); advice now.

AD131: a gradient flattened from the parameter's own (`flat = p.grad.flatten(1)`, rows normalised) assigned back
with its trailing dimensions merged got advice; the reshape back is the flatten's inverse.

AD118: a power whose exponent is a name (`(1 - p_t) ** gamma`, gamma = 0.5) was not taken for a root: the
clamp of the base is offered now with the exponent the failing PowBackward0 node saved, when it is between
0 and 1 and the line has that one power."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# ---- AD203 ---------------------------------------------------------------------------------------

# Attention scores and their weights reordered by a ranking, in a script, each as its own out=: the
# second statement would raise next, so the change rebinds both.
SCORES_GATHERED_INTO_THEMSELVES = """
    import torch

    torch.manual_seed(0)
    scores, weights = torch.randn(4, 5), torch.rand(4, 5)
    ranking = torch.argsort(torch.randn(4, 5), dim=1)
    torch.gather(scores, 1, ranking, out=scores)  # WRITE
    torch.gather(weights, 1, ranking, out=weights)
    total = (scores * weights).cumsum(1)
"""

SCORES_GATHERED_CORRECT = SCORES_GATHERED_INTO_THEMSELVES.replace(
    "torch.gather(scores, 1, ranking, out=scores)  # WRITE", "scores = torch.gather(scores, 1, ranking)").replace(
    "torch.gather(weights, 1, ranking, out=weights)", "weights = torch.gather(weights, 1, ranking)")

# A helper given the rows to shuffle: the caller's tensor is the one meant, so no rebinding is offered.
ROWS_SHUFFLED_IN_A_HELPER = """
    import torch

    def shuffle(rows, order):
        torch.index_select(rows, 0, order, out=rows)  # WRITE

    torch.manual_seed(0)
    table = torch.randn(6, 2)
    shuffle(table, torch.randperm(6))
"""


def test_a_call_given_its_input_as_out_is_rebound_without_out(tmp_path):
    outcome = run_as_script(tmp_path, SCORES_GATHERED_INTO_THEMSELVES)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD203", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.help[0].replacement == ("scores = torch.gather(scores, 1, ranking)\n"
                                             "weights = torch.gather(weights, 1, ranking)")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, SCORES_GATHERED_CORRECT, "correct.py")
    assert torch.equal(fixed["total"], correct["total"])


def test_the_rebound_gather_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, SCORES_GATHERED_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_out_naming_a_parameter_of_the_function_gets_advice(tmp_path):
    outcome = run_as_script(tmp_path, ROWS_SHUFFLED_IN_A_HELPER)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD203", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert all(not suggestion.replacement for suggestion in diagnosis.help)


# ---- AD152 ---------------------------------------------------------------------------------------

# A named hook function adds gradient noise with `grad.add(...)` to every parameter, the sparse
# embedding's included.
NOISE_HOOK_ON_A_SPARSE_EMBEDDING = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    embedding = nn.Embedding(8, 3, sparse=True)

    def noisy(grad):
        return grad.add(0.01 * torch.ones(grad.shape))  # COMBINE

    embedding.weight.register_hook(noisy)
    loss = embedding(torch.tensor([1, 2, 2])).sum()
    loss.backward()
"""

# The near-twin: the hook adds a sparse term (the noise on the rows the gradient holds).
SPARSE_NOISE_HOOK = NOISE_HOOK_ON_A_SPARSE_EMBEDDING.replace(
    "return grad.add(0.01 * torch.ones(grad.shape))  # COMBINE",
    "grad = grad.coalesce()\n        return grad + (0.01 * torch.ones(grad.shape)).sparse_mask(grad)")

# Outside a hook, a name holding the sparse gradient: making it dense at the operand is the change.
NAMED_SPARSE_GRADIENT = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    embedding = nn.Embedding(8, 3, sparse=True)
    optimizer = torch.optim.SGD(embedding.parameters(), lr=0.1)
    for ids in (torch.tensor([1, 2]), torch.tensor([3, 1])):
        optimizer.zero_grad()
        embedding(ids).pow(2).sum().backward()
        gradient = embedding.weight.grad
        embedding.weight.grad = gradient + 0.01 * embedding.weight.detach()  # COMBINE
        optimizer.step()
"""

NAMED_SPARSE_GRADIENT_CORRECT = NAMED_SPARSE_GRADIENT.replace(
    "gradient + 0.01 * embedding.weight.detach()  # COMBINE", "gradient.to_dense() + 0.01 * embedding.weight.detach()")


def test_a_hook_adding_a_dense_term_to_a_sparse_gradient_gets_advice(tmp_path):
    outcome = run_as_script(tmp_path, NOISE_HOOK_ON_A_SPARSE_EMBEDDING)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD152", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("COMBINE")
    assert all(not suggestion.replacement for suggestion in diagnosis.help)
    assert any("runs inside backward" in note for note in diagnosis.notes)


def test_the_hook_adding_a_sparse_term_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, SPARSE_NOISE_HOOK)
    assert outcome.error is None and not outcome.diagnoses


def test_a_name_holding_a_sparse_gradient_is_made_dense_at_the_operand(tmp_path):
    outcome = run_as_script(tmp_path, NAMED_SPARSE_GRADIENT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD152", [d.code for d in outcome.diagnoses]
    assert "gradient.to_dense()" in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, NAMED_SPARSE_GRADIENT_CORRECT, "correct.py")
    assert torch.equal(fixed["embedding"].weight, correct["embedding"].weight)


def test_the_dense_named_gradient_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, NAMED_SPARSE_GRADIENT_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD307 ---------------------------------------------------------------------------------------

# A plain trainer class: prepare() runs the autoencoder under @torch.no_grad() and keeps its
# reconstruction on self; the loss method reads it, and its result is backpropagated directly.
FEATURES_PREPARED_UNDER_NO_GRAD = """
    import torch
    from torch import nn


    class Reconstructor:
        def __init__(self):
            self.encoder = nn.Linear(3, 2)
            self.decoder = nn.Linear(2, 3)
            self.optimizer = torch.optim.SGD([*self.encoder.parameters(), *self.decoder.parameters()], lr=0.1)

        @torch.no_grad()  # DECORATOR
        def prepare(self, x):
            self.reconstruction = self.decoder(torch.tanh(self.encoder(x)))

        def loss(self, x):
            return (self.reconstruction - x).pow(2).mean()


    torch.manual_seed(0)
    model = Reconstructor()
    for _ in range(2):
        x = torch.randn(5, 3)
        model.prepare(x)
        model.optimizer.zero_grad()
        model.loss(x).backward()
        model.optimizer.step()
"""

FEATURES_PREPARED_CORRECT = FEATURES_PREPARED_UNDER_NO_GRAD.replace(
    "        @torch.no_grad()  # DECORATOR\n", "")


def test_an_attribute_stored_by_a_decorated_method_names_the_decorator(tmp_path):
    outcome = run_as_script(tmp_path, FEATURES_PREPARED_UNDER_NO_GRAD)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD307", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("DECORATOR")
    assert any("self.reconstruction" in note for note in diagnosis.notes)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, FEATURES_PREPARED_CORRECT, "correct.py")
    for part in ("encoder", "decoder"):
        fixed_part, correct_part = getattr(fixed["model"], part), getattr(correct["model"], part)
        for mine, theirs in zip(fixed_part.parameters(), correct_part.parameters()):
            assert torch.equal(mine, theirs)


def test_the_undecorated_prepare_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, FEATURES_PREPARED_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD133 ---------------------------------------------------------------------------------------

# A prototype bank (a registered buffer) that a mean embedding with history is appended to, then cut
# back to its length with resize_().
PROTOTYPE_BANK = """
    import torch
    from torch import nn


    class PrototypeBank(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(3, 2)
            self.register_buffer("bank", torch.zeros(3, 2))

        def forward(self, x):
            z = self.embed(x)
            loss = (z @ self.bank.t()).pow(2).mean() + z.pow(2).mean()
            self.bank = torch.cat([z.mean(0, keepdim=True), self.bank])
            self.bank.resize_(3, 2)  # RESIZE
            return loss


    torch.manual_seed(0)
    model = PrototypeBank()
    for _ in range(2):
        model(torch.randn(4, 3)).backward()
"""

PROTOTYPE_BANK_CORRECT = PROTOTYPE_BANK.replace(
    "self.bank = torch.cat([z.mean(0, keepdim=True), self.bank])",
    "self.bank = torch.cat([z.mean(0, keepdim=True).detach(), self.bank])")


def test_a_buffer_holding_history_gets_advice_not_an_out_of_place_resize(tmp_path):
    outcome = run_as_script(tmp_path, PROTOTYPE_BANK)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD133", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RESIZE")
    assert all(not suggestion.replacement for suggestion in diagnosis.help)
    assert any("buffer of PrototypeBank" in note for note in diagnosis.notes)


def test_the_detached_bank_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, PROTOTYPE_BANK_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD131 ---------------------------------------------------------------------------------------

# Gradient centralisation by hand on a per-head projection weight (heads, in, out): the gradient is
# flattened per head with view(), centred, and assigned back without its shape.
CENTRALISED_HEAD_GRADIENT = """
    import torch

    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(4, 2, 3))
    optimizer = torch.optim.SGD([weight], lr=0.1)
    for _ in range(2):
        x = torch.randn(5, 2)
        loss = torch.einsum("bi,hio->bho", x, weight).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        rows = weight.grad.view(weight.size(0), -1)
        weight.grad = rows - rows.mean(1, keepdim=True)  # ASSIGN
        optimizer.step()
"""

CENTRALISED_HEAD_GRADIENT_CORRECT = CENTRALISED_HEAD_GRADIENT.replace(
    "weight.grad = rows - rows.mean(1, keepdim=True)  # ASSIGN",
    "weight.grad = (rows - rows.mean(1, keepdim=True)).view_as(weight)")

# The same sizes, a gradient not computed from the weight's own gradient: no reshape is offered.
UNRELATED_FLAT_GRADIENT = CENTRALISED_HEAD_GRADIENT.replace(
    "weight.grad = rows - rows.mean(1, keepdim=True)  # ASSIGN", "weight.grad = torch.ones(4, 6)  # ASSIGN")


def test_a_gradient_flattened_from_its_own_is_given_its_shape_back(tmp_path):
    outcome = run_as_script(tmp_path, CENTRALISED_HEAD_GRADIENT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD131", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("ASSIGN")
    assert diagnosis.help[0].replacement == "weight.grad = (rows - rows.mean(1, keepdim=True)).reshape_as(weight)"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, CENTRALISED_HEAD_GRADIENT_CORRECT, "correct.py")
    assert torch.equal(fixed["weight"], correct["weight"])


def test_the_reshaped_centralised_gradient_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, CENTRALISED_HEAD_GRADIENT_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_flat_gradient_of_other_origin_gets_no_reshape(tmp_path):
    outcome = run_as_script(tmp_path, UNRELATED_FLAT_GRADIENT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD131", [d.code for d in outcome.diagnoses]
    assert all(not suggestion.replacement for suggestion in diagnosis.help)


# ---- AD118 ---------------------------------------------------------------------------------------

# An L_p sparsity penalty (p = 0.5, kept on the module) on ReLU codes, counted only where a code is
# active: at the inactive codes (exactly 0) the gradient reaching pow is 0 and pow's derivative infinite.
SPARSITY_PENALTY_WITH_POWER_ON_SELF = """
    import torch
    from torch import nn


    class SparseCoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.encode = nn.Linear(4, 6)
            self.power = 0.5

        def forward(self, x):
            codes = torch.relu(self.encode(x))
            active = (codes.detach() > 0).float()
            return (active * codes.pow(self.power)).sum()  # POWER


    torch.manual_seed(0)
    model = SparseCoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with torch.autograd.detect_anomaly():
        for _ in range(2):
            optimizer.zero_grad()
            model(torch.randn(5, 4)).backward()
            optimizer.step()
"""

SPARSITY_PENALTY_CORRECT = SPARSITY_PENALTY_WITH_POWER_ON_SELF.replace(
    "codes.pow(self.power)).sum()  # POWER", "codes.clamp_min(1e-12).pow(self.power)).sum()")


def test_a_power_below_one_given_by_a_name_clamps_its_base(tmp_path):
    outcome = run_as_script(tmp_path, SPARSITY_PENALTY_WITH_POWER_ON_SELF)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD118", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("POWER")
    assert diagnosis.help[0].replacement == "return (active * codes.clamp_min(1e-12).pow(self.power)).sum()"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, SPARSITY_PENALTY_CORRECT, "correct.py")
    for mine, theirs in zip(fixed["model"].parameters(), correct["model"].parameters()):
        assert torch.equal(mine, theirs)


def test_the_clamped_power_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, SPARSITY_PENALTY_CORRECT)
    assert outcome.error is None and not outcome.diagnoses
