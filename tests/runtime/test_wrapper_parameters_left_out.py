"""AD213 for a wrapper's own parameters: the optimizer is built from the module a user's wrapper
holds (`Adam(policy.parameters())`) while the wrapper declares parameters of its own beside it
(Meta-SGD's learned learning rates) that get gradients and are in no optimizer. Named at the
optimizer's construction; the help builds it from the wrapper's parameters, which gives a
reference's parameters exactly. A wrapper whose own parameters get no gradient, or that another
optimizer trains, stays silent."""

import torch

from helpers import apply_help, run_plain, run_program

# The source of the report: https://github.com/learnables/learn2learn/issues/167 (fix: PR #168)
META_SGD = """
    import torch
    import torch.nn as nn
    from torch.func import functional_call

    torch.manual_seed(0)


    class MetaSGD(nn.Module):
        def __init__(self, module, lr):
            super().__init__()
            self.module = module
            self.lrs = nn.ParameterList([nn.Parameter(torch.full_like(p, lr)) for p in module.parameters()])

        def adapt(self, loss):
            names, params = zip(*self.module.named_parameters())
            grads = torch.autograd.grad(loss, params, create_graph=True)
            return {n: p - lr * g for n, p, lr, g in zip(names, params, self.lrs, grads)}


    policy = nn.Linear(3, 1)
    meta_learner = MetaSGD(policy, lr=0.1)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)  # BUILT
    for iteration in range(3):
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        adapted = meta_learner.adapt(((policy(x) - y) ** 2).mean())
        meta_loss = ((functional_call(policy, adapted, (x,)) - y) ** 2).mean()
        opt.zero_grad()
        meta_loss.backward()
        opt.step()
    learned = [p.detach().clone() for p in meta_learner.parameters()]
"""

REFERENCE = META_SGD.replace("torch.optim.Adam(policy.parameters(), lr=1e-2)",
                             "torch.optim.Adam(meta_learner.parameters(), lr=1e-2)")


def test_a_wrappers_own_parameters_left_out_are_reported_at_the_construction(tmp_path):
    outcome = run_program(tmp_path, META_SGD)
    assert [d.code for d in outcome.diagnoses] == ["AD213"]
    assert outcome.diagnosis.primary.line == outcome.line("BUILT")
    assert "meta_learner wraps policy" in outcome.diagnosis.notes[0]
    assert outcome.diagnosis.help[0].message.startswith("build the optimizer from meta_learner.parameters()")


def test_the_help_gives_the_references_parameters(tmp_path):
    outcome = run_program(tmp_path, META_SGD)
    fixed = apply_help(outcome)
    assert "opt = torch.optim.Adam(meta_learner.parameters(), lr=1e-2)" in fixed
    plain = run_plain(tmp_path, fixed)
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")
    assert all(torch.equal(a, b) for a, b in zip(plain["learned"], reference["learned"]))
    original = run_plain(tmp_path, META_SGD, name="original.py")
    assert not torch.equal(original["learned"][-1], plain["learned"][-1])  # the learned rates moved


def test_a_wrapper_whose_own_parameters_get_no_gradient_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        class WithScale(nn.Module):
            def __init__(self, module):
                super().__init__()
                self.module = module
                self.scale = nn.Parameter(torch.ones(1))  # used only at evaluation

            def forward(self, x):
                return self.module(x)

        net = nn.Linear(3, 1)
        wrapper = WithScale(net)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            loss = wrapper(torch.randn(4, 3)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    assert outcome.diagnoses == []


def test_a_wrapper_whose_own_parameters_another_optimizer_trains_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        class WithScale(nn.Module):
            def __init__(self, module):
                super().__init__()
                self.module = module
                self.scale = nn.Parameter(torch.ones(1))

            def forward(self, x):
                return self.scale * self.module(x)

        net = nn.Linear(3, 1)
        wrapper = WithScale(net)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        scale_optimizer = torch.optim.SGD([wrapper.scale], lr=0.01)
        for _ in range(3):
            loss = wrapper(torch.randn(4, 3)).pow(2).mean()
            optimizer.zero_grad()
            scale_optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scale_optimizer.step()
    """)
    assert outcome.diagnoses == []
