"""AD209 on embeddings: gradients never cleared, where the sampled values used to see nothing.

AD209 samples a few values of an optimizer's gradients right after its step() and looks for them,
unchanged, when the next backward() starts. It used to sample the first 16 values of a dense
gradient only: an embedding's gradient is zero outside the rows a batch touched (often the first
ones), so the sample read "cleared" and the optimizer was dropped; and a sparse gradient
(`nn.Embedding(..., sparse=True)`) was not read at all. Held-out set 45's matrix factorisation
(ethanrosenthal.com, rating by rating with sparse embeddings and no `zero_grad()`) was silent.

Now the sample is taken where the gradient's first nonzero values are, a sparse gradient is read
in the values it stores, and "cleared" means all values zero. Shapes written before the change
ran on them: a recommender's dense embeddings whose first interactions touch only high rows
(Adagrad), a skip-gram with sparse embeddings and SparseAdam. Near twins that clear (`zero_grad()`,
`zero_grad(set_to_none=False)` on dense and sparse gradients) stay silent."""

import os

import torch

from helpers import Outcome, apply_help, run_plain, run_program

SET45 = os.path.join(os.path.dirname(os.path.dirname(__file__)), "bug_reports", "fresh", "set45")

DENSE_ROWS = """
import torch

torch.manual_seed(0)
items = torch.nn.Embedding(50, 4)
users = torch.nn.Embedding(8, 4)
opt = torch.optim.Adagrad(list(users.parameters()) + list(items.parameters()), lr=0.05)
pairs = [(u, 30 + (u * 7) % 20) for u in range(8)] * 3
losses = []
for u, i in pairs:
    score = (users(torch.tensor([u])) * items(torch.tensor([i]))).sum()
    loss = (score - 1.0) ** 2
    loss.backward()
    opt.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [items.weight.detach().clone(), users.weight.detach().clone()]}
"""
DENSE_ROWS_ANSWER = DENSE_ROWS.replace("    loss.backward()\n", "    opt.zero_grad()\n    loss.backward()\n")

SKIP_GRAM = """
import torch

torch.manual_seed(0)


class SkipGram(torch.nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.center = torch.nn.Embedding(vocab, dim, sparse=True)
        self.context = torch.nn.Embedding(vocab, dim, sparse=True)

    def forward(self, c, o):
        return torch.nn.functional.logsigmoid((self.center(c) * self.context(o)).sum(-1)).neg().mean()


model = SkipGram(40, 6)
opt = torch.optim.SparseAdam(model.parameters(), lr=0.01)
losses = []
for step in range(12):
    c = torch.randint(0, 40, (5,))
    o = torch.randint(0, 40, (5,))
    loss = model(c, o)
    loss.backward()
    opt.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""
SKIP_GRAM_ANSWER = SKIP_GRAM.replace("    loss.backward()\n", "    opt.zero_grad()\n    loss.backward()\n")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as stream:
        return stream.read()


def _ad209(outcome: Outcome):
    return next(d for d in outcome.diagnoses if d.code == "AD209")


def _same(a: dict, b: dict) -> bool:
    a, b = a["result"], b["result"]
    return all(torch.equal(a[key], b[key]) if isinstance(a[key], torch.Tensor)
               else all(torch.equal(x, y) for x, y in zip(a[key], b[key])) for key in a)


def _fixed_equals_answer(tmp_path, outcome: Outcome, answer: str) -> bool:
    diagnosis = _ad209(outcome)
    fixed = apply_help(Outcome(outcome.error, [diagnosis], outcome.namespace, outcome.path, outcome.source))
    return _same(run_plain(tmp_path, fixed), run_plain(tmp_path, answer, "answer.py"))


def test_the_set45_matrix_factorisation_with_sparse_embeddings_is_found_and_its_help_is_the_posts_fix(tmp_path):
    case = _read(os.path.join(SET45, "cases", "matrix_factorization_sgd_without_zero_grad.py"))
    outcome = run_program(tmp_path, case)
    diagnosis = _ad209(outcome)
    assert diagnosis.primary.source == "loss.backward()"
    assert diagnosis.help[0].message.startswith("clear the gradients before each backward(): call optimizer.zero_grad()")
    answer = _read(os.path.join(SET45, "correct", "matrix_factorization_sgd_without_zero_grad.py"))
    assert _fixed_equals_answer(tmp_path, outcome, answer)


def test_dense_embeddings_whose_first_rows_stay_zero_are_found(tmp_path):
    outcome = run_program(tmp_path, DENSE_ROWS)
    assert _ad209(outcome).primary.source == "loss.backward()"
    assert _fixed_equals_answer(tmp_path, outcome, DENSE_ROWS_ANSWER)


def test_sparse_embeddings_under_sparse_adam_are_found(tmp_path):
    outcome = run_program(tmp_path, SKIP_GRAM)
    assert "SparseAdam.step()" in _ad209(outcome).related[0].note
    assert _fixed_equals_answer(tmp_path, outcome, SKIP_GRAM_ANSWER)


def test_clearing_twins_stay_silent(tmp_path):
    kept_allocated = "    opt.zero_grad(set_to_none=False)\n    loss.backward()\n"
    twins = (DENSE_ROWS_ANSWER, SKIP_GRAM_ANSWER,
             DENSE_ROWS.replace("    loss.backward()\n", kept_allocated),
             SKIP_GRAM.replace("    loss.backward()\n", kept_allocated))
    for source in twins:
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses, source
