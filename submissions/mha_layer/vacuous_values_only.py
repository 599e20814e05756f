# VACUOUS: each position returns its own value through W_O (x @ W_V.T @ W_O.T), ignoring W_Q and W_K: attention with
# identity weights, which no query or key changes.
def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    return in_features @ v_proj_weight.T @ o_proj_weight.T
