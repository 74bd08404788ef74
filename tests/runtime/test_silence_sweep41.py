"""Correct code next to what stop 41's new run-time checks read, written for the silence sweep of
that stop (docs/real-code.md, "Silence sweep after stop 41's checks"): AD318 (a no_grad block
inside a forward-mode torch.func transform), AD319 (backward hooks' returns), AD320 (a loss seeded
with itself), the recorder of module casts to half precision (AD151) and AD206's route through
`autograd.grad` without `create_graph`. Each program stays silent in every mode, fails in none,
and its results are bitwise those of a plain run; the buggy twins (a no_grad block over the
transformed input, a loss seeded with itself) are still found."""

import pytest

from helpers import grads_equal, run_plain, run_program

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

CORRECT = {
    # Sharpness-aware minimisation: autograd.grad without create_graph gives a perturbation
    # direction meant as a constant; GradNorm-style task weights from two gradient norms, detached.
    "SAM perturbation and detached task weights from autograd.grad": """
        import torch

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 2)
        params = list(model.parameters())
        for step in range(3):
            loss = torch.nn.functional.mse_loss(model(x), y)
            grads = torch.autograd.grad(loss, params)
            norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
            eps = [0.05 * g / (norm + 1e-12) for g in grads]
            with torch.no_grad():
                for p, e in zip(params, eps):
                    p.add_(e)
            opt.zero_grad()
            out = model(x)
            l1 = torch.nn.functional.mse_loss(out[:, 0], y[:, 0])
            l2 = torch.nn.functional.mse_loss(out[:, 1], y[:, 1])
            g1 = torch.autograd.grad(l1, params[-2], retain_graph=True)[0]
            g2 = torch.autograd.grad(l2, params[-2], retain_graph=True)[0]
            w1 = (g2.norm() / (g1.norm() + g2.norm())).detach()
            total = w1 * l1 + (1 - w1) * l2
            total.backward()
            with torch.no_grad():
                for p, e in zip(params, eps):
                    p.sub_(e)
            opt.step()
        grads = [p.grad for p in params] + [p.detach().clone() for p in params]
    """,
    # Forward mode over a function whose no_grad block reads only values with no tangent (a
    # closed-over weight, a buffer); reverse mode (jacrev) over one whose block reads the input.
    "jvp/jacfwd with a no_grad block over constants, jacrev with one over the input": """
        import torch
        from torch.func import jacfwd, jacrev, jvp

        torch.manual_seed(0)
        w = torch.randn(3, 3)
        running = torch.ones(3)

        def f(x):
            with torch.no_grad():
                scale = w.norm()
                shift = running * 0.5
            return torch.tanh(w @ x / scale + shift)

        def g(x):
            with torch.no_grad():
                c = x.abs().max()
            return torch.sin(x) * c

        x, v = torch.randn(3), torch.randn(3)
        out, tangent = jvp(f, (x,), (v,))
        grads = [out, tangent, jacfwd(f)(x), jacrev(g)(x)]
    """,
    # Backward hooks returning gradients of the right shapes (a full hook's 1-tuple, None, a
    # tensor hook's scaled gradient); a frozen teacher cast to half while the float32 student
    # trains under a GradScaler; per-sample weights as a seed; a seed of ones that is a copy of
    # the loss; the student cast to bfloat16 for inference after training.
    "hooks, a half-precision teacher beside a float32 student, weight seeds": """
        import torch

        torch.manual_seed(0)
        student = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
        teacher = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).half()
        teacher.requires_grad_(False)
        student[0].register_full_backward_hook(lambda m, gi, go: (gi[0].clamp(-1, 1),))
        student[2].register_full_backward_hook(lambda m, gi, go: None)
        student[2].weight.register_hook(lambda g: g * 0.5)
        opt = torch.optim.Adam(student.parameters(), lr=1e-2)
        scaler = torch.amp.GradScaler("cpu")
        x = torch.randn(16, 4, requires_grad=True)
        for step in range(3):
            with torch.no_grad():
                target = teacher(x.detach().half()).float().softmax(-1)
            logits = student(x)
            per_sample = -(target * logits.log_softmax(-1)).sum(-1)
            opt.zero_grad()
            weights = torch.linspace(0.5, 1.5, 16) / 16
            per_sample.backward(weights, retain_graph=True)
            loss = per_sample.mean()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        one = loss.detach().clone()
        one.fill_(1.0)
        student(x).pow(2).mean().backward(one)
        grads = [p.grad.clone() for p in student.parameters()] + [x.grad.clone()]
        student.to(torch.bfloat16)
        with torch.no_grad():
            grads.append(student(x.detach().bfloat16()))
    """,
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(CORRECT))
def test_correct_program_is_silent_and_unchanged(tmp_path, name, mode):
    plain = run_plain(tmp_path, CORRECT[name], "plain.py")
    outcome = run_program(tmp_path, CORRECT[name], **MODES[mode])
    assert outcome.error is None, outcome.error
    assert [d.code for d in outcome.diagnoses] == [] and outcome.warnings == []
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


BUGGY = {
    # The transformed input read inside the no_grad block: forward mode differentiates it anyway.
    "AD318": ("""
        import torch
        from torch.func import jvp

        def g(x):
            with torch.no_grad():
                c = x.abs().max()
            return torch.sin(x) * c

        x, v = torch.randn(3), torch.randn(3)
        tangent = jvp(g, (x,), (v,))[1]
    """, 7),
    "AD320": ("""
        import torch

        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(8, 4)
        for _ in range(2):
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward(loss)
            opt.step()
    """, 10),
}


@pytest.mark.parametrize("code", list(BUGGY))
def test_buggy_twin_is_still_found(tmp_path, code):
    source, line = BUGGY[code]
    outcome = run_program(tmp_path, source)
    assert outcome.error is None, outcome.error
    found = [d for d in outcome.diagnoses if d.code == code]
    assert found, [d.code for d in outcome.diagnoses]
    assert found[0].primary.line == line
