"""Problems PyTorch does not raise for: AD201 (.data), AD202 (verify_saved), AD203, AD205."""

import pytest
import torch

from helpers import apply_help, run_plain, run_program


def test_overlapping_operand_is_reported_at_the_write(tmp_path):
    source = """
        import torch
        a = torch.arange(12.0).reshape(3, 4)
        a -= a[:, :1]  # WRITE
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD203" and diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.help[0].replacement == "a = a - a[:, :1]"
    # The fix computes what the user meant: every row minus its first element.
    namespace = run_plain(tmp_path, apply_help(outcome))
    expected = torch.arange(12.0).reshape(3, 4)
    assert torch.equal(namespace["a"], expected - expected[:, :1])
    # ... which the buggy line does not (PyTorch raises nothing, the values are wrong).
    assert not torch.equal(outcome.namespace.get("a", torch.arange(12.0).reshape(3, 4)), expected - expected[:, :1])


def test_overlap_raises_with_silent_raise(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        a = torch.arange(12.0).reshape(3, 4)
        a -= a[:, :1]
    """, silent="raise")
    assert outcome.error is not None and outcome.diagnosis.code == "AD203"


@pytest.mark.parametrize("line", [
    "a.add_(a)", "a.mul_(a.clone())", "a[1:] = a[1:] * 2", "a.copy_(a.flip(0))", "a += a.sum()",
    "a[:, 0] += a[:, 1]", "a[0] -= a[2]", "a[:, ::2].add_(a[:, 1::2])",
])
def test_no_overlap_alarm_for_safe_patterns(tmp_path, line):
    outcome = run_program(tmp_path, f"""
        import torch
        a = torch.arange(12.0).reshape(3, 4)
        {line}
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []


def test_write_through_detach_alias_changes_source(tmp_path):
    source = """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        view = y.detach()  # ALIAS
        view[0] = -1  # WRITE
        result = y.tolist()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD205"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert {loc.role: loc.line for loc in diagnosis.related}["alias"] == outcome.line("ALIAS")
    assert diagnosis.tensor.name == "y"
    assert diagnosis.help[0].replacement == "view = y.detach().clone()"
    assert outcome.namespace["result"] == [-1.0, 4.0]  # the seed guide's surprise
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["result"] == [2.0, 4.0]


def test_detach_alias_of_dead_source_is_fine(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h = h.detach()
        h[0] = -1
        values = torch.randn(3, requires_grad=True).detach()
        values.zero_()
    """)
    assert outcome.diagnoses == []


def test_verify_saved_names_numpy_alias(tmp_path):
    source = """
        import torch
        x = torch.tensor([0.5, -0.5], requires_grad=True)
        z = torch.sigmoid(x)  # SAVE
        array = z.detach().numpy()  # ALIAS
        array[0] = 0.0
        z.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source, verify_saved=True)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD202"
    assert diagnosis.primary.line == outcome.line("ALIAS")
    roles = {loc.role: loc.line for loc in diagnosis.related}
    assert roles["saved"] == outcome.line("SAVE") and roles["backward"] == outcome.line("BACKWARD")
    assert diagnosis.extra["node"] == "SigmoidBackward0" and diagnosis.extra["slot"] == "result"
    fixed = outcome.source.replace("z.detach().numpy()", "z.detach().clone().numpy()")
    namespace = run_plain(tmp_path, fixed)
    s = torch.sigmoid(torch.tensor([0.5, -0.5]))
    assert torch.allclose(namespace["x"].grad, s * (1 - s))


def test_verify_saved_without_alias_names_the_window(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.tensor([0.5, -0.5], requires_grad=True)
        z = torch.exp(x)  # SAVE
        capsule = torch.utils.dlpack.to_dlpack(z.detach())
        shared = torch.utils.dlpack.from_dlpack(capsule)
        shared.data.fill_(7.0) if False else torch.ops.aten.fill_.Scalar(shared, 7.0)
        z.sum().backward()  # BACKWARD
    """, verify_saved=True)
    codes = [d.code for d in outcome.diagnoses]
    assert codes and codes[0] in ("AD202", "AD101")


def test_verify_saved_silent_on_correct_training(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            loss = model(torch.randn(5, 4)).pow(2).mean()
            loss.backward()
            opt.step()
            print(loss.detach().numpy())
    """, verify_saved=True)
    assert outcome.error is None and outcome.diagnoses == []


def test_data_write_fix_applied(tmp_path):
    source = """
        import torch
        x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = torch.sigmoid(x)  # SAVE
        y.data[0] = 0.0  # WRITE
        y.sum().backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source, mode="full")  # .data writes into saves: full mode only
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD201"
    assert diagnosis.help[0].replacement == "y = y.index_fill(0, torch.tensor([0]), 0.0)"
    namespace = run_plain(tmp_path, apply_help(outcome))
    s = torch.sigmoid(torch.tensor([0.5, 1.0, 2.0]))
    expected = s * (1 - s)
    expected[0] = 0.0
    assert torch.allclose(namespace["x"].grad, expected)


STALE_VIEW_PROGRAM = """
    import torch
    buf = torch.zeros(3)
    history = []
    for step in range(3):
        buf.copy_(torch.full((3,), float(step)))  # WRITE
        history.append({view})  # VIEW
    result = [h.tolist() for h in history]
"""


@pytest.mark.parametrize("view,capture", [("buf.view(3)", "patch"), ("buf.narrow(0, 0, 3)", "patch"),
                                          ("buf[:]", "mode")])
def test_view_kept_in_list_then_base_overwritten(tmp_path, view, capture):
    # Views kept across writes are tracked in the full mode (capture="mode" implies it).
    outcome = run_program(tmp_path, STALE_VIEW_PROGRAM.format(view=view), capture=capture, mode="full")
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD204"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert {loc.role: loc.line for loc in diagnosis.related}["view"] == outcome.line("VIEW")
    assert outcome.namespace["result"] == [[2.0] * 3] * 3  # every entry equals the last buffer
    assert diagnosis.help[0].replacement == f"history.append({view}.clone())"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["result"] == [[0.0] * 3, [1.0] * 3, [2.0] * 3]


def test_no_stale_view_alarm_for_rebound_locals_or_setup_views(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        buf = torch.zeros(6)
        parts = [buf.narrow(0, 0, 3), buf.narrow(0, 3, 3)]  # views made once, meant to follow buf
        total = 0.0
        for step in range(3):
            buf.copy_(torch.randn(6))
            first = buf.view(2, 3)
            total += float(first.sum()) + float(parts[0].sum())
        def scan(buffer):
            out = 0.0
            for i in range(3):
                buffer.mul_(0.5)
                row = buffer.view(6)
                out += float(row[0])
            return out
        scan(buf)
    """)
    assert outcome.diagnoses == []


def test_pytorch_overlap_error_gets_the_explanation(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        b = torch.arange(6.0)
        b[1:].add_(b[:-1])  # WRITE
    """, silent="ignore")
    assert isinstance(outcome.error, RuntimeError)
    assert "single memory location" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD203" and diagnosis.severity == "error"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert any("AD203" in note for note in outcome.error.__notes__)


@pytest.mark.parametrize("mode", ["light", "full"])
def test_an_overlap_pytorch_refuses_is_reported_once_on_its_error(tmp_path, mode):
    """PyTorch raises for a.T.add_(a): the diagnosis goes on its error, not also in a warning."""
    outcome = run_program(tmp_path, """
        import torch
        a = torch.arange(9.0).reshape(3, 3)
        a.T.add_(a)  # WRITE
    """, mode=mode)
    assert isinstance(outcome.error, RuntimeError) and "single memory location" in str(outcome.error)
    assert outcome.warnings == []
    assert sum("[AD203]" in note for note in outcome.error.__notes__) == 1
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_an_overlap_pytorch_computes_silently_still_warns_in_both_modes(tmp_path):
    for mode in ("light", "full"):
        outcome = run_program(tmp_path, """
            import torch
            a = torch.arange(12.0).reshape(3, 4)
            a -= a[:, :1]  # WRITE
        """, mode=mode)
        assert outcome.error is None
        assert [w.message.args[0].count("[AD203]") for w in outcome.warnings] == [1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                                   torch.uint8, torch.bool, torch.complex64])
def test_fingerprint_sees_any_single_element_change(dtype):
    from autograd_doctor.recording.fingerprint import fingerprint

    torch.manual_seed(0)
    base = (torch.randn(7, 5) * 10).to(dtype) if dtype is not torch.bool else torch.rand(7, 5) > 0.5
    if dtype.is_floating_point:
        base[0, 0] = float("nan")
    reference = fingerprint(base)
    assert reference is not None and fingerprint(base.clone()) == reference  # NaN-safe, deterministic
    for index in [(0, 1), (3, 2), (6, 4)]:
        changed = base.clone()
        changed[index] = (~changed[index]) if dtype is torch.bool else changed[index] + 1
        assert fingerprint(changed) != reference


def test_fingerprint_sees_rows_swapped_across_halves():
    from autograd_doctor.recording.fingerprint import fingerprint

    base = torch.arange(35.0).reshape(7, 5)
    swapped = base.clone()
    swapped[[0, 6]] = swapped[[6, 0]]
    assert fingerprint(swapped) != fingerprint(base)
