"""AD315: a custom autograd.Function's backward never reads the gradient it is given, so it
returns the output's derivative alone instead of the chain rule's product (set 28's k2
`get_tot_scores` was the held-out case: an MMI loss `-(num - den)` gave every arc gradient the
wrong sign). Named at the backward's return; the help is advice (how the incoming gradient maps
onto the input is the author's). Programs of the same cause in another shape (a hand-written
sigmoid under a weighted MSE) are found too; a backward that reads its gradient, one that blocks
gradients on purpose (zeros) and one only ever run with a gradient of ones stay silent."""

from __future__ import annotations

import torch

from helpers import run_plain, run_program

TOTAL_SCORE = """
    import torch

    torch.manual_seed(0)


    class TotalScore(torch.autograd.Function):
        @staticmethod
        def forward(ctx, scores):
            total = scores.logsumexp(-1)
            ctx.save_for_backward(scores, total)
            return total

        @staticmethod
        def backward(ctx, grad_total):
            scores, total = ctx.saved_tensors
            return (scores - total.unsqueeze(-1)).exp()  # RETURN


    logits = torch.randn(3, 4, requires_grad=True)
    target = torch.tensor([0, 2, 1])
    optimizer = torch.optim.SGD([logits], lr=0.5)
    for step in range(4):
        optimizer.zero_grad()
        picked = logits.gather(1, target.unsqueeze(1)).squeeze(1)
        loss = (TotalScore.apply(logits) - picked).mean()   # a negative log-likelihood
        loss.backward()
        optimizer.step()
    result = [logits.detach().clone()]
"""

CHAIN_RULE = TOTAL_SCORE.replace("(scores - total.unsqueeze(-1)).exp()  # RETURN",
                                 "(scores - total.unsqueeze(-1)).exp() * grad_total.unsqueeze(-1)  # RETURN")

SIGMOID = """
    import torch


    class MySigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = 1 / (1 + torch.exp(-x))
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, *grads):
            y, = ctx.saved_tensors
            return y * (1 - y)  # RETURN


    torch.manual_seed(1)
    layer = torch.nn.Linear(3, 2)
    x, target = torch.randn(8, 3), torch.rand(8, 2)
    loss = 0.5 * ((MySigmoid.apply(layer(x)) - target) ** 2).mean()
    loss.backward()
"""


def test_the_backward_that_drops_the_chain_rule_is_named(tmp_path):
    outcome = run_program(tmp_path, TOTAL_SCORE)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD315", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURN")
    assert "never reads grad_total" in diagnosis.notes[0]
    assert "multiply" in diagnosis.help[0].message and diagnosis.help[0].replacement is None


def test_the_change_the_help_describes_gives_the_true_gradient_and_is_silent(tmp_path):
    fixed = run_program(tmp_path, CHAIN_RULE)
    assert fixed.error is None and not fixed.diagnoses, [d.code for d in fixed.diagnoses]
    namespace = run_plain(tmp_path, CHAIN_RULE, "fixed.py")
    scores = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(namespace["TotalScore"].apply, (scores,))
    original = run_plain(tmp_path, TOTAL_SCORE, "original.py")
    assert not torch.equal(original["result"][0], namespace["result"][0])


def test_another_shape_a_hand_written_sigmoid_under_a_weighted_loss(tmp_path):
    outcome = run_program(tmp_path, SIGMOID)
    diagnosis = outcome.diagnosis
    assert diagnosis is not None and diagnosis.code == "AD315", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURN")
    assert "grads" in diagnosis.notes[0]
    right = SIGMOID.replace("return y * (1 - y)  # RETURN", "return grads[0] * y * (1 - y)  # RETURN")
    assert not run_program(tmp_path, right, "right.py").diagnoses


def test_a_function_that_blocks_gradients_on_purpose_stays_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch


        class StopGradient(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return torch.zeros(3)


        w = torch.randn(3, requires_grad=True)
        loss = -(2 * StopGradient.apply(w) + w).sum()
        loss.backward()
    """)
    assert not outcome.diagnoses, [d.code for d in outcome.diagnoses]


def test_a_backward_only_ever_given_ones_stays_silent(tmp_path):
    # The loss is the Function's output itself: the chain rule multiplies by 1, the gradients are right.
    outcome = run_program(tmp_path, """
        import torch


        class Energy(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return (x ** 2).sum()

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return 2 * x


        x = torch.randn(4, requires_grad=True)
        Energy.apply(x).backward()
    """)
    assert not outcome.diagnoses, [d.code for d in outcome.diagnoses]
