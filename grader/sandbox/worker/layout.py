"""Which parameters of a built layer take which of the grader's weights, by their names and shapes: a fused
[3d, d] in q, k, v thirds (or [2d, d] k, v halves), separate q, k, v, o, one Linear per head in head order, with or
without bias; a rubric's names before any guess."""

from __future__ import annotations

import re

import torch

ROLES = ("w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o")

# parameter names' words (split at . and _, lowercase) that say which projection a tensor is
Q_WORDS = {"q", "query", "queries", "wq", "toq", "qproj", "qlinear", "q_lin"}
K_WORDS = {"k", "key", "keys", "wk", "tok", "kproj", "klinear"}
V_WORDS = {"v", "value", "values", "wv", "tov", "vproj", "vlinear"}
O_WORDS = {"o", "out", "output", "proj", "cproj", "wo", "oproj", "dense", "fc", "projection", "outproj", "fcout",
           "resid", "c_proj"}


def words(name: str) -> list[str]:
    return [w for w in re.split(r"[._]", name.lower()) if w]


def layout(module: torch.nn.Module, d: int, heads: int, names: dict | None = None) -> tuple[dict, list, str]:
    """(parameter name -> [(role, first row, last row + 1)], the parameters no role takes, a problem or ""): which
    rows of which role each parameter of the module holds, in the parameter's row order. `names`: a rubric's
    parameter name -> role (or "w_qkv" / "b_qkv" for a fused one), before any guess."""
    names = names or {}
    hs = d // max(heads, 1)
    out: dict[str, list] = {}  # fused parameters: their roles in row order, each whole
    claims: dict[str, list] = {}  # role -> [(parameter name, head index or None, rows)]
    unmapped = []
    for name, p in module.named_parameters():
        ws = words(name)
        kind = "b" if p.dim() == 1 else "w"
        if p.dim() not in (1, 2) or (p.dim() == 2 and p.shape[1] != d):
            unmapped.append(name)
            continue
        rows, told = p.shape[0], names.get(name)
        wset = set(ws) | {"".join(ws[i:i + 2]) for i in range(len(ws) - 1)}
        if told in ("w_qkv", "b_qkv") or (told is None and rows == 3 * d):
            out[name] = [(f"{kind}_{r}", 0, d) for r in "qkv"]
            continue
        if told is None and rows == 2 * d and {"kv", "wkv", "tokv", "kvproj"} & wset:
            out[name] = [(f"{kind}_{r}", 0, d) for r in "kv"]
            continue
        role = told
        if role is None:
            letter = ("q" if wset & Q_WORDS else "k" if wset & K_WORDS else "v" if wset & V_WORDS else
                      "o" if wset & O_WORDS else None)
            role = f"{kind}_{letter}" if letter else None
        if role not in ROLES or (role[2] == "o" and rows != d):
            unmapped.append(name)
            continue
        claims.setdefault(role, []).append((name, next((int(w) for w in ws if w.isdigit()), None), rows))
    problem = []
    for role, found in claims.items():  # one whole claim, or one claim per head, in head order
        if len(found) == 1 and found[0][2] == d:
            out.setdefault(found[0][0], []).append((role, 0, d))
            continue
        per_head = sorted(found, key=lambda c: c[1] if c[1] is not None else -1)
        if (len(found) == heads and all(c[1] is not None and c[2] == hs for c in found)
                and len({c[1] for c in found}) == heads):
            for h, (name, _, _) in enumerate(per_head):
                out.setdefault(name, []).append((role, h * hs, (h + 1) * hs))
            continue
        problem.append(f"{role}: {', '.join(c[0] for c in found)}?")
    spans: dict[str, list] = {}
    for parts in out.values():
        for r, a, b in parts:
            spans.setdefault(r, []).append((a, b))
    for r, found in spans.items():  # each role's rows taken once each, no more, no fewer
        ends = sorted(found)
        if ends[0][0] != 0 or ends[-1][1] != d or any(x[1] != y[0] for x, y in zip(ends, ends[1:])):
            problem.append(f"{r}: {', '.join(n for n, parts in out.items() if any(x[0] == r for x in parts))}?")
    for r in ("w_q", "w_k", "w_v"):
        if r not in spans and not any(x.startswith(r) for x in problem):
            problem.append(f"{r}: no parameter found")
    said = ""
    if problem:
        listed = ", ".join(f"{n} {list(p.shape)}" for n, p in module.named_parameters())
        said = (f"the grader could not tell which parameters take which weights ({'; '.join(problem)}); the module "
                f"has: {listed or 'no parameters'}; a rubric names them: [conventions] weights = "
                f"\"<parameter>=w_q, ...\" (roles: {', '.join(ROLES)}, or w_qkv / b_qkv for a fused [3d, d] one)")
    return out, unmapped, said
