"""Old import path of `autograd_doctor.integrations.lightning`, kept because users type it (`from autograd_doctor.lightning import AutogradDoctor`).

The old name is the new module itself (one module object: its state and hooks are shared).
"""

import sys

from autograd_doctor.integrations import lightning

sys.modules[__name__] = lightning
