"""Outside its report the doctor is invisible: each program's whole output under
`autograd-doctor run` (and under `watch()`) equals its output under plain `python`, once
the report is taken out, and so does the exit code.

The report is what the doctor adds, and only that (`strip_report` takes it out):

- a note on the exception: a line `autograd-doctor:` and the lines after it, up to the
  first empty line (the notes end the exception's block; python separates chained
  exceptions with an empty line);
- a warning of ours: `FILE:LINE: AutogradDoctorWarning: ...` up to the line python's
  warnings module ends it with, the source line of FILE:LINE indented by two spaces;
- a line of the doctor's own: `autograd-doctor: ...` (e.g. "2 problem(s) reported above").

Anything else that differs (a frame of ours, a changed message, a warning attributed to a
file of ours, `__file__`, `sys.argv`, an exit code) fails the comparison.
"""

from __future__ import annotations

import linecache
import os
import re
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUR_WARNING = re.compile(r"^(?P<file>.+):(?P<line>\d+): AutogradDoctorWarning: ")


# The lines of a rendered diagnosis (report/text.py): its title, `  --> file:line:col`,
# the source gutter (` 4 | ...`, `   |`), `   = note: ...`, `help: ...`.
DIAGNOSIS_LINE = re.compile(r"^((error|warning|help|note)\b|  --> |\s*\d*\s*\|( |$)|\s+= |\s*$)")


def strip_report(text: str, cwd: str = ".") -> str:
    """`text` without the doctor's report blocks (see the module docstring); `cwd` is where
    the program ran, for warnings whose file is relative to it."""
    lines = text.splitlines(keepends=True)
    kept = []
    index = 0
    while index < len(lines):
        line = lines[index]
        warning = OUR_WARNING.match(line)
        if line.rstrip("\n") == "autograd-doctor:":
            index += 1
            while index < len(lines) and lines[index].strip():
                index += 1
            continue
        if warning:
            index += 1
            while index < len(lines) and DIAGNOSIS_LINE.match(lines[index]):
                index += 1
            # python's warnings module ends the block with the warned line, indented by two spaces.
            source = linecache.getline(os.path.join(cwd, warning["file"]), int(warning["line"])).strip()
            if index < len(lines) and source and lines[index] == f"  {source}\n":
                index += 1
            continue
        if line.startswith("autograd-doctor: "):
            index += 1
            continue
        kept.append(line)
        index += 1
    return "".join(kept)


def test_strip_report_takes_out_exactly_the_report():
    text = ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: no\n"
            "autograd-doctor:\nerror[AD101]: something\n   |\n 5 | y[0] = 0\n\nThe above exception ...\n"
            "autograd-doctor: 1 problem(s) reported above\n")
    assert strip_report(text) == ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                                  "ValueError: no\n\nThe above exception ...\n")


def run(command: list[str], cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"), OMP_NUM_THREADS="1")
    for name in ("AUTOGRAD_DOCTOR", "AUTOGRAD_DOCTOR_MODE", "PYTHONWARNINGS"):
        env.pop(name, None)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def assert_same_but_the_report(plain: subprocess.CompletedProcess, doctored: subprocess.CompletedProcess,
                               cwd) -> None:
    assert "autograd-doctor" not in plain.stdout + plain.stderr
    assert doctored.returncode == plain.returncode, doctored.stderr
    assert strip_report(doctored.stdout, str(cwd)) == plain.stdout
    assert strip_report(doctored.stderr, str(cwd)) == plain.stderr


# name -> (program, arguments). `{here}` is the directory the program is written to.
PROGRAMS = {
    # buggy
    "saved_tensor_modified": ("""
        import torch
        x = torch.ones(3, requires_grad=True)
        y = torch.sigmoid(x)
        y[0] = 0.0
        y.sum().backward()
        """, []),
    "chained_exception": ("""
        import torch

        def train():
            w = torch.ones(4, requires_grad=True)
            h = w.exp()
            h.add_(1)
            h.sum().backward()

        try:
            train()
        except RuntimeError as error:
            raise ValueError("training failed") from error
        """, []),
    "exception_while_handling_another": ("""
        import torch
        w = torch.ones(2, requires_grad=True)
        try:
            w.add_(1)
        except RuntimeError:
            print("caught")
            {}["missing"]
        """, []),
    "torch_warnings_on_two_lines": ("""
        import torch
        x = torch.ones(3, requires_grad=True)
        a = torch.tensor(x)
        b = torch.tensor(x * 2)
        loss = (x ** 2).sum() + a.sum() + b.sum()
        loss.backward()
        print(a.sum().item(), b.sum().item(), x.grad.tolist())
        """, []),
    "system_exit_code": ("""
        import sys
        import torch
        print("args", sys.argv[1:])
        sys.exit(3)
        """, ["--lr", "0.1"]),
    "system_exit_message": ("""
        import sys
        sys.exit("stopped: no data")
        """, []),
    "syntax_error": ("""
        import torch
        def broken(:
            pass
        """, []),
    # torch warns from inside an optimizer's step at its third step, when the doctor has put
    # torch's own `add_` back for quiet steps: the warning names the optimizer's line, as before.
    "torch_warning_inside_a_later_optimizer_step": ("""
        import torch

        class PlainSGD(torch.optim.Optimizer):
            def __init__(self, params, lr):
                super().__init__(params, {"lr": lr})
                self.steps = 0

            @torch.no_grad()
            def step(self):
                self.steps += 1
                for group in self.param_groups:
                    for p in group["params"]:
                        if self.steps == 3:
                            p.add_(-group["lr"], p.grad)  # the deprecated overload: torch warns
                        else:
                            p.add_(p.grad, alpha=-group["lr"])

        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        optimizer = PlainSGD([w], lr=0.1)
        for _ in range(5):
            optimizer.zero_grad()
            (w ** 2).sum().backward()
            optimizer.step()
        print(w.tolist())
        """, []),
    # correct
    "chdir_then_file_next_to_the_script": ("""
        import os
        import tempfile
        here = os.path.dirname(__file__)
        with open(os.path.join(here, "data.txt"), "w") as stream:
            stream.write("42")
        os.chdir(tempfile.gettempdir())
        with open(os.path.join(os.path.dirname(__file__), "data.txt")) as stream:
            print("read", stream.read())
        """, []),
    "main_module_as_python_makes_it": ("""
        import builtins
        import sys
        print(__file__, type(__loader__).__name__, __loader__.name, __builtins__ is builtins, getattr(__spec__, "name", None))
        print(sys.argv, sys.path[0], sys.modules["__main__"] is sys.modules[__name__], __name__, __package__)
        print(sorted(name for name in globals() if name.startswith("__")))
        """, ["a", "--b=c"]),
    # torch warns from a module's backward hook with a stacklevel counted to the backward() line
    # (opacus' tests, docs/real-code.md): the warning names that line, not a file of ours.
    "warning_from_a_backward_hook": ("""
        import torch
        layer = torch.nn.Linear(3, 2)
        layer.register_full_backward_hook(lambda module, grad_input, grad_output: None)
        for step in range(2):
            loss = layer(torch.randn(4, 3)).sum()
            loss.backward()
        print(layer.weight.grad.shape)
        """, []),
    # A differentiable optimizer (torchopt's MetaOptimizer, higher) puts non-leaf tensors in a
    # module's parameters; torch warns at a read of a non-leaf's .grad, and the doctor's own reads
    # printed that warning from its files (torchopt's tests, docs/real-code.md). The program's own
    # read, last, still warns at its line.
    "differentiable_optimizer_parameters": ("""
        import torch
        torch.manual_seed(0)
        net = torch.nn.Linear(3, 1)
        meta = torch.nn.Parameter(torch.ones(1))
        outer = torch.optim.SGD([meta], lr=0.01)
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        for step in range(3):
            for inner in range(2):
                loss = ((net(x) * meta - y) ** 2).mean()
                grads = torch.autograd.grad(loss, list(net._parameters.values()), create_graph=True)
                for name, grad in zip(list(net._parameters), grads):
                    net._parameters[name] = net._parameters[name] - 0.1 * grad
            outer.zero_grad()
            ((net(x) - y) ** 2).mean().backward()
            outer.step()
            print(step, meta.item(), net.weight.grad)
            for name in list(net._parameters):
                net._parameters[name] = torch.nn.Parameter(net._parameters[name].detach())
        """, []),
    # A Tensor subclass's __torch_function__ runs at every method call and attribute read on its
    # tensors: pypose's LieTensor warned "Tensor Shape Invalid" at the doctor's own `reshape(-1)`
    # of a parameter after each backward() (docs/real-code.md, seventh set). It must see the
    # program's calls only: the counts it prints are python's. The buggy twin below
    # (`subclass_saved_tensor_modified`) is still reported.
    "tensor_subclass_sees_only_the_programs_calls": ("""
        import collections
        import torch

        calls = collections.Counter()

        class Logged(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls[getattr(func, "__name__", repr(func))] += 1
                return super().__torch_function__(func, types, args, kwargs or {})

        torch.manual_seed(0)
        weight = torch.randn(3, 2).as_subclass(Logged).requires_grad_()
        scale = torch.ones(2).as_subclass(Logged).requires_grad_()
        optimizer = torch.optim.SGD([weight], lr=0.1, momentum=0.9)
        data = torch.randn(8, 3)
        for step in range(3):
            optimizer.zero_grad()
            loss = ((data @ weight).relu() * scale).pow(2).mean()
            loss.backward()
            optimizer.step()
            with torch.no_grad():  # a hand-written update
                scale -= 0.1 * scale.grad
            scale.grad = None
            print(step, round(loss.item(), 6), type(weight).__name__, type(weight.grad).__name__)
        print(sorted(calls.items()))
        """, []),
    # The doctor compares the shapes a custom Function's backward returns with its inputs'
    # (recording/widened_gradients.py): those reads are its own, the subclass must not count them.
    "tensor_subclass_through_a_custom_backward": ("""
        import collections
        import torch

        calls = collections.Counter()

        class Logged(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls[getattr(func, "__name__", repr(func))] += 1
                return super().__torch_function__(func, types, args, kwargs or {})

        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        x = torch.ones(3).as_subclass(Logged).requires_grad_()
        Double.apply(x).sum().backward()
        print(x.grad.tolist(), sorted(calls.items()))
        """, []),
    "subclass_saved_tensor_modified": ("""
        import torch

        class Logged(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                print("call", getattr(func, "__name__", repr(func)))
                return super().__torch_function__(func, types, args, kwargs or {})

        x = torch.ones(3).as_subclass(Logged).requires_grad_()
        y = torch.sigmoid(x)
        y[0] = 0.0
        y.sum().backward()
        """, []),
    "correct_training_loop": ("""
        import torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(inplace=True), torch.nn.Linear(8, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        data, target = torch.randn(16, 4), torch.randn(16, 1)
        for step in range(3):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(data), target)
            loss.backward()
            optimizer.step()
            print(step, loss.item())
        """, []),
}


def write(directory, name: str, source: str) -> str:
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"))
    return str(path)


@pytest.mark.parametrize("options", [[], ["--full"]], ids=["run", "run --full"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_run_prints_what_python_prints_plus_the_report(tmp_path, name, options):
    source, arguments = PROGRAMS[name]
    (tmp_path / "work").mkdir()
    script = write(tmp_path, name, source)
    relative = os.path.relpath(script, tmp_path / "work")  # as typed, relative to the cwd
    plain = run([sys.executable, relative, *arguments], cwd=tmp_path / "work")
    doctored = run([sys.executable, "-m", "autograd_doctor", "run", "--no-rerun", *options, relative, *arguments],
                   cwd=tmp_path / "work")
    assert_same_but_the_report(plain, doctored, tmp_path / "work")


def test_the_report_is_there_to_strip(tmp_path):
    """The comparison above is not vacuous: the buggy programs do get a report."""
    script = write(tmp_path, "saved", PROGRAMS["saved_tensor_modified"][0])
    doctored = run([sys.executable, "-m", "autograd_doctor", "run", "--full", script], cwd=tmp_path)
    assert "error[AD101]" in doctored.stderr and "saved here" in doctored.stderr
    assert strip_report(doctored.stderr) != doctored.stderr
    warned = run([sys.executable, "-m", "autograd_doctor", "run",
                  write(tmp_path, "warned", PROGRAMS["torch_warnings_on_two_lines"][0])], cwd=tmp_path)
    assert "AutogradDoctorWarning" in warned.stderr
    assert "AutogradDoctorWarning" not in strip_report(warned.stderr, str(tmp_path))
    subclass = run([sys.executable, "-m", "autograd_doctor", "run", "--no-rerun", "--full",
                    write(tmp_path, "subclass", PROGRAMS["subclass_saved_tensor_modified"][0])], cwd=tmp_path)
    assert "error[AD101]" in subclass.stderr and "subclass.py:11" in subclass.stderr  # the write `y[0] = 0.0`
    # torch's own warning, once per line as without the doctor, at the user's lines
    assert warned.stderr.count("warned.py:3: UserWarning: To copy construct") == 1
    assert warned.stderr.count("warned.py:4: UserWarning: To copy construct") == 1


def test_run_module_prints_what_python_m_prints(tmp_path):
    package = tmp_path / "trainer"
    package.mkdir()
    (package / "__init__.py").write_text("")
    write(package, "main", textwrap.dedent(PROGRAMS["main_module_as_python_makes_it"][0]) + textwrap.dedent("""
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x.exp()
        y += 1
        y.sum().backward()
        """))
    plain = run([sys.executable, "-m", "trainer.main", "one"], cwd=tmp_path)
    doctored = run([sys.executable, "-m", "autograd_doctor", "run", "--no-rerun", "-m", "trainer.main", "one"],
                   cwd=tmp_path)
    assert "error[AD101]" in doctored.stderr
    assert_same_but_the_report(plain, doctored, tmp_path)


def test_keyboard_interrupt_ends_the_process_as_python_does(tmp_path):
    script = write(tmp_path, "interrupted", """
        import atexit
        atexit.register(print, "atexit ran")
        raise KeyboardInterrupt
        """)
    plain = run([sys.executable, script], cwd=tmp_path)
    doctored = run([sys.executable, "-m", "autograd_doctor", "run", script], cwd=tmp_path)
    assert plain.returncode == -2  # killed by SIGINT, after the atexit handlers
    assert_same_but_the_report(plain, doctored, tmp_path)


# watch(): the same program with the doctor and with a stand-in that does nothing, on the
# same lines (`WATCH` is replaced), so that tracebacks can be compared line for line.
WATCHED = {
    "with_block": """
        import contextlib
        import torch
        import autograd_doctor

        def step():
            x = torch.ones(3, requires_grad=True)
            with WATCH:
                y = torch.sigmoid(x)
                a = torch.tensor(y)
                y[0] = 0.0
                y.sum().backward()

        step()
        """,
    "decorator": """
        import contextlib
        import torch
        import autograd_doctor

        @WATCH
        def step(x):
            h = x.exp()
            h.mul_(2)
            h.sum().backward()

        def train():
            try:
                step(torch.ones(3, requires_grad=True))
            except RuntimeError as error:
                raise SystemError("step failed") from error

        train()
        """,
    "correct_in_a_block": """
        import contextlib
        import torch
        import autograd_doctor

        torch.manual_seed(0)
        layer = torch.nn.Linear(3, 2)
        with WATCH:
            loss = layer(torch.randn(5, 3)).pow(2).mean()
            loss.backward()
        print(round(loss.item(), 6), layer.weight.grad.sum().item())
        """,
}
STAND_INS = {"with_block": "contextlib.nullcontext()", "decorator": "(lambda function: function)",
             "correct_in_a_block": "contextlib.nullcontext()"}


@pytest.mark.parametrize("watch", ["autograd_doctor.watch()", 'autograd_doctor.watch(mode="full")'])
@pytest.mark.parametrize("name", sorted(WATCHED))
def test_watch_prints_what_python_prints_plus_the_report(tmp_path, name, watch):
    plain = run([sys.executable, write(tmp_path, "plain", WATCHED[name].replace("WATCH", STAND_INS[name]))],
                cwd=tmp_path)
    doctored_script = write(tmp_path, "doctored", WATCHED[name].replace("WATCH", watch))
    doctored = run([sys.executable, doctored_script], cwd=tmp_path)
    assert_same_but_the_report(plain, doctored.__class__(
        doctored.args, doctored.returncode, doctored.stdout, doctored.stderr.replace("doctored.py", "plain.py")), tmp_path)
    if name != "correct_in_a_block":
        assert "autograd-doctor:" in doctored.stderr


def without_module_call_frames(text: str) -> str:
    """`text` without the frames of torch/nn/modules/module.py (each a `File` line and the lines
    under it up to the next `File` line or the message)."""
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("  File "):
            skipping = "torch/nn/modules/module.py" in line.replace(os.sep, "/")
        elif not line.startswith("    "):
            skipping = False
        if not skipping:
            kept.append(line)
    return "".join(kept)


def test_an_error_in_a_module_forward_differs_only_in_torch_module_call_frames(tmp_path):
    """While the gradient-path check watches which modules run (global module forward hooks, the
    first few training steps), torch calls a module through its hook path: an error raised in a
    forward shows torch's `_call_impl` at another line and its `inner()` frame. That is the whole
    difference (README, "Run a script"): the user's frames, the message and the exit code are
    python's."""
    source = """
        import torch
        class Decoder(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(3, 3)
            def forward(self, state):
                state = state[:, :3]
                state.detach_()
                return self.linear(state)
        model = torch.nn.Sequential(torch.nn.Linear(3, 6), Decoder())
        model(torch.ones(2, 3)).sum().backward()
        """
    script = write(tmp_path, "decoder", source)
    plain = run([sys.executable, script], cwd=tmp_path)
    doctored = run([sys.executable, "-m", "autograd_doctor", "run", "--no-rerun", script], cwd=tmp_path)
    assert "Can't detach views in-place" in plain.stderr
    assert doctored.returncode == plain.returncode == 1
    assert strip_report(doctored.stdout, str(tmp_path)) == plain.stdout
    stripped = strip_report(doctored.stderr, str(tmp_path))
    assert without_module_call_frames(stripped) == without_module_call_frames(plain.stderr)
    assert "in inner" in stripped
