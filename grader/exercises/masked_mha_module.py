"""The decoder's masked self-attention layer handed in as an `nn.Module` class (the course text's Level 2):
`forward(hidden_states, padding_mask=None)` with hidden_states [B, T, D] and the batch's padding mask [B, T] (1 = real
token), returning hidden_states [B, T, D] and attention_weights [B, H, T, T] (a dataclass, NamedTuple, mapping or
2-tuple), the causal mask and the padding mask combined as [1, 1, T, T] & [B, 1, 1, T].

The class is built and called as mha_module builds and calls one (its constructor, the grader's weights set into its
projections, eval()), and every mha_module check runs as it is, without a padding mask; the weights are due, so a
layer that returns its output alone loses `weights_shape` (and the weights' checks that depend on it). The padding
mask reaches forward by its usual names (padding_mask, attention_mask, key_padding_mask, mask, ...) or the rubric's
`padding_name`, in the rubric's `padding` convention: "real" (int64 1 = real token, 0 = pad: the course's LongTensor;
the default), "pad" (bool True = pad: nn.MultiheadAttention's key_padding_mask) or "additive" (0 / -inf in x's dtype).
Three checks draw padding masks (left, right, none, all padding, any pattern), as masked_self_attention's do:
exact expectations apply to real tokens, and a pad query may compute anything finite, its weights zero where it sees
no key.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch
from hypothesis import strategies as st

from grader.checks import strategies as S
from grader.checks.core import Ctx, Failed, check
from grader.checks.format import at, fmt, future, idx, mismatch
from grader.exercises import mha_module as module
from grader.exercises.module_inputs import PARAMS, WEIGHTS, drawing, mapped, multihead, out_of, said, weights

CHECKS: dict = dict(module.CHECKS)  # mha_module's checks, the weights' included, then the padding's
own = partial(check, CHECKS)

PADDING = ("real", "pad", "additive")  # the [conventions] padding values: how the mask reaches forward


class Name:
    """A convention's free-form value: a parameter's name, or "" (the usual names are looked for)."""

    def __contains__(self, value) -> bool:
        return isinstance(value, str) and (value == "" or value.isidentifier())

    def __iter__(self):
        return iter(["\"\" (the usual names)", "a parameter name of forward"])


def reference():
    from grader.reference.masked_mha_module import masked_multihead_attention

    return masked_multihead_attention


# -- the padding masks' inputs and words ---------------------------------------------------------------------------
@st.composite
def padded(draw, inputs, real: bool):
    """((args, heads), padding_mask [B, T]): a layer's drawn inputs and a padding mask for them (S.padding_masks)."""
    args, heads = draw(inputs)
    return (args, heads), draw(S.padding_masks(args[0].shape[0], args[0].shape[1], real))


def visible(mask: torch.Tensor) -> torch.Tensor:
    """[B, 1, T, T]: query i sees key j (j <= i and key j is a real token)."""
    t = mask.shape[-1]
    return torch.ones(t, t, dtype=torch.bool).tril() & mask.bool()[:, None, None, :]


def real_rows(mask: torch.Tensor) -> torch.Tensor:
    """[B, 1, T, 1]: the query is a real token."""
    return mask.bool()[:, None, :, None]


def four(w: torch.Tensor) -> torch.Tensor:
    """The weights as [B, H, T, T] ([B, T, T] of one head: H = 1)."""
    return w if w.dim() == 4 else w[:, None]


def place(w: torch.Tensor, ix: tuple[int, ...]) -> tuple[int, ...]:
    """An index into four(w) as an index into w."""
    return ix if w.dim() == 4 else ix[:1] + ix[2:]


def every_kind(ctx: Ctx):
    """A fixed batch with a left-padded, a right-padded, an all-padding and an unpadded sequence: run after the
    hypothesis search, so each kind is met even when the search drew none of it."""
    g = torch.Generator().manual_seed(6)
    heads = 2 if multihead(ctx) else 1
    args = (torch.randn(4, 4, 4, generator=g), *weights(g, 4, mapped(ctx), torch.float32))
    return (args, heads), torch.tensor([[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]])


def prove_padded(ctx: Ctx, prop, real: bool) -> None:
    """`prop` on drawn inputs with a padding mask that has a pad (and, when `real`, a real token), then on
    every_kind()."""
    ctx.prove(padded(drawing(ctx, mapped(ctx), t=(2, 5), b=(1, 3)), real), prop,
              max_examples=min(ctx.max_examples, 10))
    ctx.focus()
    prop(every_kind(ctx))


def usable_weights(ctx: Ctx, args, heads: int, mask: torch.Tensor) -> torch.Tensor | None:
    """The weights for these inputs, or None where none come back, or of a wrong shape: weights_shape's to charge,
    so a check that reads the output first is not charged twice."""
    try:
        return ctx.call_weights(*args, heads=heads, padding_mask=mask)[1]
    except Failed:
        return None


def said_value(x: torch.Tensor) -> str:
    return "NaN" if x.isnan() else fmt(float(x))


def words(args, heads: int, mask: torch.Tensor) -> str:
    return f"{said(args, heads)} and padding_mask {mask.tolist()}"


# -- the checks ---------------------------------------------------------------------------------------------------
@own(
    "padding_keys_zero",
    "with a padding mask, the weights of every real query are exactly 0 on padded keys and on future keys: the causal "
    "mask and the padding mask combined ([1, 1, T, T] & [B, 1, 1, T])",
    "the padding mask ignored, applied to the queries ([B, 1, T, 1]) instead of the keys, broadcast on the wrong axis "
    "([B, 1, T] lines the batch up with the heads), replacing the causal mask instead of joining it, or the weights "
    "returned before the mask",
    "allowed = causal[None, None] & padding_mask[:, None, None, :].bool(); scores.masked_fill(~allowed, -inf) before "
    "the softmax, and return the weights the output is computed from.",
)
def padding_keys_zero(ctx: Ctx) -> None:
    def prop(x):
        (args, heads), mask = x
        _, w = ctx.call_weights(*args, heads=heads, padding_mask=mask)
        if w is None:
            return  # weights_shape charges their absence
        leak = real_rows(mask) & ~visible(mask) & (four(w) != 0)
        if leak.any():
            b, _, i, j = ix = idx(four(w), leak)
            why = f"key {j} of sequence {b} is padding" if mask[b, j] == 0 else f"key {j} is in the future of query {i}"
            raise Failed(f"{at('attention_weights', place(w, ix))} = {fmt(float(four(w)[ix]))} for "
                         f"{words(args, heads, mask)}, expected 0: {why}, and query {i} is a real token")

    prove_padded(ctx, prop, real=True)


@own(
    "padded_rows_finite",
    "with left padding, right padding or an all-padding sequence, hidden_states and attention_weights are finite; a "
    "query that sees no real key (a pad before the first real token) gets zero weights",
    "softmax over a row whose keys are all masked (a pad at the start of a left-padded sequence) is 0/0 = NaN, which "
    "spreads into the loss (nn.MultiheadAttention does this); a finite fill (-1e9, finfo.min) instead spreads that "
    "row's weight over the masked keys, the future's included",
    "After the softmax, zero what the mask hides: weights = torch.where(allowed, weights, 0.0) (or "
    "weights.nan_to_num(0.0)), then y = weights @ v.",
)
def padded_rows_finite(ctx: Ctx) -> None:
    def prop(x):
        (args, heads), mask = x
        out = out_of(ctx, args, heads, padding_mask=mask)
        seen = visible(mask).any(-1)  # [B, 1, T]: the query sees at least one key
        if not torch.isfinite(out).all():
            ix = idx(out, ~torch.isfinite(out))
            why = "sees no real key" if not seen[ix[0], 0, ix[1]] else "sees at least one real key"
            raise Failed(f"{at('hidden_states', ix)} is {said_value(out[ix])} for {words(args, heads, mask)} (query "
                         f"{ix[1]} {why})")
        w = usable_weights(ctx, args, heads, mask)
        if w is not None:
            if not torch.isfinite(w).all():
                ix = idx(w, ~torch.isfinite(w))
                raise Failed(f"{at('attention_weights', ix)} is {said_value(w[ix])} for {words(args, heads, mask)} "
                             f"(query {ix[-2]} {'sees no real key' if not seen[ix[0], 0, ix[-2]] else 'sees a real key'})")
            bad = ~seen[..., None] & (four(w) != 0)
            if bad.any():
                b, _, i, j = ix = idx(four(w), bad)
                raise Failed(f"{at('attention_weights', place(w, ix))} = {fmt(float(four(w)[ix]))} for "
                             f"{words(args, heads, mask)}, expected 0: query {i} of sequence {b} sees no real key "
                             "(none at or before it), so its weights are all 0")

    prove_padded(ctx, prop, real=False)


@own(
    "padding_invariance",
    "changing the padded tokens never changes a real token's output, nor does changing a later token when a padding "
    "mask is given",
    "padded tokens leaking into real ones (padding ignored, applied to the queries, or filled with a value that "
    "keeps weight), or a padding mask that replaces the causal mask",
    "A pad must be invisible: mask the padded keys with -inf before the softmax, together with the causal mask.",
)
def padding_invariance(ctx: Ctx) -> None:
    def prop(x):
        (args, heads), mask = x
        out = out_of(ctx, args, heads, padding_mask=mask)
        x0, t = args[0], args[0].shape[1]
        real = mask.bool()[:, :, None]  # [B, T, 1]: rows that must keep their output
        pads = (mask == 0)[:, :, None].expand_as(x0)
        changes = {"the padded tokens": (torch.where(pads, -2 * x0 + 1, x0), real)}
        if t > 1:  # the last token, seen by no earlier query
            later = x0.clone()
            later[:, -1] = -2 * later[:, -1] + 1
            changes[f"token {t - 1}, the last,"] = (later, real & (torch.arange(t) < t - 1)[None, :, None])
        for what, (x2, rows) in changes.items():
            out2 = out_of(ctx, (x2, *args[1:]), heads, padding_mask=mask)
            bad = mismatch("hidden_states", torch.where(rows, out2, 0), torch.where(rows, out, 0), *ctx.tol(out.dtype))
            if bad:
                raise Failed(f"for {words(args, heads, mask)}, changing {what} in every sequence changed {bad.where}, "
                             f"a real token's output ({bad.said('before it was')})")

    prove_padded(ctx, prop, real=True)


# -- the exercise -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MaskedMhaModule(module.MhaModule):
    padding: str = "real"  # the [conventions] padding: how the mask reaches forward

    def configured(self, conventions: dict) -> MaskedMhaModule:
        """mha_module's conventions, the padding mask's (`padding`) and its parameter's name (`padding_name`)."""
        build = {"params": PARAMS.read(conventions.get("params", "")),
                 "weights": WEIGHTS.read(conventions.get("weights", "")), "padding": conventions.get("padding_name", "")}
        return replace(self, padding=conventions.get("padding", "real"), build=build)

    def encode(self, mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """A [B, T] mask of 1 (real token) / 0 (pad) as the rubric's convention writes it."""
        if self.padding == "pad":
            return mask == 0
        if self.padding == "additive":
            return torch.zeros(mask.shape, dtype=dtype).masked_fill(mask == 0, float("-inf"))
        return mask.to(torch.int64)

    def pads(self, mask: torch.Tensor) -> torch.Tensor:
        """[B, T] bool, True = pad, from a mask in the rubric's convention (as forward got it)."""
        if self.padding == "pad":
            return mask.bool()
        return mask != 0 if self.padding == "additive" else mask == 0

    def forbidden(self, x, *rest, padding_mask=None, **kw) -> torch.Tensor:  # type: ignore[override]
        """The future and, with a padding mask (as forward got it), the padded keys: [B, 1, T, T]."""
        hidden = future(x.shape[-2])
        return hidden if padding_mask is None else hidden | self.pads(padding_mask)[:, None, None, :]

    def why_forbidden(self, i: int, j: int) -> str:
        return f"key {j} is in the future of query {i}, or a pad"

    def bound(self, args: tuple, kw: dict) -> tuple[tuple, dict]:
        """The checks' padding mask (1 = real token) in the rubric's convention, as forward gets it."""
        mask = kw.get("padding_mask")
        if isinstance(mask, torch.Tensor) and args and isinstance(args[0], torch.Tensor):
            kw = {**kw, "padding_mask": self.encode(mask, args[0].dtype)}
        return args, kw

    def weight_shapes(self, *args, **kw) -> list[tuple[int, ...]]:
        """[B, H, T, T], the contract's; [B, T, T] for a layer of one head only (not the heads' mean)."""
        b, t, _ = args[0].shape
        heads = int(kw.get("heads", 1))
        return [(b, heads, t, t)] + ([(b, t, t)] if heads == 1 else [])

    def device_options(self, x: torch.Tensor) -> dict:
        """A left-padded sequence beside an unpadded one: the padding's code meets the device too."""
        mask = torch.ones(x.shape[:2], dtype=torch.int64)
        mask[0, : x.shape[1] // 2] = 0
        return {"padding_mask": mask}

    def said(self, args: tuple, kw: dict) -> str:
        mask = kw.get("padding_mask")
        base = super().said(args, kw)
        return f"{base} and padding_mask {mask.tolist()}" if isinstance(mask, torch.Tensor) and mask.dim() == 2 else base


EXERCISE = MaskedMhaModule(
    "masked_mha_module",
    ("MaskedSelfAttention", "MaskedMultiHeadAttention", "MaskedMultiHeadSelfAttention", "MaskedAttention",
     "MultiHeadSelfAttention", "MultiHeadAttention", "CausalSelfAttention", "SelfAttention", "Attention", "*"),
    reference,
    checks=CHECKS,
    inputs=module.EXERCISE.inputs,
    results=module.EXERCISE.results,
    lead=(1, 1),
    weights_due=True,
    options={**module.EXERCISE.options, "padding": PADDING, "padding_name": Name()},
    forbidden_caption="the future (j > i) and padded keys",
).configured({})
