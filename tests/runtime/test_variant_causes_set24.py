"""Causes found by held-out variants set 24 (docs/errors.md, "Held-out variants", set 24), each tested on
another program of the same cause (not the variant) and on a correct near-twin.

AD102: an in-place method on a trained leaf whose result the program computes with
(`log_std = self.log_std.clamp_(-5, 1)` in forward, then `log_std.exp()`) got `with torch.no_grad():`
around the write first: the changed program overwrote the trained values and passed the gradient
straight through the clamp (a wrong help). The write's result is a value of the computation, as for
`F.relu(w, inplace=True)`: the first help is the same call out of place; the no_grad form is only
described (a projection of the stored values is the user's choice, not a change of this line). A write
that is a statement of its own (`self.w.clamp_(0, 1)` after `step()`) keeps the no_grad help first.

AD302 (a distribution kept on a module), AD235 (`sample()` where `rsample()` is meant) and AD234 (a
dataclass under has_aux): see each block below."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# A contrastive head whose temperature is bounded inside an expression: the clamp_'s result is an
# operand (of exp()), not bound to a name.
BOUNDED_TEMPERATURE_OPERAND = """
    import torch
    from torch import nn

    class ContrastiveHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 3)
            self.logit_scale = nn.Parameter(torch.tensor(5.0))

        def forward(self, a, b):
            za = nn.functional.normalize(self.proj(a), dim=1)
            zb = nn.functional.normalize(self.proj(b), dim=1)
            return za @ zb.T * self.logit_scale.clamp_(max=4.0).exp()  # WRITE

    torch.manual_seed(0)
    head = ContrastiveHead()
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    a, b = torch.randn(6, 4), torch.randn(6, 4)
    labels = torch.arange(6)
    losses = []
    for step in range(3):
        loss = nn.functional.cross_entropy(head(a, b), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    scale = head.logit_scale.detach().clone()
    weight = head.proj.weight.detach().clone()
    losses = torch.stack(losses)
"""

BOUNDED_TEMPERATURE_OUT_OF_PLACE = BOUNDED_TEMPERATURE_OPERAND.replace(
    "self.logit_scale.clamp_(max=4.0).exp()  # WRITE", "self.logit_scale.clamp(max=4.0).exp()  # WRITE")

# The projection as a statement of its own, after the step, without no_grad: the stored values are what
# the user changes (the no_grad help stays first and is right).
PROJECTION_AFTER_STEP = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(8, 4)
    optimizer = torch.optim.SGD([w], lr=0.5)
    for step in range(3):
        loss = (x @ w).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        w.clamp_(-0.5, 0.5)  # WRITE
    final = w.detach().clone()
"""

PROJECTION_AFTER_STEP_CORRECT = PROJECTION_AFTER_STEP.replace(
    "        w.clamp_(-0.5, 0.5)  # WRITE", "        with torch.no_grad():\n            w.clamp_(-0.5, 0.5)  # WRITE")


def test_an_inplace_result_used_as_an_operand_is_computed_out_of_place(tmp_path):
    outcome = run_as_script(tmp_path, BOUNDED_TEMPERATURE_OPERAND)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert "no_grad" not in (diagnosis.help[0].replacement or ""), diagnosis.help[0]
    assert all("no_grad" not in (help.replacement or "") for help in diagnosis.help)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, BOUNDED_TEMPERATURE_OUT_OF_PLACE, "correct.py")
    for name in ("scale", "weight", "losses"):
        assert torch.equal(fixed[name], correct[name]), name


def test_the_out_of_place_bound_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, BOUNDED_TEMPERATURE_OUT_OF_PLACE)
    assert outcome.error is None and not outcome.diagnoses


def test_a_projection_written_as_its_own_statement_keeps_the_no_grad_help(tmp_path):
    outcome = run_as_script(tmp_path, PROJECTION_AFTER_STEP)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    assert "with torch.no_grad():" in (diagnosis.help[0].replacement or ""), diagnosis.help[0]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, PROJECTION_AFTER_STEP_CORRECT, "correct.py")
    assert torch.equal(fixed["final"], correct["final"])


def test_the_projection_under_no_grad_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, PROJECTION_AFTER_STEP_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# AD302: a torch.distributions object built once from parameters and kept on a module
# (`self.noise = Normal(0, self.log_sigma.exp())` in __init__) holds the exp()'s result, and every later
# call goes through the graph the first backward() freed. The doctor did not look into a distribution
# for the tensors it keeps and gave advice at the backward(); it now names the line that builds it.
NOISE_DISTRIBUTION_KEPT = """
    import torch
    from torch import nn
    from torch.distributions import Normal

    class NoisyPolicy(nn.Module):
        def __init__(self):
            super().__init__()
            self.mean = nn.Linear(3, 2)
            self.log_sigma = nn.Parameter(torch.zeros(2))
            self.noise = Normal(torch.zeros(2), self.log_sigma.exp())  # KEPT

        def forward(self, x):
            return self.mean(x) + self.noise.rsample((x.shape[0],))

    torch.manual_seed(0)
    policy = NoisyPolicy()
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    x = torch.randn(4, 3)
    for step in range(2):
        loss = policy(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

NOISE_DISTRIBUTION_PER_CALL = NOISE_DISTRIBUTION_KEPT.replace(
    "            self.noise = Normal(torch.zeros(2), self.log_sigma.exp())  # KEPT\n", "").replace(
    "self.noise.rsample((x.shape[0],))", "Normal(torch.zeros(2), self.log_sigma.exp()).rsample((x.shape[0],))")


def test_a_distribution_kept_on_a_module_is_named_where_it_is_built(tmp_path):
    outcome = run_as_script(tmp_path, NOISE_DISTRIBUTION_KEPT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("KEPT")
    assert "self.noise" in diagnosis.help[0].message
    assert all("retain_graph" not in (help.replacement or "") for help in diagnosis.help)


def test_a_distribution_built_in_every_call_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, NOISE_DISTRIBUTION_PER_CALL)
    assert outcome.error is None and not outcome.diagnoses


# AD235: `jacobian(strict=True)` of a function that returns `Normal(...).sample()`: sample() draws under
# no_grad. Where the distribution's class has a reparameterised sample (has_rsample), the help draws with
# rsample() (the variant); a class without one (Categorical) keeps the advice.
LAPLACE_SAMPLE_BOUND_THEN_RETURNED = """
    import torch
    import torch.distributions as D
    from torch.autograd.functional import jacobian

    def noisy_shift(mu):
        draw = D.Laplace(mu * 2.0, 0.5).sample()  # DRAW
        return draw

    torch.manual_seed(0)
    mu = torch.tensor([0.1, -0.4])
    J = jacobian(noisy_shift, mu, strict=True)
"""

LAPLACE_RSAMPLE = LAPLACE_SAMPLE_BOUND_THEN_RETURNED.replace(".sample()  # DRAW", ".rsample()  # DRAW")

CATEGORICAL_SAMPLE = """
    import torch
    from torch.autograd.functional import jacobian
    from torch.distributions import Categorical

    def pick(logits):
        return Categorical(logits=logits).sample().float()  # DRAW

    J = jacobian(pick, torch.tensor([0.1, 0.3, -0.2]), strict=True)
"""


def test_a_sample_of_a_reparameterisable_distribution_is_drawn_with_rsample(tmp_path):
    outcome = run_as_script(tmp_path, LAPLACE_SAMPLE_BOUND_THEN_RETURNED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD235", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("DRAW")
    assert ".rsample()" in (diagnosis.help[0].replacement or ""), diagnosis.help[0]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, LAPLACE_RSAMPLE, "correct.py")
    assert torch.equal(fixed["J"], correct["J"])
    assert torch.equal(correct["J"], 2.0 * torch.eye(2))


def test_the_rsample_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, LAPLACE_RSAMPLE)
    assert outcome.error is None and not outcome.diagnoses


def test_a_distribution_without_rsample_gets_no_change(tmp_path):
    outcome = run_as_script(tmp_path, CATEGORICAL_SAMPLE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD235", [d.code for d in outcome.diagnoses]
    assert all("rsample" not in (help.replacement or "") for help in diagnosis.help)


# AD234: a @dataclass returned under has_aux is named, with its one scalar field as the output; no
# concrete change (a dataclass cannot be the aux either, and the caller reads its fields).
DATACLASS_UNDER_GRAD_AND_VALUE = """
    from dataclasses import dataclass

    import torch
    from torch.func import grad_and_value

    @dataclass
    class Out:
        prediction: torch.Tensor
        objective: torch.Tensor

    def fit(w, x):
        prediction = x @ w
        return Out(prediction, prediction.pow(2).mean())  # RETURN

    g, aux = grad_and_value(fit, has_aux=True)(torch.ones(3), torch.randn(4, 3))
"""

DATACLASS_FIELDS_RETURNED_AS_A_PAIR = DATACLASS_UNDER_GRAD_AND_VALUE.replace(
    "return Out(prediction, prediction.pow(2).mean())  # RETURN",
    "return prediction.pow(2).mean(), {\"prediction\": prediction}  # RETURN")


def test_a_dataclass_under_has_aux_is_named_with_its_scalar_field(tmp_path):
    outcome = run_as_script(tmp_path, DATACLASS_UNDER_GRAD_AND_VALUE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD234", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURN")
    assert "objective" in diagnosis.help[0].message and "prediction" in diagnosis.help[0].message
    assert all(help.replacement is None for help in diagnosis.help)


def test_the_fields_returned_as_a_pair_stay_silent(tmp_path):
    outcome = run_as_script(tmp_path, DATACLASS_FIELDS_RETURNED_AS_A_PAIR)
    assert outcome.error is None and not outcome.diagnoses
