"""Static linter: find autograd hazards in source code without running it.

>>> from autograd_doctor.lint import lint_source
>>> [f.code for f in lint_source("import torch\\nx = torch.ones(2, requires_grad=True)\\nx.zero_()\\n")]
['ADL014']
"""

from autograd_doctor.lint.engine import lint_file, lint_source
from autograd_doctor.lint.findings import Edit, Finding, Fix

__all__ = ["lint_source", "lint_file", "Finding", "Fix", "Edit"]
