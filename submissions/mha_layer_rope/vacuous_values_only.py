# VACUOUS: each position returns its own value through W_O, ignoring W_Q, W_K, RoPE and the positions.
def run_multihead_self_attention_with_rope(d_model, num_heads, max_seq_len, theta, q_proj_weight, k_proj_weight,
                                           v_proj_weight, o_proj_weight, in_features, token_positions=None):
    return in_features @ v_proj_weight.T @ o_proj_weight.T
