"""ADL016 on programs that run: the line it reports really leaves the
gradients other than meant, its unsafe fix makes them what was meant (same
values, gradients equal to a reference written by hand), and the no-op typo
it stays silent on really changes nothing."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.fixes import fix_source

DISTILL = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def distill(student, teacher, x):
        teacher.eval()
        teacher.requires_grad_ = False
        loss = (student(x) - teacher(x)).pow(2).sum()
        loss.backward()
        return loss
    """)


def _run(source: str):
    torch.manual_seed(0)
    student, teacher = torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)
    x = torch.randn(4, 3)
    namespace: dict = {}
    exec(compile(source, "distill.py", "exec"), namespace)
    loss = namespace["distill"](student, teacher, x)
    return loss.detach(), student, teacher, x


def test_shadowed_method_is_reported_and_really_freezes_nothing():
    (finding,) = [f for f in lint_source(DISTILL, "distill.py") if f.code == "ADL016"]
    assert finding.line == 7
    assert "replaces the method `requires_grad_` of `teacher`" in finding.message
    assert finding.fix is not None and finding.fix.message == "call `teacher.requires_grad_(False)`"
    _, _, teacher, _ = _run(DISTILL)
    assert teacher.weight.requires_grad and teacher.weight.grad is not None  # trained
    with pytest.raises(TypeError, match="not callable"):
        teacher.requires_grad_(True)


def test_fix_freezes_the_teacher_with_the_same_loss_and_student_gradients():
    fixed, _ = fix_source(DISTILL, lambda t: lint_source(t, "distill.py"), unsafe=True)
    assert "    teacher.requires_grad_(False)\n" in fixed
    assert [f.code for f in lint_source(fixed, "distill.py")] == []
    loss, student, teacher, x = _run(fixed)
    assert not teacher.weight.requires_grad and teacher.weight.grad is None
    # reference: the teacher's output as a constant
    torch.manual_seed(0)
    ref_student, ref_teacher = torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)
    ref_x = torch.randn(4, 3)
    ref = (ref_student(ref_x) - ref_teacher(ref_x).detach()).pow(2).sum()
    ref.backward()
    assert torch.equal(loss, ref.detach())
    assert torch.equal(student.weight.grad, ref_student.weight.grad)
    assert torch.equal(student.bias.grad, ref_student.bias.grad)


def test_misspelt_attribute_on_a_parameter_is_fixed_by_renaming():
    source = textwrap.dedent("""
        import torch.nn as nn

        def freeze(model: nn.Module):
            for p in model.parameters():
                p.require_grad = False
        """)
    (finding,) = lint_source(source, "freeze.py")
    assert finding.code == "ADL016" and "`p` still requires grad" in finding.message
    fixed, _ = fix_source(source, lambda t: lint_source(t, "freeze.py"), unsafe=True)
    assert "p.requires_grad = False" in fixed
    for text, frozen in ((source, False), (fixed, True)):
        namespace: dict = {}
        exec(compile(text, "freeze.py", "exec"), namespace)
        model = torch.nn.Linear(3, 3)
        namespace["freeze"](model)
        assert all(p.requires_grad != frozen for p in model.parameters())


def test_object_of_unknown_kind_is_silent():
    # the argument could be anything: nothing shows it to be a module or a tensor
    source = "def distill(student, teacher, x):\n    teacher.requires_grad_ = False\n"
    assert lint_source(source, "distill.py") == []


def test_no_op_typo_on_a_fresh_tensor_is_silent_and_changes_nothing():
    source = textwrap.dedent("""
        import torch

        def table():
            pe = torch.zeros(4, 3).float()
            pe.require_grad = False
            return pe
        """)
    assert lint_source(source, "pe.py") == []
    namespace: dict = {}
    exec(compile(source, "pe.py", "exec"), namespace)
    pe = namespace["table"]()
    assert pe.requires_grad is False  # what the misspelt line meant, already true


def test_keyword_typo_stays_a_safe_fix():
    source = "import torch\nz = torch.zeros(3, require_grad=True)\n"
    (finding,) = lint_source(source, "z.py")
    assert finding.fix.safe
    fixed, _ = fix_source(source, lambda t: lint_source(t, "z.py"), unsafe=False)
    namespace: dict = {}
    exec(compile(fixed, "z.py", "exec"), namespace)
    assert namespace["z"].requires_grad


def test_misspelt_attribute_on_a_module_is_fixed_by_calling_requires_grad_():
    source = textwrap.dedent("""
        import torch.nn as nn

        def freeze(encoder: nn.Module):
            encoder.require_grad = False
        """)
    (finding,) = lint_source(source, "freeze.py")
    assert "the parameters of `encoder` still require grad" in finding.message
    fixed, _ = fix_source(source, lambda t: lint_source(t, "freeze.py"), unsafe=True)
    assert "    encoder.requires_grad_(False)\n" in fixed
    # renaming the attribute would not do: a module has no `requires_grad` to set
    renamed = source.replace("require_grad", "requires_grad")
    for text, frozen in ((source, False), (renamed, False), (fixed, True)):
        namespace: dict = {}
        exec(compile(text, "freeze.py", "exec"), namespace)
        model = torch.nn.Linear(3, 3)
        namespace["freeze"](model)
        assert all(p.requires_grad != frozen for p in model.parameters())


HEAD_FROZEN_BY_ATTRIBUTE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(3, 3)
            self.head = nn.Linear(3, 2)

        def forward(self, x):
            return self.head(torch.tanh(self.body(x)))

    class Trainer:
        def __init__(self):
            self.model = Net()
            self.model.head.requires_grad = False
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

        def step(self, x):
            self.optimizer.zero_grad()
            loss = self.model(x).pow(2).sum()
            loss.backward()
            self.optimizer.step()
            return loss
    """)


def _train_once(source: str):
    namespace: dict = {}
    exec(compile(source, "trainer.py", "exec"), namespace)
    torch.manual_seed(0)
    trainer = namespace["Trainer"]()
    head_before = trainer.model.head.weight.detach().clone()
    body_before = trainer.model.body.weight.detach().clone()
    loss = trainer.step(torch.randn(4, 3))
    return trainer, head_before, body_before, loss.detach()


def test_requires_grad_set_on_a_held_module_is_reported_and_freezes_nothing():
    (finding,) = lint_source(HEAD_FROZEN_BY_ATTRIBUTE, "trainer.py")
    assert finding.code == "ADL016" and finding.line == 17
    assert "a module has no attribute `requires_grad`" in finding.message
    assert "the parameters of `self.model.head` still require grad" in finding.message
    trainer, head_before, _, _ = _train_once(HEAD_FROZEN_BY_ATTRIBUTE)
    assert trainer.model.head.weight.requires_grad
    assert not torch.equal(head_before, trainer.model.head.weight)  # the "frozen" head moved


def test_requires_grad_on_a_module_fix_freezes_it_with_the_loss_and_gradients_of_a_reference():
    fixed, _ = fix_source(HEAD_FROZEN_BY_ATTRIBUTE, lambda t: lint_source(t, "trainer.py"), unsafe=True)
    assert "        self.model.head.requires_grad_(False)\n" in fixed
    assert lint_source(fixed, "trainer.py") == []
    trainer, head_before, _, loss = _train_once(fixed)
    assert torch.equal(head_before, trainer.model.head.weight.detach())  # frozen
    # reference written by hand: the head's weights as constants, SGD on the body
    torch.manual_seed(0)
    body, head = torch.nn.Linear(3, 3), torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    ref = torch.nn.functional.linear(torch.tanh(body(x)), head.weight.detach(), head.bias.detach()).pow(2).sum()
    ref.backward()
    assert torch.equal(loss, ref.detach())
    assert torch.equal(trainer.model.body.weight.grad, body.weight.grad)
    assert torch.equal(trainer.model.body.bias.grad, body.bias.grad)
    assert trainer.model.head.weight.grad is None


def test_requires_grad_on_a_module_with_its_own_setting_or_on_a_parameter_is_silent():
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
                self.gate = Gate()
                self.gate.requires_grad = False
                self.pos = nn.Parameter(torch.zeros(3))
                self.pos.requires_grad = False
        """)
    assert lint_source(source, "net.py") == []
    namespace: dict = {}
    exec(compile(source, "net.py", "exec"), namespace)
    net = namespace["Net"]()
    assert not net.pos.requires_grad  # a parameter has the attribute: this line works
    assert not net.gate(torch.randn(2, 3)).requires_grad  # the module reads its own setting
