import os
import sys

# Test helpers live beside the tests; make them importable as plain modules.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "runtime"))

# Show the doctor's own failures (normally swallowed so the user's exception wins).
os.environ.setdefault("AUTOGRAD_DOCTOR_DEBUG", "1")

# The automatic second run is bounded by what a user will wait (at least 10 s, see
# autograd_doctor.cli.rerun); on a loaded test machine a child interpreter can take longer
# than that to start. Tests of the report's content get room; tests of the limit itself
# (tests/runtime/test_rerun_limit.py) remove this.
os.environ.setdefault("AUTOGRAD_DOCTOR_RERUN_LIMIT", "300")


def pytest_addoption(parser):
    # tests/docs: rewrite the docs' example outputs with what runs now (tests/docs/doc_examples.py).
    parser.addoption("--update-docs", action="store_true", default=False,
                     help="rewrite README.md and docs/*.md example outputs that differ from what runs")
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite the golden reports in tests/golden/ instead of comparing with them")


import pytest  # noqa: E402
import torch  # noqa: E402


@pytest.fixture(autouse=True)
def _torch_defaults_restored():
    """Programs run in-process may change torch's process-wide state (a force-field case sets
    `torch.set_default_dtype(torch.float64)`, as its report does; a DDP case initialises a one-process
    group): put it back so that a later test's program does not run with it (`x.double()` would
    return x itself, a leaf; `dist.is_initialized()` would send a single-process program down its
    multi-process path)."""
    dtype = torch.get_default_dtype()
    distributed = torch.distributed.is_available() and torch.distributed.is_initialized()
    yield
    torch.set_default_dtype(dtype)
    if not distributed and torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


@pytest.fixture(autouse=True)
def _no_internal_error_of_ours(request):
    """A failure of the doctor's own code is swallowed (the user's exception is unchanged) and only
    printed under AUTOGRAD_DOCTOR_DEBUG, so a test passed while a diagnosis was lost to it (stop 42's
    half-built optimizer, AD220 on a sparse gradient). Count them (doctor.internal_error_count): a test
    in this process in which the count grew fails; a test that makes the doctor fail on purpose says so
    with `@pytest.mark.internal_error`. (Programs run in a child process print the traceback on their
    stderr: tests of those check it, as tests/errors/test_held_out_variants.py does.)"""
    from autograd_doctor.doctor import internal_error_count

    before = internal_error_count()
    yield
    grew = internal_error_count() - before
    if grew and request.node.get_closest_marker("internal_error") is None:
        pytest.fail(f"{grew} internal error(s) of autograd-doctor inside this test (traceback on stderr, "
                    "'autograd-doctor internal error'); mark a deliberate one @pytest.mark.internal_error",
                    pytrace=False)
