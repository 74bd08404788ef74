"""The `autograd-doctor lint` command: options, formats, exit codes, files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_doctor.lint.cli import lint_main

from sarif_structure import check_sarif  # tests/lint/ is on sys.path (pytest rootdir-relative import)

BAD = "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny[0] = 0\n" \
      "z = torch.ones(2, 2)\nz -= z[:, :1]\n"
CLEAN = "import torch\n\n\ndef f(x):\n    return x * 2\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def run(capsys, *argv):
    code = lint_main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_0_when_clean(project, capsys):
    code, out, _ = run(capsys, "clean.py")
    assert code == 0 and "All checks passed!" in out


def test_exit_1_with_findings_and_text_format(project, capsys):
    code, out, _ = run(capsys, "bad.py")
    assert code == 1
    assert "bad.py:4:1: ADL001 " in out
    assert "bad.py:6:1: ADL010 [*] " in out
    assert "4 | y[0] = 0" in out and "^^^^^^^^" in out
    assert "Found 2 findings." in out and "1 fixable with `--fix`" in out


def test_concise_format_is_one_line_per_finding(project, capsys):
    code, out, _ = run(capsys, "--format", "concise", "-q", "bad.py")
    assert out.splitlines() == [line for line in out.splitlines() if line.startswith("bad.py:")]
    assert len(out.splitlines()) == 2


def test_exit_zero_option(project, capsys):
    assert run(capsys, "--exit-zero", "bad.py")[0] == 0


def test_missing_path_is_a_usage_error(project, capsys):
    code, out, err = run(capsys, "nope.py")
    assert code == 2 and err == "autograd-doctor lint: error: path not found: nope.py\n"


@pytest.mark.parametrize("argv, message", [
    (["--select", "XYZ1", "bad.py"], "unknown rule code or prefix 'XYZ1'"),
    (["--format", "xml", "bad.py"], "invalid choice"),
    (["--bogus"], "unrecognized arguments"),
    (["-j", "0", "bad.py"], "at least 1"),
])
def test_usage_errors_print_one_line_and_exit_2(project, capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("autograd-doctor lint: error: ") and message in err
    assert err.count("\n") == 1


def test_no_paths_exits_0_quietly(project, capsys):
    assert run(capsys) == (0, "", "")


def test_help_exits_0(project, capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "--unsafe-fixes" in out


def test_list_rules(project, capsys):
    code, out, _ = run(capsys, "--list-rules")
    assert code == 0 and "ADL001" in out and "ADL013" in out


def test_json_format_shape(project, capsys):
    code, out, _ = run(capsys, "--format", "json", "bad.py")
    data = json.loads(out)
    assert code == 1 and [d["code"] for d in data] == ["ADL001", "ADL010"]
    for d in data:
        assert set(d) == {"code", "message", "file", "line", "column", "end_line", "end_column", "fix"}
    assert data[0]["fix"]["applicability"] == "unsafe"
    assert data[1]["fix"] == {"applicability": "safe",
                              "message": "copy the operand first with `.clone()`",
                              "edits": [{"content": "z[:, :1].clone()", "line": 6, "column": 6,
                                         "end_line": 6, "end_column": 14}]}


def test_json_format_empty_list_when_clean(project, capsys):
    assert run(capsys, "--format", "json", "clean.py")[1] == "[]\n"


def test_sarif_is_well_formed_sarif_2_1_0(project, capsys):
    (project / "broken.py").write_text("def f(:\n")
    code, out, _ = run(capsys, "--format", "sarif", "bad.py", "broken.py", "clean.py")
    doc = json.loads(out)
    check_sarif(doc)
    run_ = doc["runs"][0]
    rule_ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    assert "ADL001" in rule_ids and "ADL000" in rule_ids
    results = run_["results"]
    assert [r["ruleId"] for r in results] == ["ADL001", "ADL010", "ADL000"]
    for r in results:
        assert rule_ids[r["ruleIndex"]] == r["ruleId"]
    loc = results[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "bad.py" and loc["region"]["startLine"] == 4


def test_sarif_when_clean_is_valid(project, capsys):
    code, out, _ = run(capsys, "--format", "sarif", "clean.py")
    check_sarif(json.loads(out))
    assert code == 0 and json.loads(out)["runs"][0]["results"] == []


def test_github_format(project, capsys):
    code, out, _ = run(capsys, "--format", "github", "bad.py")
    first = out.splitlines()[0]
    assert first.startswith("::warning file=bad.py,line=4,col=1,endLine=4,endColumn=9,title=ADL001::ADL001 ")


def test_select_and_ignore_prefixes(project, capsys):
    assert "ADL001" not in run(capsys, "--ignore", "ADL001", "bad.py")[1]
    out = run(capsys, "--select", "ADL0", "--ignore", "ADL010", "bad.py")[1]
    assert "ADL001" in out and "ADL010" not in out
    code, out, _ = run(capsys, "--select", "ADL010", "bad.py")
    assert "ADL010" in out and "ADL001" not in out
    # the more specific prefix wins
    out = run(capsys, "--select", "ADL001", "--ignore", "ADL", "bad.py")[1]
    assert "ADL001" in out


def test_advice_rules_are_opt_in_by_their_full_code(project, capsys):
    (project / "style.py").write_text("import torch\nx = torch.randn(3, requires_grad=True)\n"
                                      "z = (x * 2).clone().detach()\n")
    assert run(capsys, "--format", "concise", "style.py")[0] == 0  # advice is off by default
    assert run(capsys, "--format", "concise", "--select", "ADL", "style.py")[0] == 0
    code, out, _ = run(capsys, "--format", "concise", "-q", "--select", "ADL,ADL007", "style.py")
    assert code == 1 and out.startswith("style.py:3:5: ADL007 [*] ")


def test_noqa_comments(project, capsys):
    (project / "n.py").write_text(BAD.replace("y[0] = 0", "y[0] = 0  # noqa: ADL010, ADL001")
                                  .replace(":1]\n", ":1]  # NOQA\n"))
    assert run(capsys, "n.py")[0] == 0
    (project / "m.py").write_text(BAD.replace("y[0] = 0", "y[0] = 0  # noqa: ADL010"))
    assert "ADL001" in run(capsys, "m.py")[1]
    (project / "s.py").write_text(BAD.replace("y[0] = 0", "y[0] = 0  # noqa:E501 ADL001")
                                  .replace(":1]\n", ":1]  # noqa: E501\n"))
    out = run(capsys, "--format", "concise", "-q", "s.py")[1]
    assert "ADL001" not in out and "ADL010" in out


def test_pyproject_config_found_from_linted_path(tmp_path, capsys, monkeypatch):
    pkg = tmp_path / "proj"
    (pkg / "src" / "gen").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text('[tool.autograd-doctor]\nignore = ["ADL010"]\n'
                                        'extend-exclude = ["gen"]\n')
    (pkg / "src" / "bad.py").write_text(BAD)
    (pkg / "src" / "gen" / "bad2.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "--format", "concise", "proj/src")
    assert "ADL001" in out and "ADL010" not in out and "bad2.py" not in out
    # --isolated ignores the file
    out = run(capsys, "--isolated", "--format", "concise", "proj/src")[1]
    assert "ADL010" in out and "bad2.py" in out


def test_pyproject_select_and_exclude(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.autograd-doctor]\nselect = ["ADL010"]\n'
                                             'exclude = ["skip_*.py"]\n')
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "skip_me.py").write_text(BAD)
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "v.py").write_text(BAD)  # default excludes are replaced by `exclude`
    monkeypatch.chdir(tmp_path)
    out = run(capsys, "--format", "concise", "-q", ".")[1]
    assert sorted(line.split(":")[0] for line in out.splitlines()) == ["./.venv/v.py", "./a.py"]
    assert all("ADL010" in line for line in out.splitlines())


def test_bad_pyproject_is_a_usage_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.autograd-doctor]\nselekt = ["ADL"]\n')
    (tmp_path / "a.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "a.py")
    assert code == 2 and "unknown key 'selekt'" in err


def test_directories_skip_default_excludes_and_gitignore(project, capsys):
    for d in (".venv", "venv", ".git", "build", "dist", "__pycache__", ".tox", "node_modules", "ignored"):
        (project / d).mkdir()
        (project / d / "x.py").write_text(BAD)
    (project / "sub").mkdir()
    (project / "sub" / "keep.py").write_text(BAD)
    (project / "sub" / "gen_out.py").write_text(BAD)
    (project / "sub" / "important_gen_out.py").write_text(BAD)
    (project / ".gitignore").write_text("# comment\nignored/\n*_out.py\n!important_*.py\n")
    out = run(capsys, "--format", "concise", "-q", "--select", "ADL001", ".")[1]
    files = sorted(line.split(":")[0] for line in out.splitlines())
    assert files == ["./bad.py", "./sub/important_gen_out.py", "./sub/keep.py"]
    out = run(capsys, "--format", "concise", "-q", "--select", "ADL001", "--no-gitignore", ".")[1]
    assert "./ignored/x.py" in out


def test_explicit_file_is_linted_even_if_excluded_unless_force_exclude(project, capsys):
    (project / "build").mkdir()
    (project / "build" / "b.py").write_text(BAD)
    assert run(capsys, "build/b.py")[0] == 1
    assert run(capsys, "--force-exclude", "build/b.py")[0] == 0


def test_symlink_loop_does_not_recurse(project, capsys):
    (project / "pkg").mkdir()
    (project / "pkg" / "m.py").write_text(BAD)
    os.symlink(project / "pkg", project / "pkg" / "loop")
    out = run(capsys, "--format", "concise", "-q", "--select", "ADL001", "pkg")[1]
    assert out.splitlines() == ["pkg/m.py:4:1: ADL001 " + out.split(" ADL001 ", 1)[1].splitlines()[0]]


def test_syntax_error_is_a_finding_and_other_files_are_linted(project, capsys):
    (project / "a_broken.py").write_text("import torch\n\ndef f(x)\n    return x\n")
    code, out, _ = run(capsys, "--format", "json", ".")
    data = json.loads(out)
    broken = [d for d in data if d["file"].endswith("a_broken.py")]
    assert [(d["code"], d["line"]) for d in broken] == [("ADL000", 3)]
    assert "syntax error" in broken[0]["message"]
    assert any(d["file"].endswith("bad.py") for d in data)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 parses type parameters")
def test_python_312_syntax_names_the_version_it_needs():
    # huggingface/lerobot requires 3.12 and uses `type X = ...` and `class C[T]:`
    from autograd_doctor.lint.engine import lint_source
    for source in ("type NameOrID = str | int\n", "class Backtrackable[T]:\n    pass\n",
                   "def load[T: int](obj: T) -> T:\n    return obj\n"):
        [finding] = lint_source(source)
        assert finding.code == "ADL000" and "Python 3.12 syntax" in finding.message
    [plain] = lint_source("def f(x)\n    return x\n")  # a real error: no hint
    assert plain.code == "ADL000" and "3.12" not in plain.message
    [typed] = lint_source("type = 3\ndef f(x)\n    return x\n")
    assert "3.12" not in typed.message


def test_non_utf8_file_is_a_finding_not_a_traceback(project, capsys):
    (project / "latin.py").write_bytes(b"x = '\xe9\xe8'\n")
    code, out, err = run(capsys, "--format", "concise", "latin.py", "bad.py")
    assert code == 1 and err == ""
    assert "latin.py:1:1: ADL000 cannot decode file" in out and "bad.py:4:1: ADL001" in out


def test_coding_cookie_is_honoured(project, capsys):
    src = "# -*- coding: latin-1 -*-\n" + BAD.replace("y[0] = 0", "y[0] = 0  # caf\xe9")
    (project / "cookie.py").write_bytes(src.encode("latin-1"))
    out = run(capsys, "--format", "concise", "cookie.py")[1]
    assert "cookie.py:5:1: ADL001" in out


def test_empty_and_null_byte_files(project, capsys):
    (project / "empty.py").write_text("")
    (project / "nul.py").write_bytes(b"x = 1\x00\n")
    code, out, _ = run(capsys, "--format", "concise", "empty.py", "nul.py")
    assert out.count("ADL000") == 1 and "nul.py:1:1: ADL000" in out


def test_very_large_and_deeply_nested_files(project, capsys):
    (project / "big.py").write_text(BAD + "a = 1\n" * 200_000)
    (project / "deep.py").write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    (project / "deeper.py").write_text("x = " + "+".join(["a"] * 20000) + "\n")
    code, out, err = run(capsys, "--format", "concise", "big.py", "deep.py", "deeper.py")
    assert "big.py:4:1: ADL001" in out and err == ""
    assert "deep.py:1:" in out and "deeper.py:1:1: ADL000" in out


def test_parallel_jobs_give_the_same_output_in_the_same_order(project, capsys):
    for i in range(12):
        (project / f"m{i:02}.py").write_text(BAD if i % 3 else CLEAN)
    serial = run(capsys, "--format", "json", ".")[1]
    parallel = run(capsys, "--format", "json", "-j", "3", ".")[1]
    assert serial == parallel and len(json.loads(serial)) == 18


def test_console_script_subprocess(project):
    exe = Path(sys.executable).parent / "autograd-doctor"
    cmd = [str(exe), "lint"] if exe.exists() else [
        sys.executable, "-c", "import sys; from autograd_doctor.lint.cli import lint_main; "
        "sys.exit(lint_main(sys.argv[1:]))"]
    proc = subprocess.run(cmd + ["--format", "json", "bad.py"], capture_output=True, text=True,
                          cwd=project, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert [d["code"] for d in json.loads(proc.stdout)] == ["ADL001", "ADL010"]
    proc = subprocess.run(cmd + ["missing.py"], capture_output=True, text=True, cwd=project, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["autograd-doctor lint: error: path not found: missing.py"]


def test_text_format_shows_the_saving_site(project, capsys):
    out = run(capsys, "bad.py")[1]
    assert "3 | y = torch.sigmoid(x)" in out
    assert "  |     ---------------- saved here: torch.sigmoid keeps its output" in out


def test_sarif_structure_check_rejects_broken_documents(project, capsys):
    doc = json.loads(run(capsys, "--format", "sarif", "bad.py")[1])
    check_sarif(doc)
    broken = json.loads(json.dumps(doc))
    broken["runs"][0]["results"][0]["ruleIndex"] += 1
    with pytest.raises(AssertionError):
        check_sarif(broken)
    broken = json.loads(json.dumps(doc))
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(AssertionError):
        check_sarif(broken)


def test_select_all_selects_every_rule_opt_in_included(project, capsys):
    from autograd_doctor.lint.rules import OPT_IN_CODES

    (project / "advice.py").write_text("import torch\n\n\ndef f(x: torch.Tensor):\n"
                                       "    return x.clone().detach()\n")
    code, out, _ = run(capsys, "--select", "ALL", "--format", "concise", "advice.py", "bad.py")
    assert code == 1 and "ADL007" in out and "ADL001" in out
    _, default_out, _ = run(capsys, "--format", "concise", "advice.py")
    assert "ADL007" not in default_out
    from autograd_doctor.lint.engine import Selection
    assert all(c in Selection(("ALL",)) for c in OPT_IN_CODES)
    assert "ADL004" not in Selection(("ALL",), ("ADL004",))


def test_a_pipe_closed_early_ends_quietly(project):
    for i in range(300):
        (project / f"bad{i}.py").write_text(BAD)
    script = (f"{sys.executable} -m autograd_doctor lint {project} | head -1")
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", script], capture_output=True, text=True,
                          cwd=project, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout.count("\n") == 1 and "ADL001" in proc.stdout
    assert proc.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored" line
    assert proc.returncode == 1
