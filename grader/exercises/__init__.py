"""The exercises, registered here and nowhere else: each module builds one `Exercise` (base.py) that owns its
function's names and call, its reference, inputs, shapes, own checks, planted bugs and forbidden region."""

from __future__ import annotations

from grader.exercises import (
    chapter5,
    grouped_query,
    kv_cache,
    masked_mha_module,
    masked_self_attention,
    mha_layer,
    mha_layer_rope,
    mha_module,
    prefix_lm,
    sdpa_mask,
    sliding_window,
)
from grader.exercises.base import Exercise

EXERCISES: dict[str, Exercise] = {
    e.name: e for e in (chapter5.EXERCISE, masked_self_attention.EXERCISE, sliding_window.EXERCISE, prefix_lm.EXERCISE,
                        grouped_query.EXERCISE, kv_cache.EXERCISE, sdpa_mask.EXERCISE,
                        mha_layer.EXERCISE, mha_layer_rope.EXERCISE, mha_module.EXERCISE,
                        masked_mha_module.EXERCISE)
}
