"""AD302 on a forward pass of several lines made before a loop whose iterations each call
backward(): the help computes again, at the top of the loop, every line that builds the loss's
graph, not only the loss (held-out set 7, nn-zero-to-hero#31, where repeating only the loss line
left the program failing)."""

from helpers import run_program

BIGRAM = """
import torch
torch.manual_seed(0)
W = torch.randn(5, 5, requires_grad=True)
xs, ys = torch.randint(0, 5, (12,)), torch.randint(0, 5, (12,))
xenc = torch.nn.functional.one_hot(xs, num_classes=5).float()
logits = xenc @ W
counts = logits.exp()
probs = counts / counts.sum(1, keepdim=True)
loss = -probs[torch.arange(12), ys].log().mean()
for k in range(3):
    W.grad = None
    loss.backward()
    W.data += -1.0 * W.grad
"""


def test_the_help_repeats_every_line_with_a_graph_and_names_them(tmp_path):
    outcome = run_program(tmp_path, BIGRAM)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    assert diagnosis.primary.line == 10  # loss = ..., made before the loop
    recompute = next(s for s in diagnosis.help if s.replacement)
    assert "with the lines that build its graph (logits, counts, probs)" in recompute.message
    lines = recompute.replacement.splitlines()
    assert lines == ["logits = xenc @ W", "counts = logits.exp()", "probs = counts / counts.sum(1, keepdim=True)",
                     "loss = -probs[torch.arange(12), ys].log().mean()", "W.grad = None"]
    assert recompute.location.line == 12  # the loop's first statement


def test_a_line_without_a_graph_stays_before_the_loop(tmp_path):
    outcome = run_program(tmp_path, BIGRAM)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    recompute = next(s for s in diagnosis.help if s.replacement)
    assert "one_hot" not in recompute.replacement
