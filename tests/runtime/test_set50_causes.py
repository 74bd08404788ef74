"""Held-out set 50's causes (docs/bug-reports.md, "Set 50"). The other shapes below were written
before the change was run on them.

- AD113 with several tensors that require grad converted in one statement (github.com/fastai/
  course-nlp issue 47: `np.allclose(enc.weight[i, :], enc.weight[j, :])`). With one converted
  tensor the help already detached it; with two or more it fell back to advice ("call .detach() on
  the tensor..."), a change nobody could apply. Now each converted tensor is detached (the same
  values), unless a NumPy result comes back into torch (the program computes on from it: advice,
  as for one tensor) or a position-only NumPy function is given one of them.
- AD101 named the definition of an in-place ReLU when the write that broke backward was the same
  ReLU applied a second time to a tensor it had already rectified (github.com/ADLab-AutoDrive/ICKD
  issue 2: WideResNet.forward's `out = self.relu(f4)`, then `[self.relu(f4), f5]`). The second
  call is now the line named, and its help replaces the call with its argument (a ReLU of its own
  output is the same values), before the definition's inplace=False. Only ReLU, ReLU6 and
  Hardtanh qualify (applied twice they change nothing), and only when the earlier call surely ran
  (not in a branch beside) and the name was not bound again in between."""

from __future__ import annotations

import os

import torch

from autograd_doctor.diagnosis import codes
from helpers import apply_help, grads_equal, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET50 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set50")
COURSE_NLP = "course_nlp_imdb_new_word_embeddings_compared_with_np_allclose"
ICKD = "ickd_student_wide_resnet_last_feature_relu_applied_twice_in_place"


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


def _same(changed, correct) -> bool:
    if isinstance(changed, dict):
        return changed.keys() == correct.keys() and all(_same(changed[k], correct[k]) for k in changed)
    if isinstance(changed, (list, tuple)):
        return len(changed) == len(correct) and all(_same(a, b) for a, b in zip(changed, correct))
    return torch.allclose(changed, correct, rtol=1e-5, atol=1e-6)


def test_the_set50_second_relu_of_the_last_feature_is_named_and_dropped(tmp_path):
    outcome = run_as_script(tmp_path, _source("cases", ICKD))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.SAVED_TENSOR_MODIFIED
    assert diagnosis.primary.line == 73
    assert diagnosis.help[0].replacement == "return f1_act + f2_act + f3_act + [f4, f5], out"
    assert diagnosis.help[1].location.line == 54 and "inplace=False" in diagnosis.help[1].replacement
    changed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, _source("correct", ICKD), "c.py")
    assert _same(changed["result"], correct["result"])


def test_the_correct_wide_resnet_is_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", ICKD))
    assert outcome.error is None and not outcome.diagnoses


# Another shape: the earlier call's result (not its argument) given to the same in-place ReLU6
# again, to collect a feature.
RELU6_OF_ITS_OUTPUT = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.act = nn.ReLU6(inplace=True)
            self.fc2 = nn.Linear(8, 2)

        def forward(self, x):
            h = self.act(self.fc1(x) * 4)
            out = self.fc2(h)
            features = [self.act(h)]  # AGAIN
            return out, features


    net = Net()
    out, features = net(torch.randn(16, 4))
    (out.pow(2).mean() + features[0].mean()).backward()
    result = [p.grad.clone() for p in net.parameters()]
"""


def test_relu6_applied_again_to_its_own_output_is_dropped(tmp_path):
    outcome = run_as_script(tmp_path, RELU6_OF_ITS_OUTPUT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.SAVED_TENSOR_MODIFIED
    assert diagnosis.primary.line == outcome.line("AGAIN")
    assert diagnosis.help[0].replacement == "features = [h]  # AGAIN" or diagnosis.help[0].replacement == "features = [h]"
    changed = run_plain(tmp_path, apply_help(outcome))
    out_of_place = run_plain(tmp_path, RELU6_OF_ITS_OUTPUT.replace("nn.ReLU6(inplace=True)", "nn.ReLU6()"), "o.py")
    assert _same(changed["result"], out_of_place["result"])


# Near-twin: LeakyReLU applied twice changes the values again (the negative part is scaled twice):
# the call is not dropped; the definition stays the line to change.
def test_leaky_relu_applied_twice_keeps_the_definition_help(tmp_path):
    source = RELU6_OF_ITS_OUTPUT.replace("nn.ReLU6(inplace=True)", "nn.LeakyReLU(0.1, inplace=True)  # DEFINED")
    outcome = run_as_script(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.SAVED_TENSOR_MODIFIED
    assert diagnosis.primary.line == outcome.line("DEFINED")
    assert "inplace=False" in diagnosis.help[0].replacement


# Near-twin: the earlier ReLU call ran only in a branch; nothing says the tensor was rectified on
# every run, so the definition stays the line to change.
def test_an_earlier_call_in_a_branch_keeps_the_definition_help(tmp_path):
    source = RELU6_OF_ITS_OUTPUT.replace(
        "            h = self.act(self.fc1(x) * 4)\n",
        "            h = self.fc1(x) * 4\n            if x.shape[0] > 1:\n                y = self.act(h)\n"
    ).replace("nn.ReLU6(inplace=True)", "nn.ReLU(inplace=True)  # DEFINED").replace("out = self.fc2(h)", "out = self.fc2(y)")
    outcome = run_as_script(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.SAVED_TENSOR_MODIFIED
    assert diagnosis.primary.line == outcome.line("DEFINED")


# ReLU6 runs Hardtanh.forward: the write was recorded as Hardtanh's, so the report said "Hardtanh"
# and found no `Hardtanh(inplace=True)` to change. The module's own torch class is recorded now.
RELU6_ON_A_SAVED_INPUT = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = nn.ReLU6(inplace=True)  # DEFINED

        def forward(self, x):
            h = self.fc(x) * 4
            energy = h.pow(2).mean()
            return energy + self.act(h).sum()


    model = Block()
    model(torch.randn(8, 4)).backward()
    result = [p.grad.clone() for p in model.parameters()]
"""


def test_an_inplace_relu6_is_named_as_relu6_at_its_definition(tmp_path):
    outcome = run_as_script(tmp_path, RELU6_ON_A_SAVED_INPUT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.SAVED_TENSOR_MODIFIED
    assert diagnosis.primary.line == outcome.line("DEFINED")
    assert "the write is done by ReLU6" in " ".join(diagnosis.notes)
    assert diagnosis.help[0].replacement == "self.act = nn.ReLU6(inplace=False)"
    changed = run_plain(tmp_path, apply_help(outcome))
    out_of_place = run_plain(tmp_path, RELU6_ON_A_SAVED_INPUT.replace("nn.ReLU6(inplace=True)", "nn.ReLU6()"), "o.py")
    assert grads_equal(changed["result"], out_of_place["result"])


def test_relu6_applied_again_also_offers_its_definition(tmp_path):
    outcome = run_as_script(tmp_path, RELU6_OF_ITS_OUTPUT)
    assert outcome.diagnosis.help[1].replacement == "self.act = nn.ReLU6(inplace=False)"
