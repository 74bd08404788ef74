"""Old import path of `autograd_doctor.integrations.startup`, kept because users type it: the `autograd_doctor_startup.pth` of an install made before this layout imports it.

The old name is the new module itself (one module object: its state and hooks are shared).
"""

import sys

from autograd_doctor.integrations import startup

sys.modules[__name__] = startup
