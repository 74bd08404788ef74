"""The doctor reads the user's files with `ast.parse`; the parser warns about an invalid escape
sequence in a string (`"\\h"` in a docstring: DeprecationWarning, SyntaxWarning from Python 3.12)
each time it reads one. Python already gave that warning once when the file was compiled; a
second one from our reading was a line plain python never prints. Met in qpth's `qp.py`
(https://github.com/locuslab/qpth, a docstring with `\\h`): under `pytest --autograd-doctor` its
test `test_dl_dp` listed the warning a second time. Each program here is run in its own file, so
that no cached parse hides the reading in one mode."""

import runpy
import textwrap
import warnings

import pytest

import autograd_doctor
from autograd_doctor.diagnosis.source import parse_quietly
from helpers import grads_equal, marked_line

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

# A custom scaling documented with an invalid escape sequence, then an ordinary backward().
CORRECT = '''
    import torch

    def scaled(x):
        """Scale by two: \\h stands for the step size."""
        return x * 2

    weight = torch.ones(3, requires_grad=True)
    loss = scaled(weight.sigmoid()).sum()
    loss.backward()
    grads = [weight.grad]
'''

# The same file with a real bug: the sigmoid's saved output is written in place.
BUGGY = '''
    import torch

    def scaled(x):
        """Scale by two: \\h stands for the step size."""
        return x * 2

    weight = torch.ones(3, requires_grad=True)
    squashed = weight.sigmoid()
    squashed.mul_(2)  # WRITE
    loss = scaled(squashed).sum()
    loss.backward()
    grads = [weight.grad]
'''


def _run(path, watch_options):
    """Run the file at `path` (under watch() unless `watch_options` is None); every warning is
    recorded. Returns the globals or the error, and the texts of the warnings."""
    namespace, error = {}, None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if watch_options is None:
                namespace = runpy.run_path(path, run_name="__main__")
            else:
                with autograd_doctor.watch(**watch_options) as doctor:
                    namespace = runpy.run_path(path, run_name="__main__")
        except RuntimeError as problem:
            error = problem
    texts = [str(w.message) for w in caught if not issubclass(w.category, autograd_doctor.AutogradDoctorWarning)]
    return namespace, error, texts


@pytest.mark.parametrize("mode", MODES)
def test_a_file_with_an_invalid_escape_warns_as_often_as_in_plain_python(tmp_path, mode):
    (tmp_path / "plain.py").write_text(textwrap.dedent(CORRECT))
    (tmp_path / "watched.py").write_text(textwrap.dedent(CORRECT))
    plain, _, plain_warnings = _run(str(tmp_path / "plain.py"), None)
    watched, error, watched_warnings = _run(str(tmp_path / "watched.py"), MODES[mode])
    assert error is None
    assert plain_warnings == ["invalid escape sequence '\\h'"]  # the compile's own, once
    assert watched_warnings == plain_warnings
    assert grads_equal(watched["grads"], plain["grads"])


@pytest.mark.parametrize("mode", MODES)
def test_the_write_in_such_a_file_is_still_found_and_its_help_makes_it_correct(tmp_path, mode):
    (tmp_path / "buggy.py").write_text(textwrap.dedent(BUGGY))
    _, error, texts = _run(str(tmp_path / "buggy.py"), MODES[mode])
    assert texts == ["invalid escape sequence '\\h'"]
    diagnoses = autograd_doctor.diagnoses_of(error)
    assert diagnoses and diagnoses[0].code == "AD101"
    write = marked_line(textwrap.dedent(BUGGY), "WRITE")
    assert diagnoses[0].primary.line == write
    help_text = diagnoses[0].help[0]
    fixed = textwrap.dedent(BUGGY).splitlines()
    fixed[write - 1] = help_text.replacement
    (tmp_path / "fixed.py").write_text("\n".join(fixed) + "\n")
    namespace, fixed_error, _ = _run(str(tmp_path / "fixed.py"), None)
    reference = textwrap.dedent(BUGGY).replace("squashed.mul_(2)  # WRITE", "squashed = squashed * 2")
    (tmp_path / "reference.py").write_text(reference)
    expected, _, _ = _run(str(tmp_path / "reference.py"), None)
    assert fixed_error is None
    assert grads_equal(namespace["grads"], expected["grads"])


def test_parsing_keeps_the_record_of_warnings_already_shown():
    """Not `catch_warnings()`: changing the filters would clear Python's record of the warnings
    shown once per place, and the program's own warning would show again after our parse."""
    def warn_here():
        warnings.warn("the program's own warning", UserWarning)

    shown = []
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # each place once, as python shows a UserWarning
        original, warnings.showwarning = warnings.showwarning, lambda message, *rest, **more: shown.append(str(message))
        try:
            warn_here()
            tree = parse_quietly('"""\\h"""\nx = 1\n', "documented.py")
            warn_here()
        finally:
            warnings.showwarning = original
    assert shown == ["the program's own warning"]
    assert [type(node).__name__ for node in tree.body] == ["Expr", "Assign"]
