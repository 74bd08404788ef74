"""Held-out set 50's causes (docs/bug-reports.md, "Set 50"). The other shapes below were written
before the change was run on them.

- AD113 with several tensors that require grad converted in one statement (github.com/fastai/
  course-nlp issue 47: `np.allclose(enc.weight[i, :], enc.weight[j, :])`). With one converted
  tensor the help already detached it; with two or more it fell back to advice ("call .detach() on
  the tensor..."), a change nobody could apply. Now each converted tensor is detached (the same
  values), unless a NumPy result comes back into torch (the program computes on from it: advice,
  as for one tensor) or a position-only NumPy function is given one of them."""

from __future__ import annotations

import os

import torch

from autograd_doctor.diagnosis import codes
from helpers import apply_help, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET50 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set50")
COURSE_NLP = "course_nlp_imdb_new_word_embeddings_compared_with_np_allclose"


def _source(kind: str, name: str) -> str:
    with open(os.path.join(SET50, kind, name + ".py"), encoding="utf-8") as stream:
        return stream.read()


def test_the_set50_rows_given_to_np_allclose_are_each_detached(tmp_path):
    outcome = run_as_script(tmp_path, _source("cases", COURSE_NLP))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.NUMPY_REQUIRES_GRAD
    assert diagnosis.primary.line == 55
    assert diagnosis.help[0].replacement == ('same_start = np.allclose(enc.weight[stoi["30-something"], :].detach(), '
                                             'enc.weight[stoi["linklater"], :].detach())')
    # The next comparison fails the same way once this one is changed: its help is the same kind.
    second = run_as_script(tmp_path, apply_help(outcome))
    assert second.diagnosis.code == codes.NUMPY_REQUIRES_GRAD and second.diagnosis.primary.line == 56
    changed = run_plain(tmp_path, apply_help(second))
    correct = run_plain(tmp_path, _source("correct", COURSE_NLP), "c.py")
    assert changed["result"]["same_start"].item() is True
    assert changed["result"]["same_start"] == correct["result"]["same_start"]
    assert changed["result"]["known_differs"] == correct["result"]["known_differs"]
    assert torch.equal(changed["result"]["weight"], correct["result"]["weight"])


def test_the_correct_comparison_is_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", COURSE_NLP))
    assert outcome.error is None and not outcome.diagnoses


# Another shape: `.numpy()` called on two tensors of one statement (a prediction and its target
# network's prediction, compared in NumPy for a log line).
TWO_RECEIVERS = """
    import numpy as np
    import torch

    torch.manual_seed(0)
    online = torch.nn.Linear(4, 2)
    target = torch.nn.Linear(4, 2)
    x = torch.randn(8, 4)
    gap = float(np.abs(online(x).numpy() - target(x).numpy()).max())  # CONVERTS
    result = torch.tensor(gap)
"""


def test_two_numpy_receivers_of_one_statement_are_each_detached(tmp_path):
    outcome = run_as_script(tmp_path, TWO_RECEIVERS)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.NUMPY_REQUIRES_GRAD
    assert diagnosis.primary.line == outcome.line("CONVERTS")
    assert diagnosis.help[0].replacement == \
        "gap = float(np.abs(online(x).detach().numpy() - target(x).detach().numpy()).max())"
    changed = run_plain(tmp_path, apply_help(outcome))
    with torch.no_grad():
        torch.manual_seed(0)
        online, target = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
        x = torch.randn(8, 4)
        expected = (online(x) - target(x)).abs().max()
    assert torch.allclose(changed["result"], expected)


# Another shape: a cosine similarity of two embedding rows written with NumPy, four conversions.
COSINE_IN_NUMPY = """
    import numpy as np
    import torch

    torch.manual_seed(0)
    emb = torch.nn.Embedding(10, 6)
    a, b = 2, 7
    sim = np.dot(emb.weight[a], emb.weight[b]) / (np.linalg.norm(emb.weight[a]) * np.linalg.norm(emb.weight[b]))  # CONVERTS
    result = torch.tensor(float(sim))
"""


def test_each_row_of_a_numpy_cosine_is_detached(tmp_path):
    outcome = run_as_script(tmp_path, COSINE_IN_NUMPY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.NUMPY_REQUIRES_GRAD
    assert diagnosis.help[0].replacement.count(".detach()") == 4
    changed = run_plain(tmp_path, apply_help(outcome))
    torch.manual_seed(0)
    weight = torch.nn.Embedding(10, 6).weight.detach()
    expected = torch.nn.functional.cosine_similarity(weight[2], weight[7], dim=0)
    assert torch.allclose(changed["result"], expected.to(changed["result"].dtype), atol=1e-6)


# Near-twin: the NumPy result of two tensors comes back into torch and is trained through;
# detaching would cut the path to both, so the help stays advice.
BACK_INTO_TORCH = """
    import numpy as np
    import torch

    torch.manual_seed(0)
    a = torch.randn(5, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    c = torch.from_numpy(np.maximum(a, b))  # CONVERTS
    c.sum().backward()
"""


def test_two_tensors_whose_numpy_result_comes_back_into_torch_get_advice(tmp_path):
    outcome = run_as_script(tmp_path, BACK_INTO_TORCH)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.NUMPY_REQUIRES_GRAD
    assert all(h.replacement is None for h in diagnosis.help)


# Near-twin: the rows already detached, as the message asks: silent.
def test_rows_detached_before_np_allclose_are_silent(tmp_path):
    source = """
        import numpy as np
        import torch

        emb = torch.nn.Embedding(10, 6)
        same = np.allclose(emb.weight[1].detach(), emb.weight[2].detach())
        result = torch.tensor(same)
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses
