"""Correct near-twins of stop 42's second-round checks, written for the second silence sweep of that
stop (docs/real-code.md, "Silence sweep after stop 42's second round") before any change: AD302's
leaf made inside an expression (here the leaf IS held and its gradient read), AD103's gradients set
by hand after torch.autograd.grad (here between two optimizers that share weights, in a correct
order), AD318 through nested transforms (here a hessian whose no_grad block reads constants only),
and AD214 at the run's end (here a detach inside a helper that the loop calls only under a
condition, the condition at the call site). Each runs silent in the default, full and strict modes,
with the gradients plain python gives."""

import pytest

from helpers import grads_equal, run_plain, run_program

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

CORRECT = {
    # The leaf is made inside the expression but also bound (walrus) and its gradient read after a
    # loop of backward(retain_graph=True) on one graph.
    "a leaf made inside an expression, held and read later": """
        import torch
        torch.manual_seed(0)
        t = 1 + 3 * (base := torch.rand(20, 1, requires_grad=True))
        w = torch.nn.Parameter(torch.randn(1, 1))
        opt = torch.optim.SGD([w], lr=0.1)
        for i in range(3):
            loss = (t @ w).pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        grads = [base.grad.clone(), w.detach().clone()]
    """,
    # The same leaf kept in a list by a comprehension, every iteration its own graph.
    "leaves made inside a comprehension, kept and stepped": """
        import torch
        torch.manual_seed(0)
        codes = [torch.randn(4, requires_grad=True) for _ in range(3)]
        opt = torch.optim.Adam(codes, lr=0.05)
        target = torch.ones(4)
        for step in range(4):
            loss = sum(((2 * c + 1) - target).pow(2).sum() for c in codes)
            opt.zero_grad(); loss.backward(); opt.step()
        grads = [c.detach().clone() for c in codes]
    """,
    # Gradients of loss_a from autograd.grad, set by hand on the shared trunk, opt_a steps; then a
    # fresh forward for loss_b (after the step), opt_b (trunk + head_b) steps.
    "hand-set .grad loop between two optimizers sharing weights": """
        import torch
        torch.manual_seed(0)
        trunk = torch.nn.Linear(4, 4)
        head_a, head_b = torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)
        opt_a = torch.optim.SGD([*trunk.parameters(), *head_a.parameters()], lr=0.05)
        opt_b = torch.optim.SGD([*trunk.parameters(), *head_b.parameters()], lr=0.05)
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        for it in range(3):
            params_a = [*trunk.parameters(), *head_a.parameters()]
            loss_a = (head_a(trunk(x)) - y).pow(2).mean()
            g_a = torch.autograd.grad(loss_a, params_a)
            opt_a.zero_grad()
            for p, g in zip(params_a, g_a):
                p.grad = g.detach()
            opt_a.step()
            loss_b = (head_b(trunk(x)) + y).abs().mean()
            opt_b.zero_grad()
            loss_b.backward()
            opt_b.step()
        grads = [p.detach().clone() for p in [*trunk.parameters(), *head_a.parameters(), *head_b.parameters()]]
    """,
    # hessian (jacfwd over jacrev) and jvp over grad of functions whose no_grad blocks read only
    # constants (a buffer, a literal), never the differentiated input.
    "hessian with a no_grad block over constants only": """
        import torch
        from torch.func import grad, hessian, jvp
        torch.manual_seed(0)
        A = torch.randn(3, 3)
        A = A @ A.T

        def f(x):
            with torch.no_grad():
                scale = torch.tensor(0.5) * A.diagonal().sum()
                shift = torch.ones(3) * 2.0
            return scale * (x @ A @ x) + (shift * x).sum()

        x = torch.randn(3)
        H = hessian(f)(x)
        v = torch.randn(3)
        _, Hv = jvp(grad(f), (x,), (v,))
        grads = [H, Hv, 2 * 0.5 * A.diagonal().sum() * A]
    """,
    # The detach is unconditional inside the helper; the loop calls the helper only in warm-up.
    "a detach inside a helper called only under a condition": """
        import torch
        torch.manual_seed(0)
        enc = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU())
        head = torch.nn.Linear(6, 1)
        opt_enc = torch.optim.SGD(enc.parameters(), lr=0.01)
        opt_head = torch.optim.SGD(head.parameters(), lr=0.1)

        def frozen_features(x):
            return enc(x).detach()

        x, y = torch.randn(16, 4), torch.randn(16, 1)
        WARMUP = 2
        for epoch in range(5):
            if epoch < WARMUP:
                feats = frozen_features(x)
            else:
                feats = enc(x)
            loss = torch.nn.functional.mse_loss(head(feats), y)
            opt_enc.zero_grad(); opt_head.zero_grad()
            loss.backward()
            opt_head.step(); opt_enc.step()
        grads = [p.detach().clone() for p in [*enc.parameters(), *head.parameters()]]
    """,
    # The same helper, the condition a call-site conditional expression, and a run that is shorter
    # than the warm-up (a smoke run): the encoder never trains in this run, on purpose.
    "a detach inside a helper, a run shorter than its warm-up": """
        import torch
        torch.manual_seed(0)
        enc = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU())
        head = torch.nn.Linear(6, 1)
        opt_enc = torch.optim.SGD(enc.parameters(), lr=0.01)
        opt_head = torch.optim.SGD(head.parameters(), lr=0.1)

        def frozen_features(x):
            return enc(x).detach()

        x, y = torch.randn(16, 4), torch.randn(16, 1)
        WARMUP, EPOCHS = 5, 3  # a smoke run: the warm-up is longer than the run
        for epoch in range(EPOCHS):
            feats = frozen_features(x) if epoch < WARMUP else enc(x)
            loss = torch.nn.functional.mse_loss(head(feats), y)
            opt_enc.zero_grad(); opt_head.zero_grad()
            loss.backward()
            opt_head.step(); opt_enc.step()
        grads = [p.detach().clone() for p in [*enc.parameters(), *head.parameters()]]
    """,
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(CORRECT))
def test_correct_program_is_silent_and_unchanged(tmp_path, name, mode):
    plain = run_plain(tmp_path, CORRECT[name], "plain.py")
    outcome = run_program(tmp_path, CORRECT[name], **MODES[mode])
    assert outcome.error is None, outcome.error
    assert [(d.code, d.primary.line if d.primary else None, d.help[0].message if d.help else None)
            for d in outcome.diagnoses] == [] and outcome.warnings == []
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


# Written after the cause was found and before the fix's output was looked at, in shapes the fix
# was not tuned on: the detach in a module's forward that the loop calls only under an `if`, two
# helpers deep; and the real bug beside them (the helper called on every iteration, the loop itself
# under an `if`), still named.
UNSEEN_CORRECT = """
    import torch
    torch.manual_seed(3)

    class FrozenEncoder(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, x):
            out = self.encoder(x)
            return out.detach()

    encoder = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh())
    frozen = FrozenEncoder(encoder)
    head = torch.nn.Linear(5, 2)
    opt_enc = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    opt_head = torch.optim.Adam(head.parameters(), lr=1e-2)

    def features(x, epoch, warm):
        return frozen(x)

    x, y = torch.randn(10, 3), torch.randint(0, 2, (10,))
    epochs, warm = 2, 4  # a short run that ends inside the warm-up
    for epoch in range(epochs):
        if epoch < warm:
            h = features(x, epoch, warm)
        else:
            h = encoder(x)
        loss = torch.nn.functional.cross_entropy(head(h), y)
        opt_enc.zero_grad(); opt_head.zero_grad()
        loss.backward()
        opt_enc.step(); opt_head.step()
    grads = [p.detach().clone() for p in [*encoder.parameters(), *head.parameters()]]
"""

UNSEEN_BUGGY = """
    import torch
    torch.manual_seed(3)
    encoder = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh())
    head = torch.nn.Linear(5, 2)
    opt_enc = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    opt_head = torch.optim.Adam(head.parameters(), lr=1e-2)
    TRAIN = True

    def features(x):
        return encoder(x).detach()

    x, y = torch.randn(10, 3), torch.randint(0, 2, (10,))
    if TRAIN:
        for epoch in range(3):
            h = features(x)
            loss = torch.nn.functional.cross_entropy(head(h), y)
            opt_enc.zero_grad(); opt_head.zero_grad()
            loss.backward()
            opt_enc.step(); opt_head.step()
"""


@pytest.mark.parametrize("mode", list(MODES))
def test_unseen_correct_shape_is_silent(tmp_path, mode):
    plain = run_plain(tmp_path, UNSEEN_CORRECT, "plain.py")
    outcome = run_program(tmp_path, UNSEEN_CORRECT, **MODES[mode])
    assert outcome.error is None, outcome.error
    assert [d.code for d in outcome.diagnoses] == [] and outcome.warnings == []
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def test_unseen_buggy_shape_is_still_named(tmp_path):
    outcome = run_program(tmp_path, UNSEEN_BUGGY)
    assert outcome.error is None, outcome.error
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert diagnosis.primary.line == 11
    assert diagnosis.help[0].message.startswith("drop .detach() at line 11 ")


def test_dropping_the_detach_trains_the_encoder(tmp_path):
    fixed = UNSEEN_BUGGY.replace("return encoder(x).detach()", "return encoder(x)")
    outcome = run_program(tmp_path, fixed)
    assert outcome.error is None and outcome.diagnoses == [] and outcome.warnings == []
