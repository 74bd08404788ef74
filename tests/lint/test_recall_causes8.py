"""Causes left open by r422-r443 (docs/lint.md, "Causes left open by r422-r443").

* ADL003 with the model and the optimizer handed in as parameters (the
  optimizer built in another file, so whose parameters it holds is unknown
  from its construction): the optimizer zeroed just before a first loss's
  `backward(retain_graph=True)`, stepped, then a second loss backpropagated
  through a value computed before the step.  The step updates parameters the
  first backward gave gradients to; when every callable that the first loss
  was computed with also computed the shared value, those parameters lie in
  the shared value's graph, which saved their old values: the second backward
  fails ("modified by an inplace operation").

Each cause: the plain form and two fresh programs in other shapes (written
before the rule was run on them), buggy -> a finding at the line, correct ->
silent, and each claim run with torch against a hand-written reference."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "causes8.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "causes8.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ----- ADL003: model and optimizer handed in as parameters --------------------

# the plain one-function form: `def train(model, optimizer, loader)`, a main
# loss and a second loss on the same output, stepped between the two
TRAIN_STEPS_BETWEEN_LOSSES = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def train(model, optimizer, loader):
        for x, y in loader:
            out = model(x)
            loss = F.mse_loss(out, y)
            optimizer.zero_grad()
            loss.backward(retain_graph=True)
            optimizer.step()
            penalty = out.abs().mean()
            penalty.backward()
            optimizer.step()
    """)

TRAIN_ONE_BACKWARD = TRAIN_STEPS_BETWEEN_LOSSES.replace("""\
        loss.backward(retain_graph=True)
        optimizer.step()
        penalty = out.abs().mean()
        penalty.backward()
        optimizer.step()
""", """\
        penalty = out.abs().mean()
        (loss + penalty).backward()
        optimizer.step()
""")

# fresh 1: a trainer class that is handed the network and its optimizer, the
# step in a method, the second loss a regulariser of the features
TRAINER_HANDED_NETWORK = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    class Trainer:
        def __init__(self, net, opt, weight=0.5):
            self.net = net
            self.opt = opt
            self.weight = weight

        def fit_batch(self, x, y):
            feats = self.net(x)
            self.opt.zero_grad()
            main_loss = F.mse_loss(feats, y)
            main_loss.backward(retain_graph=True)
            self.opt.step()
            reg = self.weight * feats.pow(2).mean()
            reg.backward()
            self.opt.step()
            return main_loss.item()
    """)

TRAINER_RECOMPUTES = TRAINER_HANDED_NETWORK.replace("""\
        reg = self.weight * feats.pow(2).mean()
""", """\
        reg = self.weight * self.net(x).pow(2).mean()
""")

# fresh 2: keyword parameters, a while loop, the second backward of a scaled
# KL-like term through an intermediate `z` and a sum
ENCODER_WHILE_LOOP = textwrap.dedent("""
    import torch


    def fit(*, encoder, opt, batches, beta=0.1):
        i = 0
        while i < len(batches):
            batch, target = batches[i]
            z = encoder(batch)
            recon = ((z - target) ** 2).sum(dim=1).mean()
            opt.zero_grad()
            recon.backward(retain_graph=True)
            opt.step()
            kl = (z ** 2).sum(dim=1).mean()
            (beta * kl).backward()
            opt.step()
            i += 1
    """)

ENCODER_BACKWARD_FIRST = ENCODER_WHILE_LOOP.replace("""\
        recon.backward(retain_graph=True)
        opt.step()
        kl = (z ** 2).sum(dim=1).mean()
        (beta * kl).backward()
        opt.step()
""", """\
        recon.backward(retain_graph=True)
        kl = (z ** 2).sum(dim=1).mean()
        (beta * kl).backward()
        opt.step()
""")

# the first loss also calls a second callable (`head`) that the shared value
# did not: the optimizer may hold `head`'s parameters only, and then the step
# leaves `feat`'s graph alone; unknown, so silent
HEAD_AND_ENCODER = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def train(encoder, head, optimizer, x, y):
        feat = encoder(x)
        loss = F.cross_entropy(head(feat), y)
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
        feat.pow(2).mean().backward()
    """)


def test_adl003_parameters_plain_form_is_reported_and_its_fix_is_silent():
    assert (_line_of(TRAIN_STEPS_BETWEEN_LOSSES, "optimizer.step()"), "ADL003") in _codes(TRAIN_STEPS_BETWEEN_LOSSES)
    assert _codes(TRAIN_ONE_BACKWARD) == []


def test_adl003_parameters_trainer_class_is_reported_and_its_fix_is_silent():
    assert (_line_of(TRAINER_HANDED_NETWORK, "self.opt.step()"), "ADL003") in _codes(TRAINER_HANDED_NETWORK)
    assert _codes(TRAINER_RECOMPUTES) == []


def test_adl003_parameters_keyword_while_loop_is_reported_and_its_fix_is_silent():
    assert (_line_of(ENCODER_WHILE_LOOP, "opt.step()"), "ADL003") in _codes(ENCODER_WHILE_LOOP)
    assert _codes(ENCODER_BACKWARD_FIRST) == []


def test_adl003_parameters_first_loss_through_another_callable_is_silent():
    assert _codes(HEAD_AND_ENCODER) == []


def _sgd_reference(model, batches, loss_of, lr):
    """One SGD step per batch on the summed loss, by hand."""
    params = [p.detach().clone() for p in model.parameters()]
    for x, y in batches:
        live = [p.clone().requires_grad_() for p in params]
        out = torch.func.functional_call(model, dict(zip([n for n, _ in model.named_parameters()], live)), (x,))
        grads = torch.autograd.grad(loss_of(out, y), live)
        params = [p - lr * g for p, g in zip(params, grads)]
    return params


def _two_layers():
    # two layers: the second one's weight is saved (its input requires grad);
    # a single layer on data saves only the input, and its step breaks nothing
    return torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))


def _batches(count=3):
    torch.manual_seed(0)
    return [(torch.randn(4, 3), torch.randn(4, 3)) for _ in range(count)]


@pytest.mark.parametrize("buggy, fixed, call, loss_of", [
    (TRAIN_STEPS_BETWEEN_LOSSES, TRAIN_ONE_BACKWARD,
     lambda ns, model, opt, batches: ns["train"](model, opt, batches),
     lambda out, y: torch.nn.functional.mse_loss(out, y) + out.abs().mean()),
    (TRAINER_HANDED_NETWORK, TRAINER_RECOMPUTES,
     lambda ns, model, opt, batches: [ns["Trainer"](model, opt).fit_batch(x, y) for x, y in batches],
     None),
    (ENCODER_WHILE_LOOP, ENCODER_BACKWARD_FIRST,
     lambda ns, model, opt, batches: ns["fit"](encoder=model, opt=opt, batches=batches),
     lambda out, y: ((out - y) ** 2).sum(dim=1).mean() + 0.1 * (out ** 2).sum(dim=1).mean()),
])
def test_adl003_parameters_claims_run_with_torch(buggy, fixed, call, loss_of):
    batches = _batches()
    torch.manual_seed(1)
    model = _two_layers()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        call(_namespace(buggy), model, torch.optim.SGD(model.parameters(), lr=0.1), batches)
    torch.manual_seed(1)
    model = _two_layers()
    if loss_of is None:
        # the trainer's fix takes two steps per batch: the main loss's, then the
        # regulariser's on the stepped weights, with the main loss's gradient
        # still there (nothing clears it between the two steps)
        reference = [p.detach().clone() for p in model.parameters()]
        names = [n for n, _ in model.named_parameters()]

        def grads_at(params, x, loss_of_out):
            live = [p.clone().requires_grad_() for p in params]
            out = torch.func.functional_call(model, dict(zip(names, live)), (x,))
            return torch.autograd.grad(loss_of_out(out), live)

        for x, y in batches:
            main = grads_at(reference, x, lambda out: torch.nn.functional.mse_loss(out, y))
            reference = [p - 0.1 * g for p, g in zip(reference, main)]
            reg = grads_at(reference, x, lambda out: 0.5 * out.pow(2).mean())
            reference = [p - 0.1 * (g + h) for p, g, h in zip(reference, main, reg)]
    else:
        reference = _sgd_reference(model, batches, loss_of, 0.1)
    call(_namespace(fixed), model, torch.optim.SGD(model.parameters(), lr=0.1), batches)
    for got, want in zip(model.parameters(), reference):
        torch.testing.assert_close(got.detach(), want)


# ----- ADL026: one optimizer stepped twice with no backward pass between ------

# r442's form: the second step in the `else` of an `if` right after the first
DISCRIMINATOR_STEPPED_TWICE = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def discriminator_step(discriminator, discr_optimizer, discr_scheduler, fake, real, warmup):
        discr_optimizer.zero_grad()
        loss = (F.relu(1 + discriminator(fake)) + F.relu(1 - discriminator(real))).mean()
        loss.backward()
        discr_optimizer.step()
        if warmup:
            discr_scheduler.step()
        else:
            discr_optimizer.step()
    """)

DISCRIMINATOR_STEPPED_ONCE = DISCRIMINATOR_STEPPED_TWICE.replace("""\
    else:
        discr_optimizer.step()
""", """\
    else:
        discr_scheduler.step()
""")

# fresh 1: a trainer method, the second step nested in a `with` inside an `if`,
# after logging that computes values only
TRAINER_STEPS_AGAIN_IN_WITH = textwrap.dedent("""
    import contextlib
    import torch
    import torch.nn.functional as F


    class Trainer:
        def __init__(self, model, lr=0.1):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
            self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=1, gamma=0.5)
            self.history = []

        def train_step(self, x, y, use_schedule=True):
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.history.append(loss.item())
            if use_schedule:
                with contextlib.nullcontext():
                    self.optimizer.step()
            return loss.item()
    """)

TRAINER_SCHEDULES_IN_WITH = TRAINER_STEPS_AGAIN_IN_WITH.replace("""\
                self.optimizer.step()
        return loss.item()
""", """\
                self.scheduler.step()
        return loss.item()
""")

# fresh 2: a script's loop, the two steps in one block with a print between
SCRIPT_STEPS_TWICE = textwrap.dedent("""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    data = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(3)]
    for x, y in data:
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        print(float(loss))
        opt.step()
    """)

SCRIPT_STEPS_ONCE = SCRIPT_STEPS_TWICE.replace("""\
    print(float(loss))
    opt.step()
""", """\
    print(float(loss))
""")

# a second backward pass between the two steps (sharpness-aware minimisation's
# two steps, a second loss): each step has gradients of its own; silent
STEP_BACKWARD_STEP = textwrap.dedent("""
    import torch


    def two_updates(net, opt, x, y):
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        opt.step()
        if True:
            opt.zero_grad()
            net(x).abs().mean().backward()
            opt.step()
    """)


def test_adl026_second_step_in_else_is_reported_and_its_fix_is_silent():
    line = DISCRIMINATOR_STEPPED_TWICE.splitlines().index("        discr_optimizer.step()") + 1
    assert (line, "ADL026") in _codes(DISCRIMINATOR_STEPPED_TWICE)
    assert _codes(DISCRIMINATOR_STEPPED_ONCE) == []


def test_adl026_second_step_in_a_with_is_reported_and_its_fix_is_silent():
    line = TRAINER_STEPS_AGAIN_IN_WITH.splitlines().index("                self.optimizer.step()") + 1
    assert (line, "ADL026") in _codes(TRAINER_STEPS_AGAIN_IN_WITH)
    assert _codes(TRAINER_SCHEDULES_IN_WITH) == []


def test_adl026_second_step_in_one_block_is_reported_and_its_fix_is_silent():
    lines = SCRIPT_STEPS_TWICE.splitlines()
    line = len(lines) - lines[::-1].index("    opt.step()")
    assert (line, "ADL026") in _codes(SCRIPT_STEPS_TWICE)
    assert _codes(SCRIPT_STEPS_ONCE) == []


def test_adl026_backward_between_two_steps_is_silent():
    assert _codes(STEP_BACKWARD_STEP) == []


def _adam_once_per_batch(net, data, lr):
    """Adam's update by hand (PyTorch's defaults), one per batch."""
    params = [p.detach().clone() for p in net.parameters()]
    names = [n for n, _ in net.named_parameters()]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for t, (x, y) in enumerate(data, 1):
        live = [p.clone().requires_grad_() for p in params]
        out = torch.func.functional_call(net, dict(zip(names, live)), (x,))
        grads = torch.autograd.grad(((out - y) ** 2).mean(), live)
        for k, g in enumerate(grads):
            m[k] = 0.9 * m[k] + 0.1 * g
            v[k] = 0.999 * v[k] + 0.001 * g * g
            m_hat, v_hat = m[k] / (1 - 0.9 ** t), v[k] / (1 - 0.999 ** t)
            params[k] = params[k] - lr * m_hat / (v_hat.sqrt() + 1e-8)
    return params


def test_adl026_double_step_claims_run_with_torch(capsys):
    buggy, fixed = _namespace(SCRIPT_STEPS_TWICE), _namespace(SCRIPT_STEPS_ONCE)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    data = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(3)]
    reference = _adam_once_per_batch(net, data, 0.01)
    for got, want in zip(fixed["net"].parameters(), reference):
        torch.testing.assert_close(got.detach(), want)
    assert any(not torch.allclose(b, c) for b, c in zip(buggy["net"].parameters(), fixed["net"].parameters()))


def test_adl026_trainer_double_step_claims_run_with_torch():
    namespace_buggy, namespace_fixed = _namespace(TRAINER_STEPS_AGAIN_IN_WITH), _namespace(TRAINER_SCHEDULES_IN_WITH)
    results = []
    for namespace in (namespace_buggy, namespace_fixed):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        trainer = namespace["Trainer"](model, lr=0.1)
        torch.manual_seed(1)
        for _ in range(2):
            trainer.train_step(torch.randn(4, 3), torch.randn(4, 1))
        results.append([p.detach().clone() for p in model.parameters()])
    # by hand: SGD at lr 0.1 then 0.05 (the scheduler halves it after each step)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    params = [p.detach().clone() for p in model.parameters()]
    names = [n for n, _ in model.named_parameters()]
    torch.manual_seed(1)
    for lr in (0.1, 0.05):
        x, y = torch.randn(4, 3), torch.randn(4, 1)
        live = [p.clone().requires_grad_() for p in params]
        out = torch.func.functional_call(model, dict(zip(names, live)), (x,))
        grads = torch.autograd.grad(torch.nn.functional.mse_loss(out, y), live)
        params = [p - lr * g for p, g in zip(params, grads)]
    for got, want in zip(results[1], params):
        torch.testing.assert_close(got, want)
    assert any(not torch.allclose(b, c) for b, c in zip(results[0], results[1]))
