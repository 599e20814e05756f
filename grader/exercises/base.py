"""What an exercise is: everything about one graded function that the rest of the grader asks for.

An exercise module builds one `Exercise` and registers it in `grader.exercises` (the one place). The loader, the
worker, the shared checks, diagnosis, the heatmap and replay take from it the names, the call, the result's
parts, the reference, the inputs, the expected shapes and the forbidden region; nothing else knows an exercise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from grader.checks import strategies as S
from grader.checks.format import future, shape_of
from grader.checks.reach import Form
from grader.checks.shared import SHARED

OUT = {"labels": ["out"], "what": "output", "names": ["output", "out", "hidden_states", "context"]}
WEIGHTS = {"labels": ["weights"], "what": "weights", "names": ["weights", "attn", "attention_weights", "attn_weights"]}
# weights a layer may return beside its output, or not (issue 32: "output [..., T, d_model], weights optional"): the
# worker accepts a result with them or without them, and sends them back only when a check asks (Ctx.call_weights)
OPTIONAL_WEIGHTS = {**WEIGHTS, "optional": True}


@dataclass(frozen=True)
class Variants:
    """The reference with known bugs planted, for diagnosis: `plant(*args, bugs=frozenset(names), **kw)` gives
    (out, weights); `mistakes` explains each name to a student; mistakes in one of `groups` exclude each other; an
    `alone` mistake replaces the whole computation; `probes` are fixed inputs (args, kw) on which they differ."""

    mistakes: dict[str, str]
    groups: list[tuple[str, ...]]
    alone: tuple[str, ...]
    plant: Callable
    probes: Callable[[], list[tuple[tuple, dict]]]


@dataclass(frozen=True)
class Exercise:
    name: str
    entry_points: tuple[str, ...]
    reference: Callable[[], Callable]  # imported lazily; gives a tuple of the result's parts: only the grader loads it
    checks: dict = field(default_factory=dict)  # the exercise's own checks, beside the shared ones
    inputs: tuple[str, ...] = ("q", "k", "v")  # the function's positional inputs, as messages name them; an option
    # of one of these names (window=) reaches the function in that position (sandbox.worker.call)
    results: tuple[dict, ...] = (OUT, WEIGHTS)  # the result's parts (sandbox.worker.returns.adapt reads them)
    lead: tuple[int, int] = (1, 6)  # how many dims before [T, H] the function must accept (min, max)
    heads: tuple[int, int] = (1, 2)  # sizes of a drawn heads dim (a multi-head exercise needs 2+ to show head mixing)
    variants: Variants | None = None  # planted bugs for diagnosis; None: no diagnosis
    forbidden_caption: str = "the future (j > i)"  # what the heatmap hatches, in words
    value_size: bool = False  # v's last dim may differ from q's and k's (Dv != Dk): drawn and measured
    options: dict = field(default_factory=dict)  # conventions a rubric may set ([conventions]): name -> the values
    build: dict | None = None  # a layer handed in as an nn.Module class: the worker builds it (sandbox.worker.modules)
    weights_due: bool = False  # OPTIONAL_WEIGHTS the contract asks for all the same: their absence costs the weights
    # checks' points (their first check's, the others depending on it), never the output's

    def configured(self, conventions: dict) -> Exercise:
        """This exercise under a rubric's conventions (a mask convention, say): the fields of those names replaced."""
        return replace(self, **conventions) if conventions else self

    def call_reference(self, *args, **kw) -> tuple:
        """The reference's result parts for a call as the submission gets it (an exercise whose inputs need reading
        first, a mask in some convention, says so here)."""
        return tuple(self.reference()(*args, **kw))

    def expect(self, q, k, v, **kw) -> list[tuple[int, ...]]:
        """Shapes of (out, weights) for these inputs: out like q with v's last dim, weights [..., T_q, T_k]."""
        shapes = [tuple(q.shape[:-1]) + (v.shape[-1],), tuple(q.shape[:-1]) + (k.shape[-2],)]
        return shapes[: len(self.labels())]  # out alone for a function that returns its output only

    def weight_shapes(self, *args, **kw) -> list[tuple[int, ...]]:
        """The shapes OPTIONAL_WEIGHTS may have for these inputs, asked for beside `expect`'s (Ctx.call_weights)."""
        q, k = args[0], args[1]
        return [tuple(q.shape[:-1]) + (k.shape[-2],)]

    def fixed_options(self, *args) -> dict:
        """Keyword options every call of the shared checks passes (a window size, say): none by default."""
        return {}

    def open_options(self) -> dict:
        """Keyword options under which every key is visible, beside the fixed ones: what the content gate also tries
        before it says the weights ignore the content (none: the fixed options already show it)."""
        return {}

    def device_inputs(self, q: torch.Tensor) -> tuple[tuple, dict]:
        """The device check's positional inputs and keyword options, made from a random q: k and v of q's shape."""
        return (q, q.flip(-2), q * 0.5), {}

    def device_cases(self, q: torch.Tensor) -> list[tuple[tuple, dict]]:
        """Every path the device check runs (a KV cache's prefill and cached step): `device_inputs` alone here."""
        return [self.device_inputs(q)]

    def forbidden(self, q, k, v, causal: bool = True, **kw) -> torch.Tensor:
        """Where the weights must be exactly 0: [T, T] or broadcastable to the weights."""
        t = q.shape[-2]
        return future(t) if causal else torch.zeros(t, t, dtype=torch.bool)

    def why_forbidden(self, i: int, j: int) -> str:
        return f"key {j} is in the future of query {i}"

    def bound(self, args: tuple, kw: dict) -> tuple[tuple, dict]:
        """A call's arguments in the student's signature, from the checks' order (the same, unless an exercise's
        signature puts its options among the tensors: CS336's RoPE layer)."""
        return args, kw

    def said(self, args: tuple, kw: dict) -> str:
        """The inputs of a call in words, for a failure's message: 'q, k, v of shape (2, 3, 4) float32 (T=3, H=4)'."""
        return shape_of(*[a for a in args[:3] if isinstance(a, torch.Tensor)], **kw)

    @property
    def weighs(self) -> bool:
        """Whether the function returns its weights; if not (out alone, or weights optional), the checks read them
        from the output."""
        return len(self.results) > 1 and self.results[1]["labels"] == ["weights"] and not self.results[1].get("optional")

    @property
    def weights_optional(self) -> bool:
        """Whether weights may come back beside the output (OPTIONAL_WEIGHTS): a check asks for them itself."""
        return any(part.get("optional") and part["labels"] == ["weights"] for part in self.results)

    def labels(self) -> list[str]:
        """The result's tensors in order (a KV cache's two included), as messages name them: those every call
        asks for, so not an optional part's."""
        return [label for part in self.results if not part.get("optional") for label in part["labels"]]

    # -- reach: the input forms a submission is measured on (checks.reach) ----------------------------------
    def forms(self) -> list[Form]:
        """The contract first (the fewest leading dims, float32), then 3-D and 4-D layouts within `lead`, float32
        and float64, and a value size of its own where the exercise has one."""
        dims = range(self.lead[0], min(self.lead[1], 2) + 1)
        sizes = (False, True) if self.value_size else (False,)
        every = [Form(d, t, dv) for d in dims for t in (torch.float32, torch.float64) for dv in sizes]
        return sorted(every, key=lambda f: (f.dtype != torch.float32 or f.dv, f.dims != self.lead[0]))

    def example(self, form: Form) -> tuple[tuple, dict]:
        """Fixed inputs of `form` (B=2, heads=3, T=5, Dk=4, Dv=6: every size differs, so a size taken from the
        wrong dim shows), made by `device_inputs`, so that an exercise's extra inputs come with them."""
        g = torch.Generator().manual_seed(12)
        shape = (2,) + (3,) * (form.dims - 1) + (5, 4)
        args, kw = self.device_inputs(torch.randn(shape, generator=g).to(form.dtype))
        if form.dv:
            v = args[2]
            args = (*args[:2], torch.cat([v, 0.5 - v[..., :2]], -1), *args[3:])
        return args, kw

    # -- inputs --------------------------------------------------------------------------------------------
    def leads(self, lo: int, hi: int) -> tuple[int, int]:
        """A check's range of leading dims, narrowed to the ones this exercise takes (unchanged when it fits)."""
        lo = min(max(lo, self.lead[0]), self.lead[1])
        return lo, max(min(hi, self.lead[1]), lo)

    def fit(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A fixed input shape with size-1 dims after the batch dim until it has as many leading dims as required."""
        missing = max(0, self.lead[0] - (len(shape) - 2))
        return shape[:1] + (1,) * missing + shape[1:]

    def qkv(self, lead=(1, 1), **kw):
        """S.qkv with the check's range of leading dims narrowed to the exercise's, and its heads sizes."""
        return S.qkv(lead=self.leads(*lead), **{"heads": self.heads, **kw})

    def negative_scores(self, lead: int | None = None, **kw):
        return S.negative_scores(lead=lead or self.lead[0], **kw)

    @property
    def catalogue(self) -> dict:
        """Every check a rubric of this exercise may name: the shared ones and its own."""
        return {**SHARED, **self.checks}
