"""Source positions and text for findings and fixes: AST byte offsets to
character columns, the exact text of a node, edits at a node's range."""

from __future__ import annotations

import ast

from autograd_doctor.lint.findings import Edit, Finding, Fix

# Expressions a method call can follow without parentheses.
ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


class SourceText:
    """Mixed into ``Checker``; reads ``self.lines``, ``self.filename`` and
    appends to ``self.findings``."""

    def col(self, line: int, byte_col: int) -> int:
        """Convert an AST UTF-8 byte offset to a 1-based character column."""
        if line - 1 < len(self.lines):
            text = self.lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1
        return byte_col + 1

    def edit(self, node, content: str, end_node=None) -> Edit:
        end = end_node or node
        return Edit(node.lineno, self.col(node.lineno, node.col_offset),
                    end.end_lineno, self.col(end.end_lineno, end.end_col_offset), content)

    def insert_before(self, node, content: str) -> Edit:
        """Insert ``content`` where ``node`` starts."""
        column = self.col(node.lineno, node.col_offset)
        return Edit(node.lineno, column, node.lineno, column, content)

    def text(self, node) -> str:
        """Source of ``node`` (like ``ast.get_source_segment``, without re-splitting the file)."""
        lines = self.lines[node.lineno - 1: node.end_lineno]
        if not lines:
            return ""
        if len(lines) == 1:
            return lines[0].encode("utf-8")[node.col_offset: node.end_col_offset].decode("utf-8", "replace")
        first = lines[0].encode("utf-8")[node.col_offset:].decode("utf-8", "replace")
        last = lines[-1].encode("utf-8")[: node.end_col_offset].decode("utf-8", "replace")
        return first + "".join(lines[1:-1]) + last

    def atom_text(self, node) -> str:
        """Source of ``node``, parenthesised unless a method call can follow it as is."""
        text = self.text(node)
        return text if isinstance(node, ATOMS) else f"({text})"

    def report(self, code: str, node, message: str, fix: Fix | None = None, related=()):
        self.findings.append(Finding(
            code, message, self.filename, node.lineno, self.col(node.lineno, node.col_offset),
            node.end_lineno or node.lineno,
            self.col(node.end_lineno or node.lineno, node.end_col_offset or node.col_offset),
            fix, list(related)))

    def clone_before(self, stmt, name: str) -> Fix | None:
        """Unsafe fix: insert ``name = name.clone()`` on its own line before ``stmt``."""
        line = self.lines[stmt.lineno - 1] if stmt.lineno - 1 < len(self.lines) else ""
        indent = line[: len(line) - len(line.lstrip())]
        if len(indent.encode("utf-8")) != stmt.col_offset:
            return None
        return Fix(f"copy `{name}` first: `{name} = {name}.clone()`",
                   (Edit(stmt.lineno, 1, stmt.lineno, 1, f"{indent}{name} = {name}.clone()\n"),),
                   safe=False)
