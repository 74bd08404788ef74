"""Set AA's false findings (docs/lint.md, "A twenty-ninth held-out check: set AA"):
each cause is a link that now needs evidence.  For each, the false shape (written
anew, not copied) stays silent and a real shape is still found; torch checks the
claim each time.

- ADL031, "what is kept holds a graph": a count of comparisons (`hits +=
  sum(err > t)`) has no graph, whatever the model's outputs had.
- ADL031, "the loop's value is read after it": a name bound in the loop and bound
  again (in a second loop) before any read after it does not keep the first loop's
  graph.
- ADL031, "gradients are on": a function at the top of its file whose one call in
  its file is under `torch.no_grad()`; a same-named function elsewhere in the
  repository (another module, which the caller never imports) is not a call of it.
- ADL030, "the averaged model has buffers": a `BatchNorm1d(...)` left in a comment
  builds nothing.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.nn as nn

from autograd_doctor.lint.engine import Selection, lint_source

HEADER = """
import torch
import torch.nn as nn
"""


def found(source: str, code: str, filename: str = "<string>"):
    return [f.line for f in lint_source(source, filename=filename, selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


# --- ADL031: counts of comparisons carry no graph ---------------------------------

COUNTS = HEADER + """
def detection_rates(model, normal, attacks, threshold):
    model.eval()
    loss_fn = nn.MSELoss(reduction="none")
    false_alarms = 0
    for x in normal:
        err = loss_fn(model(x), x).mean(dim=1)
        false_alarms += sum(err > threshold)
    hits = 0
    for x in attacks:
        err = loss_fn(model(x), x).mean(dim=1)
        hits += (err > threshold).sum()
    return false_alarms, hits
"""

KEPT_ERRORS = HEADER + """
def errors(model, loader):
    model.eval()
    loss_fn = nn.MSELoss(reduction="none")
    kept = []
    for x in loader:
        err = loss_fn(model(x), x)
        kept.append(err)
    return torch.cat(kept).mean(dim=1)
"""


def test_counts_of_comparisons_kept_past_the_loop_are_silent_and_have_no_graph():
    assert found(COUNTS, "ADL031") == []
    model = nn.Linear(4, 4)
    data = [torch.randn(3, 4) for _ in range(2)]
    false_alarms, hits = load(COUNTS, "counts").detection_rates(model, data, data, 0.1)
    assert false_alarms.grad_fn is None and not false_alarms.requires_grad
    assert hits.grad_fn is None and not hits.requires_grad


def test_errors_kept_with_their_graph_are_still_found():
    assert found(KEPT_ERRORS, "ADL031") == [line_of(KEPT_ERRORS, "err = loss_fn(model(x), x)")]
    out = load(KEPT_ERRORS, "kept").errors(nn.Linear(4, 4), [torch.randn(3, 4) for _ in range(2)])
    assert out.grad_fn is not None  # every batch's graph reachable from the result


# --- ADL031: a name bound again before it is read ----------------------------------

REBOUND = HEADER + """
def threshold_then_test(model, calibration, test):
    model.eval()
    for x in calibration:
        out = model(x)
        score = out.abs().mean(dim=1)
    limit = 0.5
    flagged = 0
    for x in test:
        with torch.no_grad():
            score = model(x).abs().mean(dim=1)
        flagged += int((score > limit).sum())
    return flagged
"""

READ_AFTER = HEADER + """
def last_scores(model, loader):
    model.eval()
    for x in loader:
        out = model(x)
        score = out.abs().mean(dim=1)
    return score
"""


def test_a_name_bound_again_before_any_read_after_the_loop_is_silent():
    assert found(REBOUND, "ADL031") == []
    assert isinstance(load(REBOUND, "rebound").threshold_then_test(
        nn.Linear(4, 4), [torch.randn(3, 4)], [torch.randn(3, 4)]), int)


def test_the_loops_last_value_read_after_it_is_still_found():
    assert found(READ_AFTER, "ADL031") == [line_of(READ_AFTER, "out = model(x)")]
    assert load(READ_AFTER, "after").last_scores(nn.Linear(4, 4), [torch.randn(3, 4)]).grad_fn is not None


# --- ADL031: a top-level function called only under no_grad in its own file --------

SEARCH = HEADER + """
def infer(loader, model, criterion):
    model.eval()
    total = 0.0
    loss = None
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        total += loss.item()
    return total, loss


def main(loader, model, criterion):
    with torch.no_grad():
        return infer(loader, model, criterion)
"""

OTHER_INFER = """
def run(engine, prompt):
    return engine.infer(prompt)
"""

IMPORTS_SEARCH = """
from search import infer


def evaluate(loader, model, criterion):
    return infer(loader, model, criterion)
"""


def repository(tmp_path, files: dict) -> str:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return os.fspath(tmp_path / "search.py")


def test_a_same_named_call_in_a_file_that_never_imports_the_module_is_not_a_caller(tmp_path):
    path = repository(tmp_path, {"search.py": SEARCH, "serving.py": OTHER_INFER})
    assert found(SEARCH, "ADL031", filename=path) == []
    model, data = nn.Linear(4, 2), [(torch.randn(3, 4), torch.randn(3, 2))]
    _, loss = load(SEARCH, "search_mod").main(data, model, nn.MSELoss())
    assert loss.grad_fn is None  # the one caller's no_grad: no graph built


def test_a_caller_that_imports_the_module_with_gradients_on_keeps_it_found(tmp_path):
    path = repository(tmp_path, {"search.py": SEARCH, "serving.py": OTHER_INFER, "evaluate.py": IMPORTS_SEARCH})
    assert found(SEARCH, "ADL031", filename=path) == [line_of(SEARCH, "out = model(x)")]
    model, data = nn.Linear(4, 2), [(torch.randn(3, 4), torch.randn(3, 2))]
    _, loss = load(SEARCH, "search_mod2").infer(data, model, nn.MSELoss())
    assert loss.grad_fn is not None


# --- ADL030: batch norm in a comment builds nothing ---------------------------------

SOFT_UPDATE = HEADER + """
def mlp(n_in, hidden):
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), {norm}nn.Linear(hidden, 2))


def soft_update(target, source, tau):
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.copy_(t.data * (1.0 - tau) + s.data * tau)


def act(target_actor, obs):
    target_actor.eval()
    return target_actor(obs)


def train(actor, target_actor):
    soft_update(target_actor, actor, 0.01)
"""

COMMENTED = SOFT_UPDATE.replace("{norm}", "  # nn.BatchNorm1d(hidden),\n        ")
BUILT = SOFT_UPDATE.replace("{norm}", "nn.BatchNorm1d(hidden), ")


def test_batch_norm_only_in_a_comment_is_no_buffer_and_is_silent():
    assert found(COMMENTED, "ADL030") == []
    model = load(COMMENTED, "commented").mlp(4, 6)
    assert list(model.buffers()) == []  # nothing for a parameter-only average to skip


def test_batch_norm_built_in_code_is_still_found_and_its_statistics_are_skipped():
    assert found(BUILT, "ADL030") == [line_of(BUILT, "for t, s in zip(")]
    module = load(BUILT, "built")
    torch.manual_seed(0)
    actor, target = module.mlp(4, 6), module.mlp(4, 6)
    actor(torch.randn(8, 4) * 3 + 2)  # train mode: the actor's statistics move
    module.soft_update(target, actor, 0.5)
    assert torch.equal(target[2].running_mean, torch.zeros(6))
    assert not torch.equal(actor[2].running_mean, torch.zeros(6))
