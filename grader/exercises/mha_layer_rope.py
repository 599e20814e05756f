"""Causal multi-head self-attention with RoPE and given weights, as Stanford CS336 assignment 1's adapter asks for
it: `run_multihead_self_attention_with_rope(d_model, num_heads, max_seq_len, theta, q_proj_weight, k_proj_weight,
v_proj_weight, o_proj_weight, in_features, token_positions=None)`, the output alone (issue 32, part 1).

mha_layer's checks hold as they are (the checks call in mha_layer's order; `bound` puts max_seq_len and theta where
CS336's signature has them); sqrt_scaling runs with every position 0, where RoPE turns q and k alike and leaves the
scores as they are, and pads a head to 4 times its size at theta**4, which keeps each old pair's frequency. Beside
them, what the positions must do: only their differences count (RoPE on q and k alike, not v), the positions given
are the ones used (gapped, permuted, one row per sequence), and the pairs and frequencies are CS336's (adjacent
features, theta^(-2k/d_head)).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.errors import UnsatisfiedAssumption

from grader.checks.core import Ctx, Failed, check
from grader.checks.known_answers import GradedLater
from grader.exercises import mha_layer as layer
from grader.exercises.layer_inputs import X, drawing, made, out_of, said

CHECKS: dict = dict(layer.CHECKS)
own = partial(check, CHECKS)

INPUTS = ("d_model", "num_heads", "max_seq_len", "theta", "q_proj_weight", "k_proj_weight", "v_proj_weight",
          "o_proj_weight", "in_features", "token_positions")
MAX_SEQ_LEN, THETA = 64, 10000.0  # every call's; drawn positions stay below MAX_SEQ_LEN


def reference():
    from grader.reference.mha_layer_rope import rope_attention

    return rope_attention


@st.composite
def _positioned(draw, inputs, shift=False, per_sequence=False):
    """(args, positions[, c]): positions [T] (or [..., T], one row per sequence) drawn apart and in any order; with
    `shift`, a constant c that keeps them below MAX_SEQ_LEN."""
    args = draw(inputs)
    x = args[X]
    t = x.shape[-2]
    rows = x.shape[:-2] if per_sequence else ()
    n = int(np.prod(rows)) if rows else 1
    found = [draw(st.permutations(draw(st.lists(st.integers(0, MAX_SEQ_LEN // 2 - 1), min_size=t, max_size=t,
                                                 unique=True)))) for _ in range(n)]
    positions = torch.tensor(found, dtype=torch.long).reshape(*rows, t)
    if not shift:
        return args, positions
    return args, positions, draw(st.integers(1, MAX_SEQ_LEN // 2))


def positions_words(p: torch.Tensor) -> str:
    return f"token_positions {p.tolist() if p.numel() <= 12 else tuple(p.shape)}"


@own(
    "relative_positions",
    "only the positions' differences count: adding a constant to every position leaves out unchanged",
    "RoPE on q only (or on v too), so that the scores see absolute positions, or positions added to the features",
    "Rotate q and k with the same positions and leave v as it is: then q_i . k_j depends on i - j alone.",
)
def relative_positions(ctx: Ctx) -> None:
    def prop(x):
        args, positions, c = x
        out = out_of(ctx, args, token_positions=positions)
        bad = ctx.accurate("out", out_of(ctx, args, token_positions=positions + c), out, args[X].dtype)
        if bad:
            raise Failed(f"for {said(args)} and {positions_words(positions)}, adding {c} to every position changed "
                         f"{bad.said('before it was')}: the output sees absolute positions (RoPE on q alone, or on "
                         "v as well)")

    ctx.prove(_positioned(drawing(ctx, t=(2, 5), dtypes=(np.float64,)), shift=True), prop,
              max_examples=min(ctx.max_examples, 8))


@own(
    "positions_used",
    "the token_positions given are the ones used: gapped and permuted positions change out as they change the "
    "reference's, and [B, T] positions (one row per sequence) give each sequence what its row alone gives",
    "token_positions ignored (arange(T) always), or [B, T] positions broadcast against the heads instead of the batch",
    "Rotate by token_positions when given (arange(T) only when None), with a head axis added: "
    "positions.unsqueeze(-2) against [..., heads, T, d_head].",
)
def positions_used(ctx: Ctx) -> None:
    def prop(x):
        args, positions = x
        out = out_of(ctx, args, token_positions=positions)
        for b in range(positions.shape[0]):  # each sequence alone, with its own row of positions
            alone = args[:X] + (args[X][b : b + 1],)
            row = out_of(ctx, alone, token_positions=positions[b])
            bad = ctx.accurate("out", row, out[b : b + 1], args[X].dtype)
            if bad:
                raise Failed(f"for {said(args)} and {positions_words(positions)}, sequence {b} alone with its "
                             f"positions {positions[b].tolist()} gives {bad.in_element(b).said('with the batch:')}: "
                             "[B, T] positions are read against another axis than the batch (the heads?)")
        # positions backwards are no shift of arange(T): with any weights but the rarest, RoPE gives another output
        alone = args[:X] + (args[X][:1],)
        backwards = torch.arange(args[X].shape[-2]).flip(0)
        if torch.equal(out_of(ctx, alone, token_positions=backwards), out_of(ctx, alone)):
            raise Failed(f"for {said(alone)}, token_positions {backwards.tolist()} give exactly the output of "
                         "arange(T) (None): the positions given are ignored")

    ctx.prove(_positioned(drawing(ctx, lead=(1, 1), b=(2, 3), t=(2, 5), heads=(2, 3)), per_sequence=True), prop,
              max_examples=min(ctx.max_examples, 8))


MISTAKES: dict[str, dict] = {"rotate-half pairs (x[k] with x[k + d_head/2]) instead of adjacent ones (x[2k], x[2k+1])": {"pairs": "half"},
            "frequencies theta^(-k/d_head) instead of theta^(-2k/d_head)": {"exponent": 1.0}}


@own(
    "rope_convention",
    "q and k are turned as CS336 says: adjacent pairs (x[2k], x[2k+1]) of each head by position / theta^(2k/d_head)",
    "rotate-half pairing (GPT-NeoX, HF Llama), frequencies over d_model rather than each head, or a wrong exponent",
    "Rotate x[..., 0::2] and x[..., 1::2] of each head by angle = position * theta ** (-2k / d_head), after the "
    "head split.",
)
def rope_convention(ctx: Ctx) -> None:
    def prop(args):
        out = out_of(ctx, args)
        bad = ctx.accurate("out", out, ctx.reference(*args)[0], args[X].dtype)
        if bad:
            raise Failed(f"for {said(args)} (positions arange(T)): {bad.said('the reference gives')}"
                         f"{_named(ctx, args, out)}")

    ctx.prove(drawing(ctx, t=(2, 5), size=(2, 3), dtypes=(np.float64,)), prop, max_examples=min(ctx.max_examples, 8))


def _named(ctx: Ctx, args, out) -> str:
    try:
        for words, how in MISTAKES.items():
            if not ctx.accurate("out", out, ctx.reference(*args, **how)[0], args[X].dtype):
                return f": it is what {words} give"
    except (GradedLater, UnsatisfiedAssumption):  # a student build's book knows no mistake's answer
        pass
    return ""


@dataclass(frozen=True)
class MhaLayerRope(layer.MhaLayer):
    def fixed_options(self, *args) -> dict:
        return {"max_seq_len": MAX_SEQ_LEN, "theta": THETA}

    def bound(self, args: tuple, kw: dict) -> tuple[tuple, dict]:
        """(d_model, num_heads, max_seq_len, theta, weights..., in_features), token_positions as a keyword."""
        kw = dict(kw)
        sizes = (kw.pop("max_seq_len", MAX_SEQ_LEN), kw.pop("theta", THETA))
        return (*args[:2], *sizes, *args[2:]), kw

    def unturned(self, x: torch.Tensor, wider: int = 1) -> dict:
        """Every position 0; heads `wider` times their size turn at theta**wider, so that each old pair keeps its
        frequency (for a layer that turns by arange(T) whatever it is given)."""
        return {"token_positions": torch.zeros(x.shape[-2], dtype=torch.long), "theta": THETA**wider}

    def example(self, form) -> tuple[tuple, dict]:
        """B=2, S=3, T=5, 2 heads of size 4 (RoPE turns pairs)."""
        batch = (2, 3)[: form.dims]
        return made(torch.Generator().manual_seed(12), batch, 5, 2, 4, form.dtype), {}


EXERCISE = MhaLayerRope(
    "mha_layer_rope",
    ("run_multihead_self_attention_with_rope", "multihead_self_attention_with_rope"),
    reference,
    checks=CHECKS,
    inputs=INPUTS,
    results=layer.EXERCISE.results,
    lead=(0, 2),
    heads=(1, 3),
    step=2,
)
