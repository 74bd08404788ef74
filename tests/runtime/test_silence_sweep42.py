"""Correct code next to what stop 42's new run-time checks read, written for the silence sweep of
that stop (docs/real-code.md, "Silence sweep after stop 42's checks"). The new `Tensor.detach`
recorder lets AD214 name a `detach()` line that cut an optimizer's parameters off; a detach made
only on some iterations (a warm-up that trains the head alone before the encoder, a linear probe
switched by an argument) leaves the optimizer's first steps empty on purpose, and it trains once
the branch is not taken: no AD214 then, in any mode (AD214 is made at the second empty step and
reported at the run's end only if the optimizer never trained since). GAN and BYOL-style detaches beside
optimizers that train stay silent too. The buggy twin (the same detach on every iteration, in a
function under a `__main__` guard) is still found at its line."""

import pytest

from helpers import grads_equal, run_plain, run_program

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

CORRECT = {
    # The head trains alone for WARMUP epochs (the encoder's features detached), then both.
    "warm-up: a detach under an if in the loop": """
        import torch
        torch.manual_seed(0)
        backbone = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())
        head = torch.nn.Linear(8, 1)
        opt_bb = torch.optim.SGD(backbone.parameters(), lr=0.01)
        opt_head = torch.optim.SGD(head.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        WARMUP = 3
        for epoch in range(6):
            feats = backbone(x)
            if epoch < WARMUP:
                feats = feats.detach()  # train the head alone first
            loss = torch.nn.functional.mse_loss(head(feats), y)
            opt_bb.zero_grad(); opt_head.zero_grad()
            loss.backward()
            opt_head.step()
            opt_bb.step()
        grads = [p.detach().clone() for p in [*backbone.parameters(), *head.parameters()]]
    """,
    # The same schedule through a forward argument and a conditional expression.
    "linear probe first: a detach in a conditional expression of forward": """
        import torch
        torch.manual_seed(0)

        class Probe(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.Tanh())
                self.classifier = torch.nn.Linear(6, 2)

            def forward(self, x, frozen_encoder):
                h = self.encoder(x)
                h = h.detach() if frozen_encoder else h
                return self.classifier(h)

        model = Probe()
        enc_opt = torch.optim.Adam(model.encoder.parameters(), lr=1e-3)
        cls_opt = torch.optim.Adam(model.classifier.parameters(), lr=1e-2)
        x, y = torch.randn(10, 3), torch.randint(0, 2, (10,))
        for step in range(5):
            logits = model(x, frozen_encoder=step < 2)
            loss = torch.nn.functional.cross_entropy(logits, y)
            enc_opt.zero_grad(); cls_opt.zero_grad()
            loss.backward()
            cls_opt.step(); enc_opt.step()
        grads = [p.detach().clone() for p in model.parameters()]
    """,
    # A GAN's discriminator step on fake.detach(); BYOL-style detached targets and an EMA copy.
    "GAN and BYOL detaches beside optimizers that train": """
        import torch
        torch.manual_seed(0)
        G = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        D = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        og = torch.optim.Adam(G.parameters(), 1e-3); od = torch.optim.Adam(D.parameters(), 1e-3)
        bce = torch.nn.BCEWithLogitsLoss()
        for it in range(4):
            real = torch.randn(8, 2) + 3
            fake = G(torch.randn(8, 2))
            od.zero_grad()
            ld = bce(D(real), torch.ones(8, 1)) + bce(D(fake.detach()), torch.zeros(8, 1))
            ld.backward(); od.step()
            og.zero_grad()
            lg = bce(D(fake), torch.ones(8, 1))
            lg.backward(); og.step()
        # BYOL-style target: EMA of the online net, targets detached
        online = torch.nn.Linear(4, 4); target = torch.nn.Linear(4, 4)
        target.load_state_dict(online.state_dict())
        for p in target.parameters(): p.requires_grad_(False)
        opt = torch.optim.SGD(online.parameters(), lr=0.1)
        for it in range(3):
            x = torch.randn(8, 4)
            z = online(x); t = target(x + 0.1).detach()
            p = online(x + 0.1)
            loss = (p - z.detach()).pow(2).mean() + (z - t).pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
            with torch.no_grad():
                for a, b in zip(target.parameters(), online.parameters()):
                    a.mul_(0.9).add_(b.detach(), alpha=0.1)
        grads = [p.detach().clone() for p in [*G.parameters(), *D.parameters(), *online.parameters(), *target.parameters()]]
    """,
    # Written after the fix, in shapes it was not tuned on: the detach after an early return of a
    # helper (`if step >= warm: return z`), and the detach in one branch of an if/else in a try.
    "an early return before the detach in a helper": """
        import torch
        torch.manual_seed(1)
        enc = torch.nn.Linear(5, 4); dec = torch.nn.Linear(4, 5)
        opt_e = torch.optim.SGD(enc.parameters(), lr=0.05); opt_d = torch.optim.SGD(dec.parameters(), lr=0.05)

        def code_of(x, step, warm=3):
            z = enc(x)
            if step >= warm:
                return z
            return z.detach()

        x = torch.randn(12, 5)
        step = 0
        while step < 6:
            loss = (dec(code_of(x, step)) - x).pow(2).mean()
            opt_e.zero_grad(); opt_d.zero_grad()
            loss.backward()
            opt_d.step(); opt_e.step()
            step += 1
        grads = [p.detach().clone() for p in [*enc.parameters(), *dec.parameters()]]
    """,
    "a detach in one branch of an if/else inside a try": """
        import torch
        torch.manual_seed(2)
        enc = torch.nn.Linear(5, 4); head = torch.nn.Linear(4, 1)
        opts = [torch.optim.Adam(enc.parameters(), 1e-3), torch.optim.Adam(head.parameters(), 1e-2)]
        x, y = torch.randn(12, 5), torch.randn(12, 1)
        for epoch in range(5):
            try:
                if epoch < 2:
                    loss = torch.nn.functional.l1_loss(head(enc(x).detach()), y)
                else:
                    loss = torch.nn.functional.l1_loss(head(enc(x)), y)
            finally:
                pass
            for o in opts: o.zero_grad()
            loss.backward()
            for o in opts: o.step()
        grads = [p.detach().clone() for p in [*enc.parameters(), *head.parameters()]]
    """,
    # The same warm-up with the backbone's forward under no_grad(): no detach() line at all. AD214 is
    # made at the second empty step but waits for the run's end, where the backbone has trained.
    "warm-up: the backbone's forward under no_grad for the first epochs": """
        import torch
        torch.manual_seed(0)
        backbone = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())
        head = torch.nn.Linear(8, 1)
        opt_bb = torch.optim.SGD(backbone.parameters(), lr=0.01)
        opt_head = torch.optim.SGD(head.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        WARMUP = 3
        for epoch in range(6):
            if epoch < WARMUP:
                with torch.no_grad():
                    feats = backbone(x)
            else:
                feats = backbone(x)
            loss = torch.nn.functional.mse_loss(head(feats), y)
            opt_bb.zero_grad(); opt_head.zero_grad()
            loss.backward()
            opt_head.step()
            opt_bb.step()
        grads = [p.detach().clone() for p in [*backbone.parameters(), *head.parameters()]]
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


ALWAYS_DETACHED = """
    import torch
    torch.manual_seed(0)

    def main():
        backbone = torch.nn.Linear(4, 8)
        head = torch.nn.Linear(8, 1)
        opt_bb = torch.optim.SGD(backbone.parameters(), lr=0.01)
        opt_head = torch.optim.SGD(head.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        for epoch in range(4):
            feats = backbone(x).detach()
            loss = torch.nn.functional.mse_loss(head(feats), y)
            opt_bb.zero_grad(); opt_head.zero_grad()
            loss.backward()
            opt_head.step()
            opt_bb.step()

    if __name__ == "__main__":
        main()
"""


def test_a_detach_on_every_iteration_is_still_named(tmp_path):
    outcome = run_program(tmp_path, ALWAYS_DETACHED)
    assert outcome.error is None, outcome.error
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert diagnosis.primary.line == 12
    assert diagnosis.help[0].message.startswith("drop .detach() at line 12 ")


def test_the_detach_dropped_trains_the_backbone(tmp_path):
    fixed = ALWAYS_DETACHED.replace("feats = backbone(x).detach()", "feats = backbone(x)")
    outcome = run_program(tmp_path, fixed)
    assert outcome.error is None and outcome.diagnoses == [] and outcome.warnings == []


def test_strict_reports_the_untrained_optimizer_at_the_end_without_raising(tmp_path):
    # Nothing is known to be wrong before the run's end (a warm-up leaves the first steps empty):
    # AD214 is reported when the run ends, and strict does not stop the program for it.
    outcome = run_program(tmp_path, ALWAYS_DETACHED, strict=True)
    assert outcome.error is None, outcome.error
    assert [d.code for d in outcome.diagnoses] == ["AD214"]
