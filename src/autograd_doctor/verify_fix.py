"""Old import path of `autograd_doctor.cli.verify_fix`, kept for code that names it
(`autograd_doctor.verify_fix.proposed_patch`).

The old name is the new module itself (one module object).
"""

import sys

from autograd_doctor.cli import verify_fix

sys.modules[__name__] = verify_fix
