"""Each code's "Minimal example" (docs/codes.md, `autograd-doctor explain CODE`) gets that
code when it runs, as rustc tests the example of every error explanation.

The examples are fragments that name what they are about (`model`, `x`, `batches`);
SETUP holds the lines a reader would supply (rustc's hidden lines), kept out of the docs.
A fragment of a custom autograd.Function's method is put in a class (FUNCTION_FRAGMENTS).
"""

from __future__ import annotations

import re
import runpy
import textwrap
import warnings

import pytest

import autograd_doctor
from autograd_doctor.diagnosis import codes

PRELUDE = "import copy\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
X3 = "x = torch.randn(3, requires_grad=True)\n"
SETUP = {
    "AD103": "G = nn.Linear(2, 4)\nD = nn.Linear(4, 1)\nz = torch.randn(3, 2)\n"
             "opt_D = torch.optim.SGD(D.parameters(), lr=0.1)\n",
    "AD104": "x = torch.randn(4, requires_grad=True)\n",
    "AD105": "x = torch.randn(4, requires_grad=True)\n",
    "AD106": "x = torch.randn(4, requires_grad=True)\nh = x * 2\n",
    "AD107": "h = torch.randn(3, requires_grad=True) * 1\n",
    "AD108": "h = torch.randn(2, 3, requires_grad=True) * 2\n",
    "AD109": "backbone = nn.Linear(3, 3)\nhead = nn.Linear(3, 1)\nx = torch.randn(2, 3)\n",
    "AD110": "update = torch.ones(3)\n",
    "AD112": X3, "AD113": X3, "AD115": X3, "AD117": X3, "AD123": X3, "AD130": X3, "AD201": X3, "AD202": X3,
    "AD118": "a = torch.randn(2, 3, requires_grad=True)\nb = a[0].detach().clone()\n",
    "AD124": "update = torch.ones(4, 3)\n",
    "AD125": "from torch.utils.checkpoint import checkpoint\ncalls = []\n" + X3,
    "AD126": "from torch.utils.checkpoint import checkpoint\n" + X3,
    "AD128": "model = nn.Linear(3, 1)\n",
    "AD129": "model = nn.Linear(3, 1)\n",
    "AD132": "model = nn.Module()\nmodel.body = nn.Linear(3, 3)\nmodel.head = nn.Linear(3, 1)\n",
    "AD133": "x = torch.randn(6, requires_grad=True)\n",
    "AD135": "model = nn.Linear(3, 1)\nloss = model(torch.randn(2, 3)).sum()\n",
    "AD205": "x = torch.tensor([1.0, 2.0], requires_grad=True)\n",
    "AD301": "encoder = nn.Linear(3, 3)\nhead = nn.Linear(3, 1)\nx = torch.randn(2, 3)\n"
             "l1 = head(encoder(x)).sum()\nl2 = head(x).sum()\n",
    "AD302": "cell = nn.Linear(3, 8)\nbatches = [torch.randn(1, 3) for _ in range(2)]\n",
    "AD303": "model = nn.Linear(3, 3)\nx = torch.randn(2, 3)\n",
    "AD304": "w = torch.randn(3, requires_grad=True)\nloss1 = (w * 2).sum()\nloss2 = (w * 3).sum()\n",
    "AD305": X3 + "z = torch.randn(3, requires_grad=True)\n",
    "AD306": X3 + "y = (x * 2).sum()\n",
    "AD307": "model = nn.Linear(3, 1)\nx = torch.randn(2, 3)\n",
    "AD138": "x = torch.randn(4, requires_grad=True)\n",
    "AD139": X3,
    "AD140": "weigher = nn.Linear(3, 1)\nx = torch.randn(4, 3)\n"
             "p = torch.sigmoid(torch.randn(4, 1, requires_grad=True))\ny = torch.rand(4, 1)\n",
    "AD141": "from torch.func import vmap\nx = torch.randn(4, 3)\n",
    "AD206": "model = nn.Linear(3, 2)\nx = torch.randn(4, 3)\ny = torch.tensor([0, 1, 1, 0])\n",
    "AD308": "x = torch.randn(4, 3, dtype=torch.float64)\ny = torch.randn(4, dtype=torch.float64)\n",
}
# A method of a custom autograd.Function, shown alone: the class around it and its use.
FUNCTION_FRAGMENTS = {
    "AD121": ("class AddOne(torch.autograd.Function):\n    @staticmethod\n{fragment}\n"
              "    @staticmethod\n    def backward(ctx, grad):\n        return grad\n"
              "AddOne.apply(torch.randn(3, requires_grad=True) * 1)\n"),
    "AD122": ("class Power(torch.autograd.Function):\n    @staticmethod\n{fragment}\n        return x ** exponent\n"
              "    @staticmethod\n    def backward(ctx, grad):\n        return grad, None\n"
              "Power.apply(torch.randn(3, requires_grad=True), 2)\n"),
    "AD136": ("from torch.utils.checkpoint import checkpoint\n"
              "class Square(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        ctx.save_for_backward(x)\n        return x * x\n    @staticmethod\n{fragment}\n"
              "x = torch.randn(3, requires_grad=True)\n"
              "checkpoint(Square.apply, x, use_reentrant=False).sum().backward()\n"),
}
NOT_RUNNABLE = {
    "AD120": "its forward is elided (`...`)",
    "AD127": "needs a DistributedDataParallel process group (tests/errors/test_ddp.py runs one)",
}
# The options the example needs to be seen: the codes.md entry says which mode finds it.
WATCH_OPTIONS = {"AD201": {"mode": "full"}, "AD204": {"capture": "mode"}, "AD202": {"verify_saved": True}}


def minimal_example(code: str) -> str:
    text = codes.explanation(code)
    found = re.search(r"\*\*Minimal example\.\*\*\n\n((?:    .*\n|\n)+)", text)
    assert found, f"{code}: no minimal example"
    return textwrap.dedent(found.group(1)).strip("\n") + "\n"


def runnable(code: str) -> str:
    example = minimal_example(code)
    if code in FUNCTION_FRAGMENTS:
        return PRELUDE + FUNCTION_FRAGMENTS[code].format(fragment=textwrap.indent(example.rstrip("\n"), "    "))
    return PRELUDE + SETUP.get(code, "") + example


@pytest.mark.parametrize("code", sorted(codes.TITLES))
def test_the_minimal_example_gets_its_code(tmp_path, code):
    if code in NOT_RUNNABLE:
        pytest.skip(NOT_RUNNABLE[code])
    path = tmp_path / f"{code.lower()}_example.py"
    path.write_text(runnable(code))
    found = set()
    error = None
    watcher = autograd_doctor.watch(**WATCH_OPTIONS.get(code, {}))
    doctor = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with watcher as doctor:  # the error passes through watch(), as in a user's script
                runpy.run_path(str(path), run_name="__main__")
        except Exception as problem:  # the example's own failure is what it shows
            error = problem
            found |= {d.code for d in autograd_doctor.diagnoses_of(problem)}
    found |= {d.code for d in doctor.diagnoses}
    assert code in found, f"{code}: got {sorted(found)} ({error!r})\n{path.read_text()}"


def test_the_examples_that_do_not_run_are_few_and_said_why():
    assert set(NOT_RUNNABLE) <= set(codes.TITLES) and len(NOT_RUNNABLE) <= 2
