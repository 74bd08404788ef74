"""Old import path of `autograd_doctor.integrations.ipython`, kept because users type it (`%load_ext autograd_doctor.ipython`).

The old name is the new module itself (one module object: its state and hooks are shared).
"""

import sys

from autograd_doctor.integrations import ipython

sys.modules[__name__] = ipython
