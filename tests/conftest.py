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
