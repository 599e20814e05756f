"""Python source as the tokens a copy keeps: what renaming, reformatting, new comments or type hints change is gone.

Names the author chose (functions, classes, parameters, variables, import aliases, attributes assigned on an
object) become `V`; names they did not choose (torch, softmax, masked_fill, a call's dim=) stay, since which
library calls a solution makes is part of what it is. Strings become `S`; comments, docstrings, imports, def
headers (the exercise dictates the entry point's: `def V ( V , V , V ) :` is in every submission), annotations,
line breaks, indentation and a trailing comma before a closing bracket (black's) are dropped. Each token keeps the
part (a file of a folder, a notebook cell) and line it came from, so a match can be shown where it is.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from dataclasses import dataclass
from typing import Any

from grader.submission.source import bounded

NAME, STRING = "V", "S"
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
         tokenize.ENDMARKER}
_FSTRING = tuple(getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
                 if hasattr(tokenize, n))
_CLOSING = {")", "]", "}"}


@dataclass(frozen=True)
class Token:
    text: str
    part: int  # which part of the submission (a file of a folder, a notebook cell)
    line: int  # 1-based, in that part


def normalized(code: str, part: int = 0, chosen: frozenset[str] | None = None) -> list[Token]:
    """The tokens of `code` that a copy keeps. `chosen`: the author's names when they span several parts (a
    folder, a notebook's cells); by default those bound in `code` itself. TooDeep where it nests deeper than
    Python's parser goes: such a text has no tokens to compare (submission.source.TooDeep)."""
    try:
        with bounded():
            names, attrs, dropped, keywords = _analysed(ast.parse(code), code)
    except (SyntaxError, ValueError):  # unparsable: the names that look bound are the author's (still compared)
        (names, attrs), dropped, keywords = _chosen_by_tokens(code), [], frozenset()
    if chosen is not None:
        names = names | chosen
    out: list[Token] = []
    previous = ""
    in_fstring = 0
    at = 0  # the first dropped span that does not end before this token (tokens come in order)
    for tok in _tokens(code):
        while at < len(dropped) and dropped[at][1] <= tok.start:
            at += 1
        if tok.type in _SKIP or not tok.string.strip() or at < len(dropped) and dropped[at][0] <= tok.start:
            continue
        if _FSTRING and tok.type in _FSTRING:  # Python 3.12 splits f-strings; one S for the whole
            if tok.type == _FSTRING[0]:
                in_fstring += 1
                out.append(Token(STRING, part, tok.start[0]))
            elif tok.type == _FSTRING[-1]:
                in_fstring -= 1
            continue
        if in_fstring:
            continue
        text = tok.string
        if tok.type == tokenize.NAME and not keyword.iskeyword(text) and tok.start not in keywords:
            if previous == ".":
                text = NAME if text in attrs else text
            elif text in names:
                text = NAME
        elif tok.type == tokenize.STRING:
            text = STRING
        elif tok.type == tokenize.NUMBER:
            text = text.lower().replace("_", "")
        if text in _CLOSING and out and out[-1].text == ",":
            out.pop()  # black's magic trailing comma
        out.append(Token(text, part, tok.start[0]))
        previous = text
    return out


def chosen_names(codes: list[str]) -> frozenset[str]:
    """The names the author chose anywhere in these parts (a notebook's cells use each other's names)."""
    found: set[str] = set()
    for code in codes:
        try:
            with bounded():
                found |= _analysed(ast.parse(code), code)[0]
        except (SyntaxError, ValueError):
            found |= _chosen_by_tokens(code)[0]
    return frozenset(found)


def _tokens(code: str):
    """tokenize's tokens, up to an error (an unterminated string still leaves what came before it)."""
    try:
        yield from tokenize.generate_tokens(io.StringIO(code).readline)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return


_BINDS_AFTER = {"def", "class", "for", "as", "global", "nonlocal", "lambda"}
_ASSIGN = {"=", ":=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", ">>=", "<<="}


def _chosen_by_tokens(code: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names and attributes of _analysed, for code that does not parse, from the tokens: a name before an
    assignment (after a dot: an attribute), after def, class, for, as, lambda or a comma of a for or a def's
    parameters."""
    toks = [t for t in _tokens(code) if t.type not in _SKIP]
    names: set[str] = set()
    attrs: set[str] = set()
    binding = ""  # the keyword whose names a comma continues ("def" inside its parentheses, "for" until "in")
    depth = 0
    for i, t in enumerate(toks):
        before = toks[i - 1].string if i else ""
        after = toks[i + 1].string if i + 1 < len(toks) else ""
        if t.string in ("(", "[", "{"):
            depth += 1
        elif t.string in (")", "]", "}"):
            depth -= 1
            binding = "" if binding == "def" and depth == 0 else binding
        elif t.string in ("in", ":", "=") and binding == "for":
            binding = ""
        if t.type != tokenize.NAME or keyword.iskeyword(t.string):
            binding = t.string if t.string in ("def", "for") else binding
            continue
        if before == ".":
            if after in _ASSIGN:
                attrs.add(t.string)
        elif before in _BINDS_AFTER or after in _ASSIGN and depth == 0 or binding and before in ("(", ",", "*", "**"):
            names.add(t.string)
    return frozenset(names), frozenset(attrs)


def _registered(call: ast.Call) -> str | None:
    """The attribute a `register_buffer("bias", ...)` call assigns (self.bias); None for any other call."""
    f = call.func
    if (isinstance(f, ast.Attribute) and f.attr in ("register_buffer", "register_parameter") and call.args
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
        return call.args[0].value
    return None


def _analysed(tree: ast.AST, code: str):
    """(names bound by the author, attribute names assigned on objects, the spans dropped, where a call's keyword
    names are) in one walk of the tree.

    `import torch` binds a name nobody chose, and `device=` in a call is the callee's name even where the author
    has a `device` of their own. The spans, (start, end) in tokenize's (line, character) terms,
    sorted and disjoint: docstrings and string statements, imports (every solution has the same ones, in any
    order), def headers (the exercise dictates the entry point's) and the annotations of parameters and
    assignments (with the `:` before them)."""
    lines = code.splitlines()

    def char(line: int, col: int) -> int:  # ast counts UTF-8 bytes, tokenize characters
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return col if text.isascii() else len(text.encode()[:col].decode(errors="ignore"))

    # a node with a position (a statement, expression, argument, keyword...): ast.AST itself declares none
    def start(node: Any) -> tuple[int, int]:
        return node.lineno, char(node.lineno, node.col_offset)

    def end(node: Any) -> tuple[int, int]:
        return node.end_lineno, char(node.end_lineno, node.end_col_offset)

    names: set[str] = set()
    attrs: set[str] = set()
    spans = []
    keywords: set[tuple[int, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
            spans.append((start(node), start(node.body[0])))  # `def`, name, parameters, `:`: where the body starts
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
            if node.annotation is not None:
                spans.append(((node.lineno, start(node)[1] + len(node.arg)), end(node.annotation)))
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname for a in node.names if a.asname)
            spans.append((start(node), end(node)))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            attrs.add(node.attr)
        elif isinstance(node, ast.Call):
            keywords.update(start(k) for k in node.keywords if k.arg)
            if (registered := _registered(node)) is not None:
                attrs.add(registered)  # register_buffer("bias", ...) assigns self.bias
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            spans.append((start(node), end(node)))
        elif isinstance(node, ast.AnnAssign) and node.simple and node.value is not None:
            spans.append((end(node.target), end(node.annotation)))
    merged: list[list] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return frozenset(names), frozenset(attrs), [tuple(m) for m in merged], frozenset(keywords)
