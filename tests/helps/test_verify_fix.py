"""`autograd-doctor run --verify-fix / --diff` and `--capture mode`, run as a user runs them."""

from __future__ import annotations

import hashlib
import textwrap

import pytest

from helpers import run_cli

FIXABLE = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    h = (w * x).tanh()
    loss1 = h.sum()
    loss2 = (h * h).sum()
    loss1.backward()
    loss2.backward()
"""

# The first bug has a working help; the second is still there after it.
TWO_BUGS = """
    import torch
    w = torch.ones(3, requires_grad=True)
    h = w.sigmoid()
    h.mul_(2)
    (h * w).sum().backward()
    g = w.exp()
    g.add_(1)
    g.sum().backward()
"""

ADVICE_ONLY = """
    import torch
    w = torch.ones(3, requires_grad=True)
    value = (w * 2).sum().item()
    loss = torch.tensor(value)
    loss.backward()
"""


def _script(tmp_path, source: str, name: str = "train.py") -> tuple[str, str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path), hashlib.sha256(path.read_bytes()).hexdigest()


def test_verify_fix_never_says_verified_without_an_oracle(tmp_path):
    """Two losses over one graph (AD302): the help runs, but no oracle gives the gradients that
    program meant, so the answer is unverified, with the reason."""
    path, digest = _script(tmp_path, FIXABLE)
    result = run_cli("run", "--verify-fix", path, cwd=str(tmp_path), timeout=900)
    assert result.returncode == 1  # the user's program itself still failed
    assert "help: both losses are ready before the first backward()" in result.stderr
    last = result.stderr.rstrip().splitlines()[-1]
    assert last.startswith("unverified: "), result.stderr[-2000:]
    assert "no oracle" in last and "copied before it is written in place fails too" in last
    # The user's file is untouched, and no scratch copy is left next to it.
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


# A sharpness-aware step: the weights change in place between the two backward() calls, so the
# second loss is meant at the new weights (its forward pass done again), not through the old graph.
CLIMB_THEN_REUSE = """
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x = torch.randn(6, 3)


    def climb(parameters, rho=0.05):
        with torch.no_grad():
            for p in parameters:
                p.add_(rho * p.grad)


    output = model(x)
    output.pow(2).mean().backward()
    climb(model.parameters())
    model.zero_grad()
    output.pow(2).mean().backward()
"""


def test_verify_fix_judges_a_recomputed_forward_before_the_failing_backward(tmp_path):
    path, _ = _script(tmp_path, CLIMB_THEN_REUSE)
    result = run_cli("run", "--verify-fix", path, cwd=str(tmp_path), timeout=900)
    assert result.returncode == 1
    assert "help: compute output again for the second backward()" in result.stderr
    assert "model(x).pow(2).mean().backward()" in result.stderr
    assert "retain_graph=True to the earlier" not in result.stderr
    last = result.stderr.rstrip().splitlines()[-1]
    assert last.startswith("unverified: "), result.stderr[-2000:]
    assert "before the failing backward() equal the original's" in last


def test_verify_fix_follows_the_second_bug_and_verifies_both_changes(tmp_path):
    """The first help makes the program fail on the next write: that write's help is applied
    too, and the whole change is judged against the oracle."""
    path, _ = _script(tmp_path, TWO_BUGS)
    result = run_cli("run", "--diff", path, cwd=str(tmp_path), timeout=900)
    assert "applied 2 change(s)" in result.stderr, result.stderr[-3000:]
    assert "line 5 (AD101), line 8 (AD101)" in result.stderr
    assert "-h.mul_(2)" in result.stderr and "+h = h.mul(2)" in result.stderr
    assert "-g.add_(1)" in result.stderr and "+g = g.add(1)" in result.stderr
    assert "\nverified: forward values, gradients and parameters equal the oracle's (bitwise; oracle: the original " \
           "program run with each tensor autograd saved copied before it is written in place)" in result.stderr


# One silent problem at two lines: both feature vectors are rebuilt with torch.tensor() from values
# with grad history, so neither passes gradient back to `w`.
TWO_COPIES_OUT_OF_THE_GRAPH = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(2, requires_grad=True)
    a, b = w[0] * 2, w[1] * 3
    features = torch.tensor([a, b])
    scales = torch.tensor([a * b, b])
    loss = (features * scales).sum() + w.sum()
    loss.backward()
"""


def test_verify_fix_changes_every_line_of_one_silent_problem(tmp_path):
    """The copy with the first line changed runs and still reports the same problem at the second
    line: that line is changed too, shown as a help after the first, and the two changes together
    give the gradients of a program written with torch.stack."""
    import json

    import torch

    from autograd_doctor.analysis.fixes import apply_replacement
    from autograd_doctor.diagnosis.model import Location
    from helpers import run_plain

    path, _ = _script(tmp_path, TWO_COPIES_OUT_OF_THE_GRAPH)
    report_path = str(tmp_path / "report.json")
    result = run_cli("run", "--diff", "--json", report_path, path, cwd=str(tmp_path), timeout=900)
    assert "applied 2 change(s)" in result.stderr and "line 6 (AD304), line 7 (AD304)" in result.stderr, \
        result.stderr[-3000:]
    assert "\nunverified: the original program raised nothing" in result.stderr, result.stderr[-2000:]
    with open(report_path, encoding="utf-8") as stream:
        helps = [h for h in json.load(stream)["diagnoses"][0]["help_details"] if h.get("replacement")]
    assert [(h["line"], h["replacement"]) for h in helps[:2]] == [
        (6, "features = torch.stack([a, b])"), (7, "scales = torch.stack([a * b, b])")]
    assert helps[1]["message"] == "and the next line of the same kind, which has the same problem (AD304)"
    source = textwrap.dedent(TWO_COPIES_OUT_OF_THE_GRAPH)
    for detail in reversed(helps[:2]):
        source = apply_replacement(source, Location(path, detail["line"], None), detail["replacement"])
    namespace = run_plain(tmp_path, source)
    torch.manual_seed(0)
    w = torch.randn(2, requires_grad=True)
    a, b = w[0] * 2, w[1] * 3
    ((torch.stack([a, b]) * torch.stack([a * b, b])).sum() + w.sum()).backward()
    assert torch.equal(namespace["w"].grad, w.grad)


def test_verify_fix_does_not_guess_when_the_help_is_advice(tmp_path):
    path, _ = _script(tmp_path, ADVICE_ONLY)
    result = run_cli("run", "--verify-fix", path, cwd=str(tmp_path), timeout=900)
    last = result.stderr.rstrip().splitlines()[-1]
    assert last.startswith("not verified: the help is advice, not a change autograd-doctor can apply")


def test_verify_fix_passes_the_same_arguments_and_keeps_sibling_imports(tmp_path):
    (tmp_path / "scale.py").write_text("FACTOR = 2.0\n")
    path, _ = _script(tmp_path, """
        import sys
        import torch
        from scale import FACTOR
        w = torch.ones(3, requires_grad=True)
        h = w.sigmoid()
        h.mul_(FACTOR * float(sys.argv[1]))
        (h * w).sum().backward()
    """)
    result = run_cli("run", "--verify-fix", path, "3", cwd=str(tmp_path), timeout=900)
    assert result.stderr.rstrip().splitlines()[-1].startswith("verified: "), result.stderr[-2000:]


@pytest.mark.parametrize("flag", ["--verify-fix", "--diff", "--fix"])
def test_checking_a_help_needs_a_script(tmp_path, flag):
    (tmp_path / "job.py").write_text(textwrap.dedent(FIXABLE))
    result = run_cli("run", flag, "-m", "job", cwd=str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip() == f"autograd-doctor run: error: {flag} needs a script file, not -m module"


OUT_WRITE = """
    import torch
    torch.manual_seed(0)
    x = torch.randn(4, requires_grad=True)
    mask = (torch.rand(4) > 0.5).float()
    h1 = torch.tanh(x) * mask
    torch.mul(torch.ones(4), 2, out=mask)
    h1.sum().backward()
"""


def test_capture_mode_from_the_command_line_sees_out_writes(tmp_path):
    path, _ = _script(tmp_path, OUT_WRITE)
    plain = run_cli("run", path, cwd=str(tmp_path))
    assert " 7 | torch.mul(torch.ones(4), 2, out=mask)" not in plain.stderr
    result = run_cli("run", "--capture", "mode", "--verify-fix", path, cwd=str(tmp_path), timeout=900)
    assert " 7 | torch.mul(torch.ones(4), 2, out=mask)" in result.stderr
    assert "modified here" in result.stderr
    assert " 7 | mask = torch.mul(torch.ones(4), 2)" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("verified: "), result.stderr[-2000:]


def test_capture_needs_patch_or_mode(tmp_path):
    path, _ = _script(tmp_path, OUT_WRITE)
    result = run_cli("run", "--capture", "hooks", path, cwd=str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip() == "autograd-doctor run: error: --capture must be patch or mode, not 'hooks'"


INFERENCE_BLOCK = """\
import torch
torch.manual_seed(0)
policy = torch.nn.Linear(4, 4)
prompts = torch.randn(3, 4)
with torch.inference_mode():
    scores = policy(prompts)
    ids = scores.argmax(-1).float()
loss = (policy(prompts).sum(-1) * ids).mean()
loss.backward()
grads = [p.grad for p in policy.parameters()]
"""


def test_a_help_that_replaces_a_block_header_keeps_the_block_body(tmp_path):
    """`with torch.inference_mode():` -> `with torch.no_grad():` replaces the header only:
    the changed copy keeps the block's body and runs (it once lost the body)."""
    path, _ = _script(tmp_path, INFERENCE_BLOCK)
    result = run_cli("run", "--diff", path, cwd=str(tmp_path), timeout=900)
    assert "-with torch.inference_mode():" in result.stderr and "+with torch.no_grad():" in result.stderr
    assert "-    scores = policy(prompts)" not in result.stderr, result.stderr[-2000:]
    assert "still fails" not in result.stderr and "IndentationError" not in result.stderr
    verdicts = [line for line in result.stderr.splitlines() if line.startswith(("verified", "unverified"))]
    assert verdicts and "the changed program runs" in verdicts[0], result.stderr[-2000:]


def test_a_rewritten_line_keeps_its_trailing_comment(tmp_path):
    """The user's comment at the end of the line a help rewrites stays on the rewritten line
    (it once was dropped), and a `#` inside a string is not taken for a comment."""
    path, _ = _script(tmp_path, """
        import torch
        w = torch.ones(3, requires_grad=True)
        h = w.sigmoid()
        h.mul_(2)  # scale the gate
        label = "#1"
        (h * w).sum().backward()
    """)
    result = run_cli("run", "--diff", "--no-rerun", path, cwd=str(tmp_path), timeout=900)
    assert "-h.mul_(2)  # scale the gate" in result.stderr, result.stderr[-2000:]
    assert "+h = h.mul(2)  # scale the gate" in result.stderr, result.stderr[-2000:]


VECTOR_LOSS = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    x, y = torch.randn(4, 3), torch.randn(4)
    errors = (x @ w - y) ** 2
    errors.backward()
    print(w.grad)
"""


def test_verify_fix_of_a_reduction_is_unverified_not_rejected(tmp_path):
    """backward() of a loss with several elements (AD112): the help reduces it, so the value handed
    to backward() differs from the original's on purpose. The check compares what comes before that
    call and says unverified, with that reason; it does not reject the help for the changed value."""
    path, _ = _script(tmp_path, VECTOR_LOSS)
    result = run_cli("run", "--verify-fix", path, cwd=str(tmp_path), timeout=900)
    assert result.returncode == 1
    assert "AD112" in result.stderr and "errors.sum()" in result.stderr
    last = result.stderr.rstrip().splitlines()[-1]
    assert last.startswith("unverified: "), result.stderr[-2000:]
    assert "changed on purpose" in last
