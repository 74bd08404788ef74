"""Old import path of `autograd_doctor.integrations.huggingface`, kept because users type it (`from autograd_doctor.huggingface import AutogradDoctorCallback`).

The old name is the new module itself (one module object: its state and hooks are shared).
"""

import sys

from autograd_doctor.integrations import huggingface

sys.modules[__name__] = huggingface
