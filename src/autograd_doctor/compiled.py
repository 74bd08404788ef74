"""Old import path of `autograd_doctor.integrations.compiled`, kept because users type it (`autograd_doctor.compiled.compile`).

The old name is the new module itself (one module object: its state and hooks are shared).
"""

import sys

from autograd_doctor.integrations import compiled

sys.modules[__name__] = compiled
