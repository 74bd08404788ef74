"""Looking up a line's statement and function visits only the nodes covering it, with the
answers of a walk over the whole syntax tree (the reference below), on every line."""

import ast
import pathlib

import autograd_doctor.diagnosis.source as source
from autograd_doctor.analysis.errors.context import enclosing_function

COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While, ast.If,
            ast.With, ast.AsyncWith, ast.Try)

PROGRAM = '''\
import functools
a = 1; b = 2
@functools.lru_cache
def outer(x):
    def inner(y):
        return (y +
                1)
    total = 0
    for i in range(3):
        if i:
            total += inner(i); total -= 1
        else:
            try:
                pass
            except Exception:
                total = [
                    v for v in range(2)]
    match x:
        case 1:
            loss = lambda t: t * 2
        case _:
            loss = None
    return total
class Model:
    async def step(self):
        with open(__file__) as f:
            return f.read()
'''


def whole_tree_statement(tree, line):
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, COMPOUND) and node.lineno <= line <= node.end_lineno:
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def whole_tree_function(tree, line):
    best = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            if best is tree or node.lineno >= best.lineno:
                best = node
    return best


def test_line_lookups_match_a_whole_tree_walk(tmp_path):
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    tree = source.parse_file(str(path))
    for line in range(1, PROGRAM.count("\n") + 2):
        assert source.statement_at(str(path), line) is whole_tree_statement(tree, line), line
        assert enclosing_function(tree, line) is whole_tree_function(tree, line), line
    # And on a real, larger file: this package's doctor.py.
    real = str(pathlib.Path(source.__file__).parents[1] / "doctor.py")
    tree = source.parse_file(real)
    for line in range(1, len(pathlib.Path(real).read_text().splitlines()) + 1, 7):
        assert source.statement_at(real, line) is whole_tree_statement(tree, line), line
        assert enclosing_function(tree, line) is whole_tree_function(tree, line), line


def test_statement_and_function_lookups_match_a_whole_tree_walk(tmp_path):
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    for filename in (str(path), str(pathlib.Path(source.__file__).parents[1] / "doctor.py")):
        tree = source.parse_file(filename)
        walked = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)]
        assert sorted(map(id, source.statements_in(tree))) == sorted(map(id, walked))
        assert source.calls_with_arguments(filename) == tuple(
            node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args)


def test_a_code_objects_def_is_found_when_decorated(tmp_path):
    """A decorated function's code starts at its first decorator's line, above the `def`."""
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    namespace = {"__file__": str(path)}
    exec(compile(PROGRAM, str(path), "exec"), namespace)
    outer = namespace["outer"].__wrapped__
    assert outer.__code__.co_firstlineno == 3  # the decorator's line; the def is on line 4
    assert source.function_definition(outer.__code__).name == "outer"
    assert source.function_starting_at(str(path), 3).name == "outer"
    assert source.function_definition(namespace["Model"].step.__code__).name == "step"
