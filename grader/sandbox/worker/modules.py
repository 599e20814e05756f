"""A layer handed in as an `nn.Module` class, behind a function of the drawn input and weights: `Layer(cls)(x, w_q,
w_k, w_v, w_o, b_q, b_k, b_v, b_o, heads=, context=, dropout=, train=)` builds the class from its own constructor
(its parameters mapped by their usual names, a `config` object given every usual attribute, module globals such as
ng-video-lecture's `n_embd` set where the constructor takes no width), sets the weights into its projections by
name and shape (a fused [3d, d] in q, k, v thirds; separate q, k, v, o; one Linear per head; with or without bias)
through `torch.func.functional_call`, so gradients reach the grader's weights, and calls it in eval() mode.

A role the module has no place for (a bias it lacks, the output projection of a layer without one) is ignored; a
role left None keeps the module's own parameter. `describe` says what was found: the grader's reference follows it.
Student code runs here only: the constructor and forward may raise or hang, as any call may.
"""

from __future__ import annotations

import copy
import inspect
import types

import torch

from grader.sandbox.worker.errors import BadOutput
from grader.sandbox.worker.layout import ROLES, layout

PROBE_D, PROBE_HEADS, PROBE_DROPOUT = 8, 2, 0.1  # the build describe() looks at

# constructor parameters (and config attributes) by their usual names
PARAMS = {
    "width": ("d_model", "d_in", "d_out", "n_embd", "n_embed", "embed_dim", "embedding_dim", "hidden_size", "hidden_dim",
              "dim", "d", "model_dim", "emb_dim", "d_embed", "n_embd_dim", "width", "in_features", "out_features"),
    "heads": ("num_heads", "n_head", "n_heads", "nhead", "nheads", "heads", "num_attention_heads", "h", "n_attn_heads"),
    "head_size": ("head_size", "head_dim", "d_head", "d_k", "dim_head", "hs", "head_dim_size"),
    "context": ("context_length", "block_size", "max_len", "max_seq_len", "max_seq_length", "seq_len", "n_ctx",
                "context_size", "max_position_embeddings", "n_positions", "max_length", "ctx_len", "max_context"),
    "dropout": ("dropout", "attn_pdrop", "resid_pdrop", "dropout_rate", "attn_dropout", "resid_dropout", "drop",
                "p_drop", "attention_dropout", "dropout_p", "pdrop", "p"),
    "bias": ("qkv_bias", "bias", "use_bias", "add_bias", "attn_bias", "proj_bias", "qkv_proj_bias"),
    "causal": ("causal", "is_causal", "masked", "autoregressive", "use_mask"),
    "config": ("config", "cfg", "args", "hparams", "conf", "configs", "params", "model_args", "opt"),
    "vocab": ("vocab_size", "n_vocab"),
}
ROLE_OF = {name: role for role, names in PARAMS.items() for name in names}
# forward's parameter for a padding mask [B, T] (masked_mha_module), by its usual names, before a rubric's own
PADDING_NAMES = ("padding_mask", "attention_mask", "key_padding_mask", "mask", "pad_mask", "src_key_padding_mask",
                 "attn_padding_mask")

class Unmapped(BadOutput):
    """The class cannot be built as the grader calls it: what was found, and how a rubric says more."""


class Reads:
    """Which of a config's attributes the class read (while built and while called), and whether as a mapping too."""

    def __init__(self):
        self.names: set[str] = set()
        self.by_key = False


class Config(types.SimpleNamespace):
    """A `config` with every usual attribute (nanoGPT's GPTConfig, minGPT's CfgNode, CS224N's GPTConfig), readable
    as attributes, as a mapping (config["n_embd"]) and with .get(); each attribute read is noted in its `Reads` (a
    copy's too), so that a replay can build the class with those alone."""

    __slots__ = ("_reads",)

    def _noted(self, by_key: bool = False) -> Reads:
        try:
            reads = object.__getattribute__(self, "_reads")
        except AttributeError:  # unpickled: it still works, unnoted
            reads = Reads()
        reads.by_key |= by_key
        return reads

    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        if not name.startswith("_") and name in super().__getattribute__("__dict__"):
            super().__getattribute__("_noted")().names.add(name)
        return value

    def __getitem__(self, name):
        self._noted(by_key=True)
        return getattr(self, name)

    def get(self, name, default=None):
        self._noted(by_key=True)
        return getattr(self, name, default)

    def __contains__(self, name) -> bool:
        self._noted(by_key=True)
        return hasattr(self, name)

    def __copy__(self):
        return noting(Config(**vars(self)), self._noted())

    def __deepcopy__(self, memo):
        return noting(Config(**copy.deepcopy(vars(self), memo)), self._noted())


def noting(config: Config, reads: Reads) -> Config:
    object.__setattr__(config, "_reads", reads)
    return config


def values(d: int, heads: int, context: int, dropout: float) -> dict:
    """Each role's value for a build of width d with `heads` heads."""
    return {"width": d, "heads": heads, "head_size": d // max(heads, 1), "context": context, "dropout": dropout,
            "bias": True, "causal": True, "vocab": 64}


class Layer:
    """The class behind the exercise's call; one built module per (width, heads, context, dtype, device, dropout)."""

    def __init__(self, cls, module: types.ModuleType, build: dict | None = None):
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
            raise Unmapped(f"{getattr(cls, '__name__', cls)!r} is not an nn.Module class")
        self.cls, self.module = cls, module
        build = build or {}
        self.aliases = {str(k): str(v) for k, v in (build.get("params") or {}).items()}  # a rubric's names
        self.names = {str(k): str(v) for k, v in (build.get("weights") or {}).items()}  # parameter name -> role
        self.padding = str(build.get("padding") or "")  # a rubric's name for forward's padding mask
        self.built: dict = {}
        self.said: dict = {}
        self.positional: list[str] = []  # the constructor's parameters given by position (positional-only ones)
        self.reads = Reads()  # the config's attributes the class read, in every build and call so far

    # -- building ---------------------------------------------------------------------------------------------
    def _role(self, name: str) -> str | None:
        return self.aliases.get(name) or ROLE_OF.get(name) or ROLE_OF.get(name.lower())

    def arguments(self, vals: dict) -> tuple[list, dict, dict]:
        """(positional, keyword, said) for the constructor (said in the signature's order, the positional ones
        first); Unmapped naming a required parameter of no usual name."""
        try:
            sig = inspect.signature(self.cls)
        except (TypeError, ValueError):
            return [], {}, {}
        args, kwargs, said, missing = [], {}, {}, []
        for name, p in sig.parameters.items():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            role = self._role(name)
            if role is None or role not in vals and role != "config":
                if p.default is p.empty:
                    missing.append(name)
                continue
            value = self.config(vals) if role == "config" else vals[role]
            said[name] = "config" if role == "config" else value
            if p.kind is p.POSITIONAL_ONLY:
                args.append(value)
            else:
                kwargs[name] = value
        if missing:
            known = ", ".join(f"{r} ({', '.join(n[:3])}...)" for r, n in PARAMS.items() if r not in ("vocab",))
            raise Unmapped(f"{self.cls.__name__}{sig}: the parameter(s) {', '.join(missing)} have no usual name, so the "
                           f"grader cannot build it (the names it knows: {known}); a rubric maps them: [conventions] "
                           f"params = \"{missing[0]}=width\" (roles: {', '.join(PARAMS)})")
        return args, kwargs, said

    def config(self, vals: dict) -> Config:
        attrs = {name: vals[role] for role, names in PARAMS.items() if role in vals for name in names}
        attrs.update({alias: vals[role] for alias, role in self.aliases.items() if role in vals})
        attrs.update(n_layer=1, embd_pdrop=vals["dropout"], model_type=None)
        return noting(Config(**attrs), self.reads)

    def globals_for(self, said: dict, vals: dict) -> dict:
        """Module globals a constructor that takes no width (or no context) reads instead (ng-video-lecture's
        n_embd, block_size, dropout): set to this build's values, and said so."""
        taken = {self._role(n) for n in said} | ({"width", "context", "dropout", "heads"} if "config" in
                                                   {self._role(n) for n in said} else set())
        found = {}
        for name, value in list(vars(self.module).items()):
            role = ROLE_OF.get(name)
            if role in ("width", "context", "dropout", "heads") and role not in taken and type(value) in (int, float):
                found[name] = vals[role]
        return found

    def make(self, d: int, heads: int, context: int, dropout: float) -> torch.nn.Module:
        vals = values(d, heads, context, dropout)
        args, kwargs, said = self.arguments(vals)
        fixed = self.globals_for(said, vals)
        vars(self.module).update(fixed)
        self.said = {**said, **{f"global {k}": v for k, v in fixed.items()}}
        self.positional = [name for name in said if name not in kwargs]
        module = self.cls(*args, **kwargs)
        if not isinstance(module, torch.nn.Module):
            raise Unmapped(f"{self.cls.__name__}(...) did not make an nn.Module")
        return module

    def get(self, d: int, heads: int, context: int, dropout: float, dtype, device) -> tuple[torch.nn.Module, tuple]:
        key = (d, heads, context, dropout, dtype, str(device))
        if key not in self.built:
            if len(self.built) > 24:
                self.built.clear()
            module = self.make(d, heads, context, dropout).to(device=device, dtype=dtype)
            self.built[key] = (module, layout(module, d, heads, self.names))
        return self.built[key]

    # -- calling ----------------------------------------------------------------------------------------------
    def __call__(self, x, w_q=None, w_k=None, w_v=None, w_o=None, b_q=None, b_k=None, b_v=None, b_o=None, *,
                 heads: int = 1, context: int = 8, dropout: float = 0.1, train: bool = False, padding_mask=None):
        if not isinstance(x, torch.Tensor):
            raise Unmapped("x is not a tensor")
        given = dict(zip(ROLES, (w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o)))
        module, (pieces, _, _) = self.get(int(x.shape[-1]), int(heads), int(context), float(dropout), x.dtype, x.device)
        module.train(bool(train))
        params = {}
        for name, parts in pieces.items():
            if all(given.get(role) is not None for role, _, _ in parts):
                params[name] = torch.cat([given[role][a:b] for role, a, b in parts], 0)
        extra = {} if padding_mask is None else {self.padding_name(module): padding_mask}
        return torch.func.functional_call(module, params, (x,), extra, strict=False)

    def padding_name(self, module: torch.nn.Module) -> str:
        """The name forward takes a padding mask by: the rubric's, else the first of the usual names it has."""
        try:
            params = inspect.signature(module.forward).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        if self.padding and (self.padding in params or any(p.kind is p.VAR_KEYWORD for p in params.values())):
            return self.padding
        found = [n for n in PADDING_NAMES if n in params]
        if not found:
            raise Unmapped(f"{type(module).__name__}.forward{_signature(module.forward)} takes no padding mask by a "
                           f"name the grader knows ({', '.join(PADDING_NAMES)})"
                           + (f", nor {self.padding!r}" if self.padding else "")
                           + "; a rubric names it: [conventions] padding_name = \"<parameter>\"")
        return found[0]

    def describe(self, context: int, d: int = PROBE_D, heads: int = PROBE_HEADS, dropout: float = PROBE_DROPOUT) -> dict:
        """What a build of width d with `heads` heads shows (the probe build by default): how it was built (`built`:
        the constructor's arguments in order, those given by position named in `positional`, the module globals set
        as "global NAME"; `config`: the attributes of a config argument the class has read so far, in any build or
        call, with this build's values, `by_key` when it read them as a mapping too), its parameters, which of them
        take which weights (`mapped` in words, `pieces` as [role, first row, last row + 1]), the roles present, and
        what could not be mapped (`problem`)."""
        found = {"class": self.cls.__name__, "signature": "", "built": {}, "parameters": [], "mapped": {},
                 "present": [], "unmapped": [], "problem": "", "heads": False, "positional": [], "config": {},
                 "by_key": False, "pieces": {}, "padding": ""}
        try:
            found["signature"] = f"{self.cls.__name__}{inspect.signature(self.cls)}"
        except (TypeError, ValueError):
            found["signature"] = self.cls.__name__
        try:
            module = self.make(d, heads, context, dropout)
        except Unmapped as e:
            found["problem"] = str(e)
            return found
        except Exception as e:  # noqa: BLE001 - the student's constructor: its failure is what the report says
            found["problem"] = f"building it as {self.cls.__name__}({_args(self.said)}) raised {type(e).__name__}: {str(e)[:300]}"
            return found
        found["built"] = {k: (v if isinstance(v, (int, float, bool, str)) else repr(v)[:40]) for k, v in self.said.items()}
        found["positional"] = list(self.positional)
        if "config" in self.said.values():
            attrs = vars(self.config(values(d, heads, context, dropout)))
            found["config"] = {n: attrs[n] for n in sorted(self.reads.names) if n in attrs}
            found["by_key"] = self.reads.by_key
        # whether the head count reaches the build: a layer that takes none has one head (Raschka's CausalAttention)
        found["heads"] = any(self._role(k.removeprefix("global ")) in ("heads", "head_size", "config") for k in self.said)
        try:  # the name forward takes a padding mask by, where it takes one (masked_mha_module)
            found["padding"] = self.padding_name(module)
        except Unmapped:
            pass
        found["parameters"] = [[n, list(p.shape)] for n, p in module.named_parameters()][:40]
        pieces, unmapped, problem = layout(module, d, heads, self.names)
        found["mapped"] = {n: " | ".join(r if (a, b) == (0, d) else f"{r}[{a}:{b}]" for r, a, b in parts)
                           for n, parts in pieces.items()}
        found["pieces"] = {n: [[r, a, b] for r, a, b in parts] for n, parts in pieces.items()}
        found["present"] = sorted({r for parts in pieces.values() for r, _, _ in parts}, key=ROLES.index)
        found["unmapped"] = unmapped
        found["problem"] = problem
        return found


def _signature(fn) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"


def _args(said: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in said.items() if not k.startswith("global "))


def find(module: types.ModuleType, entry: str):
    """The class to build: the entry point, or the one nn.Module subclass of the file whose forward takes x."""
    found = getattr(module, entry, None)
    if found is not None:
        return found
    own = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, torch.nn.Module)
           and v.__module__ == module.__name__ and "forward" in vars(v)]
    return own[0] if len(own) == 1 else None
