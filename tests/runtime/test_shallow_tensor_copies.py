"""AD166: `copy.copy(t)` of a tensor in the user's code gives a tensor over the same memory; a
"backup" made with it follows every later write. Reported at the call, once per line; the help
(`t.clone()`, for a tensor that does not require grad) gives a reference's values exactly. A
shallow copy of anything else, and a real copy of a tensor, stay silent."""

import torch

from helpers import apply_help, run_plain, run_program

# The source of the report: https://github.com/AntreasAntoniou/HowToTrainYourMAMLPytorch/issues/42
BACKUP = """
    from copy import copy

    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    running_mean, running_var = torch.zeros(3), torch.ones(3)
    backup_mean = torch.zeros(3)
    backup_mean.data = copy(running_mean.data)  # BACKUP
    F.batch_norm(torch.randn(8, 3) + 2.0, running_mean, running_var, training=True, momentum=0.5)
    running_mean.copy_(backup_mean)  # the restore
    restored = running_mean.clone()
"""

REFERENCE = BACKUP.replace("copy(running_mean.data)", "running_mean.data.clone()")


def test_a_backup_made_with_copy_copy_is_reported_at_the_call(tmp_path):
    outcome = run_program(tmp_path, BACKUP)
    assert [d.code for d in outcome.diagnoses] == ["AD166"]
    assert outcome.diagnosis.primary.line == outcome.line("BACKUP")
    assert "same memory" in outcome.diagnosis.primary.note
    assert outcome.diagnosis.help[0].message == "copy the values into memory of their own with clone()"
    assert not torch.equal(outcome.namespace["restored"], torch.zeros(3))  # the restore restored nothing


def test_the_help_gives_the_references_values(tmp_path):
    outcome = run_program(tmp_path, BACKUP)
    fixed = apply_help(outcome)
    assert "backup_mean.data = running_mean.data.clone()" in fixed
    plain = run_plain(tmp_path, fixed)
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")
    assert torch.equal(plain["restored"], reference["restored"])
    assert torch.equal(plain["restored"], torch.zeros(3))


def test_a_tensor_that_requires_grad_gets_advice(tmp_path):
    outcome = run_program(tmp_path, """
        import copy

        import torch

        weights = torch.randn(3, requires_grad=True)
        snapshot = copy.copy(weights)  # COPY
    """)
    assert outcome.diagnosis.code == "AD166" and outcome.diagnosis.primary.line == outcome.line("COPY")
    assert outcome.diagnosis.help[0].replacement is None
    assert "weights.detach().clone()" in outcome.diagnosis.help[0].message


def test_shallow_copies_of_other_objects_and_real_copies_are_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import copy

        import torch

        config = copy.copy({"lr": 0.1})
        layers = copy.copy([torch.zeros(2)])  # a list: its shallow copy is meant to share the items
        model = torch.nn.Linear(2, 2)
        twin = copy.deepcopy(model)
        values = model.weight.detach().clone()
    """)
    assert outcome.diagnoses == []
