"""The inputs of a layer handed in as a class (mha_module): what the worker found when it built it (its roles, or why
the weights cannot be set), the drawn input and weights of the roles it has, the changes the checks make to them,
the input forms, the rubric's conventions for names the grader does not know, and their words in a failure."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from hypothesis import strategies as st

from grader.checks.core import Ctx, Failed
from grader.checks.reach import Form
from grader.sandbox.client import StudentError

ROLES = ("w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o")
CONTEXT = 8  # the context length (block_size, context_length, max_len) every layer is built with
DROPOUT = 0.1  # its dropout: off in eval(), so a dropout left on in eval() shows
LONG = CONTEXT + 4  # T of the reach's form past the context length


# -- what the worker found, and the draws that follow it -----------------------------------------------------------
def layer(ctx: Ctx) -> dict:
    """The layer as the worker built it (Subject.describe): its roles `present`, and a `problem` when its
    parameters could not be told apart (then no weights are set: it keeps its own)."""
    try:
        return ctx.subject.describe(CONTEXT)
    except StudentError as e:
        return {"present": [], "problem": f"building your class failed: {e}", "class": "", "parameters": []}


def mapped(ctx: Ctx) -> list[str]:
    """The roles the drawn weights go to; none where the layer's parameters could not be told apart."""
    found = layer(ctx)
    return [] if found["problem"] else [r for r in found["present"] if r in ROLES]


def needs_weights(ctx: Ctx) -> list[str]:
    """The roles present, or Failed saying why the weights cannot be set (a check that needs them)."""
    found = layer(ctx)
    if found["problem"]:
        raise Failed(f"this check sets the layer's weights, and {found['problem']}")
    return mapped(ctx)


def weights(g: torch.Generator, d: int, present, dtype) -> list:
    """The eight roles' tensors (None where the layer has no place): weights of unit-variance projections, biases
    of size 0.5."""
    found: list[torch.Tensor | None] = []
    for role in ROLES:
        if role not in present:
            found.append(None)
            continue
        shape = (d, d) if role[0] == "w" else (d,)
        t = torch.randn(shape, generator=g, dtype=torch.float64) * (d**-0.5 if role[0] == "w" else 0.5)
        found.append(t.to(dtype))
    return found


@st.composite
def drawn(draw, present=(), t=(1, CONTEXT), b=(1, 2), heads=(1, 3), size=(1, 4), dtypes=(np.float32,)):
    """(args, heads): x [B, T, H * size] and the weights of the roles `present`, from a drawn seed (hypothesis
    shrinks the sizes and the seed, not thousands of weights)."""
    dtype = {np.float32: torch.float32, np.float64: torch.float64}[draw(st.sampled_from(dtypes))]
    n_b, n_t, n_h, hs = (draw(st.integers(*r)) for r in (b, t, heads, size))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**16 - 1)))
    d = n_h * hs
    x = torch.randn(n_b, n_t, d, generator=g, dtype=torch.float64).to(dtype)
    return (x, *weights(g, d, present, dtype)), n_h


def drawing(ctx: Ctx, present, dtypes=(np.float32,), heads=(1, 3), **kw):
    """drawn() within what the layer handles: its dtypes, and one head for a layer whose constructor takes no head
    count (Raschka's CausalAttention)."""
    if ctx.reach is not None:
        dtypes = ctx.reach.dtypes(dtypes)
    return drawn(present=tuple(present), dtypes=dtypes, heads=heads if multihead(ctx) else (1, 1), **kw)


def multihead(ctx: Ctx) -> bool:
    """Whether the head count reaches the layer's build (a constructor of one head takes none)."""
    return bool(layer(ctx).get("heads"))


def out_of(ctx: Ctx, args, heads: int, **kw) -> torch.Tensor:
    return ctx.call_all(*args, heads=heads, **kw)[0]


def said(args, heads: int) -> str:
    x = args[0]
    b, t, d = x.shape
    return f"x of shape {tuple(x.shape)} {str(x.dtype).removeprefix('torch.')} (B={b}, T={t}, d={d}, {heads} head{'s' * (heads > 1)})"


def replaced(args, **roles):
    """args with some roles replaced."""
    found = list(args)
    for role, value in roles.items():
        found[1 + ROLES.index(role)] = value
    return tuple(found)


def role(args, name: str):
    return args[1 + ROLES.index(name)]


def changed_token(x: torch.Tensor, b: int, j: int) -> torch.Tensor:
    y = x.clone()
    y[b, j] = -2 * y[b, j] + 1
    return y


@st.composite
def with_token(draw, inputs):
    args, heads = draw(inputs)
    return (args, heads), draw(st.integers(1, args[0].shape[1] - 1))


@st.composite
def two_heads(draw, inputs):
    args, heads = draw(inputs)
    h = draw(st.integers(0, heads - 1))
    return (args, heads), (h, draw(st.sampled_from([g for g in range(heads) if g != h])))


def grown(args, rows: torch.Tensor, size: int, q_factor: float = 1.0) -> tuple:
    """The layer's roles at width `size`, old feature f of q, k, v at `rows[f]` and zeros elsewhere, W_Q and b_Q times
    `q_factor`; x and the output keep their first d features (W_O's old rows, at `rows` of its columns)."""
    d = args[0].shape[-1]
    found: list = [torch.nn.functional.pad(args[0], (0, size - d))]
    for name in ROLES:
        t = role(args, name)
        if t is None:
            found.append(None)
            continue
        big = torch.zeros((size, size) if name[0] == "w" else (size,), dtype=t.dtype)
        if name == "w_o":
            big[:d, rows] = t
        elif name == "b_o":
            big[:d] = t
        elif name[0] == "w":
            big[rows, :d] = t * (q_factor if name == "w_q" else 1)
        else:
            big[rows] = t * (q_factor if name == "b_q" else 1)
        found.append(big)
    return tuple(found)


# -- the exercise -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LayerForm(Form):
    """An input form of the layer: x [B, T, d] of a dtype, T within the context length or past it (`long`)."""

    long: bool = False

    def words(self) -> str:
        dtype = str(self.dtype).removeprefix("torch.")
        return f"T = {LONG} > context length {CONTEXT}" if self.long else f"[B, T, d] {dtype}"


class Pairs:
    """A convention's free-form value, "name=role, name=role": `in` says whether a value reads so (a rubric's
    [conventions] are checked with `in` against the exercise's options)."""

    def __init__(self, roles: tuple[str, ...]):
        self.roles = roles

    def read(self, value: str) -> dict[str, str]:
        pairs = [p.strip() for p in value.split(",") if p.strip()]
        found = {k.strip(): v.strip() for k, v in (p.split("=", 1) for p in pairs if "=" in p)}
        if len(found) != len(pairs) or not set(found.values()) <= set(self.roles):
            raise ValueError(value)
        return found

    def __contains__(self, value) -> bool:
        try:
            self.read(str(value))
        except ValueError:
            return False
        return True

    def __iter__(self):
        return iter([f"\"name={r}, ...\"" for r in self.roles[:1]] + [f"roles: {', '.join(self.roles)}"])


PARAMS = Pairs(("width", "heads", "head_size", "context", "dropout", "bias", "causal", "config", "vocab"))


WEIGHTS = Pairs((*ROLES, "w_qkv", "b_qkv"))
