"""Old import path of `autograd_doctor.integrations.pytest_plugin`, kept because users type it (`-p autograd_doctor.pytest_plugin`) and installs before this layout registered it as pytest's entry point.

The old name is the new module itself (one module object: its state and hooks are shared).
"""

import sys

from autograd_doctor.integrations import pytest_plugin

sys.modules[__name__] = pytest_plugin
