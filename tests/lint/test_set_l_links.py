"""Set L (docs/lint.md, fourteenth check): its one finding, CogDL's
`self.emb.requires_grad = False` on an `nn.Embedding` (re-created in r200), was
real.  The same mistake written the other common ways was missed: on the loop
variable of `for m in model.modules()` (or `.children()`, `.named_modules()`,
`.named_children()`, `._modules.items()`), on an item of a module container (`self.layers[0]`),
and on a `torchvision.models` constructor's result.  ADL016 now knows those
objects are modules; each claim below is run with torch (torchvision is not
installed here, so its case is checked by the linter only)."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.fixes import fix_source

FREEZE_BY_LOOP = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
            self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
            self.head = nn.Linear(4, 2)
            for m in self.backbone.modules():
                m.requires_grad = False
            self.blocks[0].requires_grad = False

        def forward(self, x):
            h = self.backbone(x)
            for block in self.blocks:
                h = torch.tanh(block(h))
            return self.head(h)

    def train_step(model, x):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss
    """)


def _train_once(source: str):
    namespace: dict = {}
    exec(compile(source, "classifier.py", "exec"), namespace)
    torch.manual_seed(0)
    model = namespace["Classifier"]()
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    loss = namespace["train_step"](model, torch.randn(5, 3))
    return model, before, loss.detach()


def test_loop_over_modules_and_container_item_are_reported_and_freeze_nothing():
    findings = lint_source(FREEZE_BY_LOOP, "classifier.py")
    assert [(f.line, f.code) for f in findings] == [(12, "ADL016"), (13, "ADL016")]
    assert "the parameters of `m` still require grad" in findings[0].message
    assert "the parameters of `self.blocks[0]` still require grad" in findings[1].message
    model, before, _ = _train_once(FREEZE_BY_LOOP)
    assert model.backbone[0].weight.requires_grad and model.blocks[0].weight.requires_grad
    assert not torch.equal(before["backbone.0.weight"], model.backbone[0].weight)  # "frozen", moved
    assert not torch.equal(before["blocks.0.weight"], model.blocks[0].weight)


def test_fix_freezes_them_with_the_loss_and_gradients_of_a_reference():
    fixed, _ = fix_source(FREEZE_BY_LOOP, lambda t: lint_source(t, "classifier.py"), unsafe=True)
    assert "            m.requires_grad_(False)\n" in fixed
    assert "        self.blocks[0].requires_grad_(False)\n" in fixed
    assert lint_source(fixed, "classifier.py") == []
    model, before, loss = _train_once(fixed)
    for name in ("backbone.0.weight", "backbone.2.bias", "blocks.0.weight", "blocks.0.bias"):
        assert torch.equal(before[name], model.state_dict()[name])  # frozen
    # reference written by hand: the frozen layers' weights as constants
    torch.manual_seed(0)
    ref = type(model)()
    x = torch.randn(5, 3)
    b0, b2, k0 = ref.backbone[0], ref.backbone[2], ref.blocks[0]
    h = torch.nn.functional.linear(torch.tanh(torch.nn.functional.linear(
        x, b0.weight.detach(), b0.bias.detach())), b2.weight.detach(), b2.bias.detach())
    h = torch.tanh(torch.nn.functional.linear(h, k0.weight.detach(), k0.bias.detach()))
    h = torch.tanh(ref.blocks[1](h))
    expected = ref.head(h).pow(2).sum()
    expected.backward()
    assert torch.equal(loss, expected.detach())
    assert torch.equal(model.blocks[1].weight.grad, ref.blocks[1].weight.grad)
    assert torch.equal(model.head.weight.grad, ref.head.weight.grad)
    assert model.backbone[0].weight.grad is None and model.blocks[0].weight.grad is None


def test_named_loops_and_children_are_reported():
    source = textwrap.dedent("""
        import torch.nn as nn

        def freeze(model: nn.Module, names):
            for name, module in model.named_modules():
                if name in names:
                    module.requires_grad = False
            for _, child in model.named_children():
                child.requires_grad = False
            for child in model.children():
                child.require_grad = False
            for _, child in model._modules.items():
                child.requires_grad = False
        """)
    assert [(f.line, f.code) for f in lint_source(source, "freeze.py")] == \
        [(7, "ADL016"), (9, "ADL016"), (11, "ADL016"), (13, "ADL016")]
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    for _, child in model.named_children():
        child.requires_grad = False
    assert all(p.requires_grad for p in model.parameters())  # the same line, run: nothing frozen


def test_torchvision_model_is_a_module():
    source = textwrap.dedent("""
        import torchvision

        def backbone():
            net = torchvision.models.resnet18(weights=None)
            net.requires_grad = False
            weights = torchvision.models.get_weight("ResNet18_Weights.DEFAULT")
            weights.requires_grad = False
            return net
        """)
    assert [(f.line, f.code) for f in lint_source(source, "backbone.py")] == [(6, "ADL016")]


def test_parameters_rebound_names_and_classes_with_their_own_setting_are_silent():
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(3, 3)
                self.requires_grad = True

            def forward(self, x):
                return self.proj(x) if self.requires_grad else self.proj(x).detach()

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.gates = nn.ModuleList([Gate(), Gate()])
                for m in self.modules():
                    if isinstance(m, Gate):
                        m.requires_grad = False
                self.gates[1].requires_grad = False

        def freeze(model: nn.Module):
            for p in model.parameters():
                p.requires_grad = False
            for name, p in model.named_parameters():
                p.requires_grad = False
            for name, m in model.named_modules():
                if isinstance(m, nn.Linear):
                    m.weight.requires_grad = False
            for m in model.modules():
                m = getattr(m, "weight", None)
                if m is not None:
                    m.requires_grad = False
        """)
    assert lint_source(source, "net.py") == []
    namespace: dict = {}
    exec(compile(source, "net.py", "exec"), namespace)
    net = namespace["Net"]()
    x = torch.randn(2, 3)
    assert not net.gates[0](x).requires_grad and not net.gates[1](x).requires_grad  # their own setting
    namespace["freeze"](net)
    assert not any(p.requires_grad for p in net.parameters())
