"""The package as a user gets it: sdist and wheel built, the wheel installed into a fresh venv.

The fresh venv (`python -m venv`, no system site-packages) sees nothing of the project's
venv except torch and what torch needs, made visible through a `.pth` file: installing
torch again would copy 1 GB for each run. pip installs the wheel with `--no-index`, so
its dependency on torch is checked against that torch and nothing is downloaded. The commands are run from the fresh
venv's own `bin/`, as a user would run them.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUGGY = "import torch\n\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny[0] = 0.0\ny.sum().backward()\n"
LINTED = "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny[0] = 0\n"

pytestmark = pytest.mark.slow


def run(command: list[str], cwd: Path | None = None, env: dict | None = None,
        timeout: int = 300) -> subprocess.CompletedProcess:
    if env is None:  # never this checkout's src/ (PYTHONPATH): what is tested is the installed wheel
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def distributions_with_requirements(name: str) -> list[importlib.metadata.Distribution]:
    """`name` and everything it requires (installed here), without extras."""
    found: dict[str, importlib.metadata.Distribution] = {}
    wanted = [name]
    while wanted:
        key = re.sub(r"[-_.]+", "-", wanted.pop()).lower()
        if key in found:
            continue
        try:
            found[key] = importlib.metadata.distribution(key)
        except importlib.metadata.PackageNotFoundError:
            continue  # a requirement for another platform (its marker is false here)
        for requirement in found[key].requires or ():
            if "extra ==" not in requirement:
                wanted.append(re.match(r"[A-Za-z0-9._-]+", requirement).group())
    return list(found.values())


def link_installed(names: list[str], into: Path) -> Path:
    """A folder of symlinks to these installed packages and their metadata."""
    into.mkdir()
    for name in names:
        for distribution in distributions_with_requirements(name):
            tops = {Path(str(file)).parts[0] for file in distribution.files or ()}
            for top in tops - {"..", "__pycache__"}:
                source = Path(distribution.locate_file(top))
                if source.exists() and not (into / top).exists():
                    (into / top).symlink_to(source)
    return into


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    # --no-isolation: the build backend (setuptools>=77, a test extra) comes from this venv.
    result = run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)], env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    warnings = [line for line in (result.stdout + result.stderr).splitlines() if "warn" in line.lower()]
    assert warnings == []
    return out


def make_fresh_venv(root: Path, wheel: Path, linked: list[str], requirement: str) -> Path:
    """A venv with `requirement` installed from the wheel, seeing only the `linked` packages of ours."""
    venv = root / "venv"
    # Not this checkout's src/ (PYTHONPATH): pip would take its egg-info for an installed copy.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    # Without pip (and the old setuptools a venv comes with): this venv's pip installs into it.
    result = run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert result.returncode == 0, result.stderr
    site = Path(run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                    env=env).stdout.strip())
    (site / "linked.pth").write_text(f"{link_installed(linked, root / 'linked')}\n")
    result = run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-index",
                  f"{requirement} @ {wheel.as_uri()}"], env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return venv


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, built) -> Path:
    (wheel,) = built.glob("*.whl")
    return make_fresh_venv(tmp_path_factory.mktemp("fresh"), wheel, ["torch"], "autograd-doctor[torch]")


@pytest.fixture(scope="module")
def fresh_venv_without_torch(tmp_path_factory, built) -> Path:
    """What the pre-commit hook's environment gets: the wheel and its dependencies, nothing else."""
    (wheel,) = built.glob("*.whl")
    return make_fresh_venv(tmp_path_factory.mktemp("lint-only"), wheel, [], "autograd-doctor")


@pytest.fixture(scope="module")
def fresh_venv_with_picture(tmp_path_factory, built) -> Path:
    (wheel,) = built.glob("*.whl")
    return make_fresh_venv(tmp_path_factory.mktemp("picture"), wheel, ["torch", "pygraphviz"],
                           "autograd-doctor[picture]")


def test_sdist_and_wheel_carry_the_licence_the_data_files_and_the_torch_range(built):
    (sdist,) = built.glob("*.tar.gz")
    (wheel,) = built.glob("*.whl")
    assert sdist.name == "autograd_doctor-0.1.0.tar.gz"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read("autograd_doctor-0.1.0.dist-info/METADATA").decode()
    assert "autograd_doctor/lint/data/saves.json" in names
    assert "autograd_doctor-0.1.0.dist-info/licenses/LICENSE" in names
    assert "License-Expression: MIT" in metadata.splitlines()
    # torch is an extra (the linter never imports it); the run-time doctor asks for it
    requirements = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert all("extra ==" in line for line in requirements), requirements
    assert 'Requires-Dist: torch<2.15,>=2.13; extra == "torch"' in requirements
    assert "Provides-Extra: picture" in metadata.splitlines()


def test_fresh_venv_imports_the_installed_wheel_and_nothing_from_the_project(fresh_venv):
    python = str(fresh_venv / "bin" / "python")
    where = run([python, "-c", "import autograd_doctor, torch; print(autograd_doctor.__file__)"], cwd=fresh_venv)
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip().startswith(str(fresh_venv)) and str(REPO) not in where.stdout
    assert run([python, "-c", "import pytest"]).returncode == 1  # the test tools stayed outside


def test_installed_run_explains_the_failure_and_exits_like_python(fresh_venv, tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    result = run([str(fresh_venv / "bin" / "autograd-doctor"), "run", "buggy.py"], cwd=tmp_path)
    assert result.returncode == 1
    assert "error[AD101]" in result.stderr and "--> buggy.py:5:1" in result.stderr
    assert "y[0] = 0.0" in result.stderr and "help:" in result.stderr
    assert "RuntimeError: one of the variables needed for gradient computation" in result.stderr


def test_installed_run_without_graphviz_writes_dot_and_says_what_to_install(fresh_venv, tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    env = dict(os.environ, PATH=str(fresh_venv / "bin"))  # no system `dot`; pygraphviz not installed
    env.pop("AUTOGRAD_DOCTOR_GRAPHVIZ", None)
    result = run([str(fresh_venv / "bin" / "autograd-doctor"), "run", "--graph", "out.svg", "buggy.py"],
                 cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert (tmp_path / "out.dot").read_text().startswith("digraph")
    assert ("autograd-doctor: Graphviz is not installed (`apt-get install graphviz`, or `pip install pygraphviz`), "
            "so no out.svg; wrote the DOT text to out.dot instead") in result.stderr


def test_installed_lint_finds_the_write_to_a_saved_tensor(fresh_venv, tmp_path):
    (tmp_path / "model.py").write_text(LINTED)
    result = run([str(fresh_venv / "bin" / "autograd-doctor"), "lint", "model.py"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "model.py:4:1: ADL001 " in result.stdout and "4 | y[0] = 0" in result.stdout


def test_installed_with_the_picture_extra_draws_svg_and_html_without_system_graphviz(fresh_venv_with_picture,
                                                                                     tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    env = dict(os.environ, PATH=str(fresh_venv_with_picture / "bin"))  # no system `dot`
    env.pop("AUTOGRAD_DOCTOR_GRAPHVIZ", None)
    result = run([str(fresh_venv_with_picture / "bin" / "autograd-doctor"), "run", "--graph", "out.svg",
                  "--html", "out.html", "buggy.py"], cwd=tmp_path, env=env)
    assert result.returncode == 1
    svg = (tmp_path / "out.svg").read_text()
    assert "<!-- Generated by graphviz version" in svg and "SigmoidBackward0" in svg and "y[0] = 0.0" in svg
    assert "<svg" in (tmp_path / "out.html").read_text()
    assert "graph of the failure written to out.svg" in result.stderr


# ---- AUTOGRAD_DOCTOR=1: the startup hook the wheel installs ---------------------------------

SPAWNS_A_BUGGY_CHILD = '''\
import multiprocessing

import torch


def train_step():
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y[0] = 0.0
    y.sum().backward()


if __name__ == "__main__":
    child = multiprocessing.get_context("spawn").Process(target=train_step)
    child.start()
    child.join()
    print("child exit code", child.exitcode)
'''


def test_the_wheel_puts_a_one_line_startup_hook_into_site_packages(built):
    (wheel,) = built.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert "autograd_doctor_startup.pth" in archive.namelist()  # at the root: site-packages
        lines = archive.read("autograd_doctor_startup.pth").decode().splitlines()
    # One line, run by site.py because it starts with `import`; it reads one variable.
    assert len(lines) == 1 and lines[0].startswith("import os;") and "AUTOGRAD_DOCTOR" in lines[0]


def without_doctor_variables(**extra: str) -> dict:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("AUTOGRAD_DOCTOR") and key not in ("PYTHONPATH", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(OMP_NUM_THREADS="1", **extra)
    return env


def test_startup_hook_costs_nothing_when_the_variable_is_unset(fresh_venv):
    python = str(fresh_venv / "bin" / "python")
    check = "import sys; print(sorted(name for name in sys.modules if 'autograd_doctor' in name or name == 'torch'))"
    assert run([python, "-c", check], env=without_doctor_variables()).stdout.strip() == "[]"
    # Set, it imports only its own small module until the program imports torch.
    started = run([python, "-c", check], env=without_doctor_variables(AUTOGRAD_DOCTOR="1")).stdout.strip()
    assert started == "['autograd_doctor', 'autograd_doctor.integrations', 'autograd_doctor.integrations.startup']"


def test_autograd_doctor_1_explains_plain_python_and_keeps_its_traceback(fresh_venv, tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    python = str(fresh_venv / "bin" / "python")
    plain = run([python, "buggy.py"], cwd=tmp_path, env=without_doctor_variables())
    doctored = run([python, "buggy.py"], cwd=tmp_path, env=without_doctor_variables(AUTOGRAD_DOCTOR="1"))
    assert plain.returncode == doctored.returncode == 1
    assert "autograd-doctor" not in plain.stderr
    report_at = doctored.stderr.index("autograd-doctor:\n")
    assert doctored.stderr[:report_at] == plain.stderr  # python's traceback, then the report
    assert "error[AD101]" in doctored.stderr and "--> buggy.py:5:1" in doctored.stderr


def test_autograd_doctor_full_names_the_save_line(fresh_venv, tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    result = run([str(fresh_venv / "bin" / "python"), "buggy.py"], cwd=tmp_path,
                 env=without_doctor_variables(AUTOGRAD_DOCTOR="full"))
    assert result.returncode == 1
    assert "saved here: sigmoid keeps its output" in result.stderr


def test_autograd_doctor_1_reaches_a_multiprocessing_spawn_child(fresh_venv, tmp_path):
    (tmp_path / "spawner.py").write_text(SPAWNS_A_BUGGY_CHILD)
    python = str(fresh_venv / "bin" / "python")
    plain = run([python, "spawner.py"], cwd=tmp_path, env=without_doctor_variables())
    doctored = run([python, "spawner.py"], cwd=tmp_path, env=without_doctor_variables(AUTOGRAD_DOCTOR="1"))
    assert plain.stdout == doctored.stdout == "child exit code 1\n"
    assert "autograd-doctor" not in plain.stderr
    assert "error[AD101]" in doctored.stderr and "--> spawner.py:9:5" in doctored.stderr
    assert doctored.stderr[:doctored.stderr.index("autograd-doctor:\n")] == plain.stderr


def test_autograd_doctor_1_before_torchrun_reports_the_failing_rank(fresh_venv, tmp_path):
    command = [str(fresh_venv / "bin" / "python"), "-m", "torch.distributed.run", "--standalone",
               "--nproc_per_node=2", str(REPO / "examples" / "ddp_train.py"), "--bug-rank", "1"]
    env = without_doctor_variables(AUTOGRAD_DOCTOR="1", MASTER_ADDR="127.0.0.1")
    for _attempt in range(3):  # torchrun on CPU/gloo occasionally fails to start (see test_torchrun_ddp.py)
        result = run(command, cwd=tmp_path, env=env)
        if "autograd-doctor" in result.stderr:
            break
    assert result.returncode != 0
    # torch's own excepthook (set by init_process_group) starts each line with the rank, the
    # report's as python's traceback's.
    report = [line for line in result.stderr.splitlines() if "error[AD101]" in line or "help:" in line]
    assert report and all(line.startswith("[rank1]: ") for line in report)
    assert "[rank1]: Traceback (most recent call last):" in result.stderr.splitlines()
    assert "scores[0] = 0.5" in result.stderr and "[rank0]: error" not in result.stderr

def test_lint_installs_and_runs_without_torch(fresh_venv_without_torch, tmp_path):
    python = str(fresh_venv_without_torch / "bin" / "python")
    assert run([python, "-c", "import torch"]).returncode == 1  # really no torch here
    listed = run([python, "-c", "import importlib.metadata as m; "
                  "print(sorted(d.metadata['Name'] for d in m.distributions()))"])
    assert listed.stdout.strip() == "['autograd-doctor']", listed.stdout + listed.stderr
    (tmp_path / "model.py").write_text(LINTED)
    doctor = str(fresh_venv_without_torch / "bin" / "autograd-doctor")
    result = run([doctor, "lint", "--force-exclude", "model.py"], cwd=tmp_path)  # the hook's entry
    assert result.returncode == 1, result.stderr
    assert "model.py:4:1: ADL001 " in result.stdout and result.stderr == ""
    fixture = REPO / "tests" / "lint" / "recreations" / "r19_twin_critic_steps_before_actor_backward.py"
    result = run([doctor, "lint", "--format", "concise", str(fixture)], cwd=tmp_path)
    assert result.returncode == 1 and result.stdout.count(" ADL003 ") == 2, result.stdout + result.stderr
    assert run([doctor, "explain", "ADL001"]).returncode == 0


def test_runtime_without_torch_says_what_to_install(fresh_venv_without_torch, tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    result = run([str(fresh_venv_without_torch / "bin" / "autograd-doctor"), "run", "buggy.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "autograd-doctor: error: autograd-doctor's run-time checks need PyTorch, which is not installed here: "
        "`pip install torch` (or `pip install \"autograd-doctor[torch]\"` for a tested release); "
        "`autograd-doctor lint` works without it"]
    python = str(fresh_venv_without_torch / "bin" / "python")
    result = run([python, "-c", "import autograd_doctor\nautograd_doctor.watch"])
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(
        "ModuleNotFoundError: autograd-doctor's run-time checks need PyTorch")
