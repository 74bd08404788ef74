"""AD303/AD304 under watch(): the deepcopy and torch.tensor wrappers report at the user's line."""

import textwrap

import pytest
import torch

from helpers import apply_help, run_plain, run_program


def test_deepcopy_of_module_holding_non_leaf(tmp_path):
    outcome = run_program(tmp_path, """
        import copy
        import torch
        from torch import nn

        class Cache:
            pass

        model = nn.Linear(3, 3)
        model.cache = Cache()
        model.cache.h = model(torch.randn(2, 3))  # CREATE
        clone = copy.deepcopy(model)  # COPY
    """)
    assert isinstance(outcome.error, RuntimeError)
    assert "deepcopy" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD303"
    assert diagnosis.primary.line == outcome.line("COPY")
    text = str(diagnosis)
    assert "model.cache.h" in text


def test_torch_tensor_of_losses_added_to_the_loss_named_at_the_line(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        w = torch.ones(3, requires_grad=True)
        l1, l2 = (w * 2).sum(), (w * 3).sum()
        total = (w ** 2).sum() + torch.tensor([l1, l2]).sum()  # COPY
        total.backward()
    """)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD304"
    assert diagnosis.primary.line == outcome.line("COPY")
    assert diagnosis.help[0].replacement == "total = (w ** 2).sum() + torch.stack([l1, l2]).sum()"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(namespace["w"].grad, torch.full((3,), 7.0))  # 2w + 2 + 3: both terms train


def test_a_copy_named_then_averaged_into_the_loss_is_reported(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        w = torch.ones(3, requires_grad=True)
        aux = [(w * 2).sum(), (w * 3).sum()]
        copied = torch.tensor(aux)  # COPY
        loss = (w ** 2).sum() + 0.5 * copied.mean()
        loss.backward()
    """)
    assert [d.code for d in outcome.diagnoses] == ["AD304"]
    assert outcome.diagnosis.primary.line == outcome.line("COPY")
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(namespace["w"].grad, torch.full((3,), 3.25))  # 2w + 0.5 * (2 + 3) / 2


# pytorch-crf's test_reduction_none (docs/real-code.md): a reference built with torch.tensor from
# tensors that require grad, compared with the model's output; a log of the losses; a target.
COPIES_NOT_IN_THE_LOSS = """
    import torch
    w = torch.ones(3, requires_grad=True)
    manual = [(w * 2).sum(), (w * 3).sum()]
    out = torch.stack([(w * 2).sum(), (w * 3).sum()])
    torch.testing.assert_close(out, torch.tensor(manual))  # an expected value
    history = []
    for step in range(3):
        losses = [(w * step).sum(), (w ** 2).sum()]
        history.append(torch.tensor(losses).mean())  # a logged figure
        sum(losses).backward()
    target = torch.tensor(manual)  # a constant target, the copy its author wanted
    torch.nn.functional.mse_loss(out * 1.5, target).backward()
"""


@pytest.mark.parametrize("options", [{}, {"mode": "full"}, {"strict": True}], ids=["light", "full", "strict"])
def test_copies_that_are_not_terms_of_the_loss_are_silent(tmp_path, options):
    outcome = run_program(tmp_path, COPIES_NOT_IN_THE_LOSS, **options)
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == []
    plain = run_plain(tmp_path, textwrap.dedent(COPIES_NOT_IN_THE_LOSS))
    assert torch.equal(outcome.namespace["w"].grad, plain["w"].grad)


def test_torch_tensor_of_plain_values_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        w = torch.ones(3, requires_grad=True)
        values = torch.tensor([(w * 2).sum().item(), 3.0])
        labels = torch.tensor([1, 2, 3])
        frozen = torch.tensor(w.detach())
    """)
    assert [d.code for d in outcome.diagnoses] == []


def test_deepcopy_of_a_module_with_a_computed_weight_copies_its_values_and_keeps_training(tmp_path):
    # A home-made weight norm keeps `self.weight = g * v / |v|` on the module, and the forward
    # uses it. Detaching it where it is stored would make the copy work and stop g and v training;
    # the first help leaves the original alone and gives deepcopy the values through its memo.
    source = """
        import copy
        import torch
        from torch import nn
        torch.manual_seed(0)

        class NormedLinear(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.v = nn.Parameter(torch.randn(n, n))
                self.g = nn.Parameter(torch.ones(n, 1))
                self.refresh()

            def refresh(self):
                self.weight = self.g * self.v / self.v.norm(dim=1, keepdim=True)  # STORED

            def forward(self, z):
                return z @ self.weight.T

        model = NormedLinear(3)
        x = torch.randn(2, 3)
        target_net = copy.deepcopy(model)  # COPY
        loss = (model(x) - target_net(x).detach()).pow(2).sum() + model(x).sum()
        loss.backward()
        result = [loss.detach(), model.v.grad, model.g.grad]
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD303" and diagnosis.primary.line == outcome.line("COPY")
    assert diagnosis.help[0].replacement == (
        "target_net = copy.deepcopy(model, {id(model.weight): model.weight.detach().clone()})")
    fixed = run_plain(tmp_path, apply_help(outcome))
    # The reference builds the copy from the state dict, as the module's author would.
    reference = run_plain(tmp_path, outcome.source.replace(
        "target_net = copy.deepcopy(model)  # COPY",
        "target_net = NormedLinear(3)\ntarget_net.load_state_dict(model.state_dict())\ntarget_net.refresh()"),
        "reference.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], reference["result"]))
    assert fixed["result"][1] is not None and fixed["result"][2] is not None
    # Detaching where it is stored would stop g and v training: that help comes second, conditioned.
    assert any("stored by one method and read by another" in note for note in diagnosis.notes)
    assert diagnosis.help[1].message.startswith("or, if nothing trains through it")
