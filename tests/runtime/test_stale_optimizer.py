"""AD207 on correct programs: an optimizer whose parameters get no gradient on a step, several
optimizers, frozen parts and replacements made before the optimizer was built are not reported;
only positive evidence (the parameters that replaced the optimizer's got gradients and are in no
optimizer) is. The buggy programs with their helps are in tests/silent."""

from __future__ import annotations

import textwrap

import pytest

from helpers import grads_equal, run_plain, run_program

CORRECT = {
    # Two optimizers; the generator steps first, while the discriminator has gradients from
    # the generator's loss and its own optimizer has not stepped yet; the generator has a
    # parameter it does not use.
    "GAN, generator stepped first, an unused generator parameter": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        G = nn.Linear(3, 3)
        G.unused = nn.Parameter(torch.zeros(2))
        D = nn.Linear(3, 1)
        opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
        opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
        for _ in range(2):
            z = torch.randn(4, 3)
            opt_g.zero_grad()
            D(G(z)).mean().backward()
            opt_g.step()
            opt_d.zero_grad()
            (D(G(z).detach()).mean() - D(torch.randn(4, 3)).mean()).backward()
            opt_d.step()
        grads = [p.grad for p in D.parameters()]
    """,
    # Only the head is optimized; the backbone still requires grad (and gets gradients); the
    # head has a parameter that no forward uses.
    "an optimizer over the head only, the backbone not frozen": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        backbone, head = nn.Linear(4, 4), nn.Linear(4, 2)
        head.temperature = nn.Parameter(torch.ones(1))
        optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
        for _ in range(2):
            optimizer.zero_grad()
            head(backbone(torch.randn(5, 4))).pow(2).mean().backward()
            optimizer.step()
        grads = [p.grad for p in backbone.parameters()]
    """,
    # A branch that does not run on every step: its parameters have no gradient there.
    "a branch used on some steps only": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        trunk, branch = nn.Linear(3, 3), nn.Linear(3, 3)
        model = nn.ModuleList([trunk, branch])
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        for step in range(4):
            out = trunk(torch.randn(2, 3))
            if step % 2:
                out = branch(out)
            optimizer.zero_grad()
            out.pow(2).sum().backward()
            optimizer.step()
        grads = [p.grad for p in trunk.parameters()]
    """,
    # The head is replaced before the optimizer is built, and a replacement later is followed
    # by a new optimizer.
    "replacements before the optimizer is built": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 10))
        model[2] = nn.Linear(4, 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
        model[2] = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.zero_grad()
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
        grads = [p.grad for p in model.parameters()]
    """,
    # A step before any backward (no parameter has a gradient yet).
    "a step before the first backward": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.step()
        model(torch.randn(2, 3)).sum().backward()
        optimizer.step()
        grads = [p.grad for p in model.parameters()]
    """,
    # Weight tying after the optimizer was built: the tied weight is the optimizer's already.
    "weights tied after the optimizer was built": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        embed, decode = nn.Embedding(5, 3), nn.Linear(3, 5, bias=False)
        model = nn.ModuleList([embed, decode])
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        decode.weight = embed.weight
        logits = decode(embed(torch.tensor([0, 2, 4])))
        logits.logsumexp(1).sum().backward()
        optimizer.step()
        grads = [embed.weight.grad]
    """,
    # The network is built again, with its own new optimizer; the old one is no longer stepped.
    "a network built again with its own optimizer": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        for width in (4, 8):
            net = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))
            optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
            for _ in range(2):
                optimizer.zero_grad()
                net(torch.randn(4, 3)).pow(2).mean().backward()
                optimizer.step()
        grads = [p.grad for p in net.parameters()]
    """,
}


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_programs_are_not_reported(tmp_path, name, mode):
    source = CORRECT[name]
    outcome = run_program(tmp_path, source, mode=mode)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD207"], [str(d) for d in outcome.diagnoses]
    assert grads_equal(outcome.namespace["grads"], run_plain(tmp_path, textwrap.dedent(source))["grads"])


def test_a_replacement_before_watch_started_is_found_when_the_whole_network_changed(tmp_path):
    """No replacement is recorded before the doctor starts; a network bound to its name again is
    still found from what is around step()."""
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model = nn.Linear(3, 1)  # REBOUND
        model(torch.randn(2, 3)).sum().backward()
        optimizer.step()  # STEP
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert diagnosis.primary.line == outcome.line("REBOUND")
    assert diagnosis.related[-1].line == outcome.line("STEP")
    assert diagnosis.help[0].replacement == ("model = nn.Linear(3, 1)\n"
                                             "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)")
    assert outcome.namespace["optimizer"].param_groups[0]["params"][0].grad is None  # what it is about


def test_silent_raise_stops_at_the_step(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model.bias = nn.Parameter(torch.zeros(1))  # REPLACED
        model(torch.randn(8, 4)).pow(2).mean().backward()
        optimizer.step()
    """, silent="raise")
    assert type(outcome.error).__name__ == "AutogradDoctorError"
    assert outcome.diagnosis.code == "AD207"
    assert outcome.diagnosis.primary.line == outcome.line("REPLACED")
    assert outcome.diagnosis.help[0].replacement == "with torch.no_grad():\n    model.bias.copy_(torch.zeros(1))"
