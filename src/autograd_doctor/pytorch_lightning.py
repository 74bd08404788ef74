"""Old import path of `autograd_doctor.integrations.pytorch_lightning`, kept because users type it (`from autograd_doctor.pytorch_lightning import AutogradDoctor`).

The old name is the new module itself (one module object: its state and hooks are shared).
"""

import sys

from autograd_doctor.integrations import pytorch_lightning

sys.modules[__name__] = pytorch_lightning
