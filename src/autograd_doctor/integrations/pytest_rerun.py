"""Run a failed test once more, in the same pytest process, under the full mode.

The default (light) mode names the write but not the line that saved the tensor; the
full mode records saves. The pytest plugin runs the failed test again right after its
call, before its teardown: the test's function-scoped fixtures are torn down and set up
afresh (as for the next test; wider scopes are kept, as pytest keeps them between
tests), the test function runs under `watch(mode="full")` with its output and warnings
discarded, and the random number generators are put back as the first run left them,
so the tests after it run as they would without the doctor. Starting no new interpreter
makes this cost about what the test itself costs.

The test's own failure report is not touched here; the plugin uses the diagnoses
returned.
"""

from __future__ import annotations

import contextlib
import io
import random
import sys
import warnings

from autograd_doctor.diagnosis.model import Diagnosis


def run_again_in_full_mode(item, options: dict, diagnose) -> tuple[list[Diagnosis] | None, str]:
    """(the diagnoses of a second run of `item` under the full mode, why there are none).

    `options` are the test's watch() options; `diagnose(doctor, error)` gives the
    diagnoses of a run (the plugin's own function, so both runs are explained alike).
    Only for an item that `can_run_again`.
    """
    from autograd_doctor.doctor import watch

    generators = RandomState()
    try:
        with _discarded_output(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                _set_up_again(item)
            except Exception as problem:
                return None, f"its fixtures could not be set up again ({type(problem).__name__}: {problem})"
            with watch(**{**options, "mode": "full"}) as doctor:
                try:
                    item.runtest()
                except (KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as error:  # also pytest's skip/xfail outcomes
                    return diagnose(doctor, error), ""
        return [], ""
    finally:
        generators.restore()


def can_run_again(item) -> bool:
    """A pytest test function (not a unittest.TestCase, a doctest, a plugin's own kind of item)."""
    return hasattr(item, "_initrequest") and hasattr(item.session, "_setupstate") and not _is_unittest(item)


def _is_unittest(item) -> bool:
    """A unittest.TestCase test: unittest catches its exceptions itself and pytest keeps
    them on the item for its report, where a second run's would be taken for the first's."""
    try:
        from _pytest.unittest import TestCaseFunction
    except ImportError:
        return True  # unknown: do not run it again
    return isinstance(item, TestCaseFunction)


def _set_up_again(item) -> None:
    """Tear down the test's function-scoped fixtures and set them up afresh."""
    setup_state = item.session._setupstate
    setup_state.teardown_exact(item.parent)  # pops the test itself, keeps its module's and class's
    item._initrequest()  # forget the fixture values of the first run
    setup_state.setup(item)


@contextlib.contextmanager
def _discarded_output():
    """The second run's prints go nowhere (pytest shows the first run's)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


class RandomState:
    """The states of torch's, Python's and NumPy's global random generators, to put back."""

    def __init__(self):
        import torch

        self.torch = torch.random.get_rng_state()
        self.cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
        self.python = random.getstate()
        numpy = sys.modules.get("numpy")
        self.numpy = numpy.random.get_state() if numpy is not None else None

    def restore(self) -> None:
        import torch

        torch.random.set_rng_state(self.torch)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)
        random.setstate(self.python)
        if self.numpy is not None:
            sys.modules["numpy"].random.set_state(self.numpy)


__all__ = ["run_again_in_full_mode", "can_run_again", "RandomState"]
