"""The combine step of split-KV decoding, shared by flash_decode.py and mla_decode.py.

A decode kernel that splits each sequence's cache into `num_split` runs writes, per split,
its normalized partial output partial_out[batch, heads, split, :] and the base-2
log-sum-exp of its scaled scores partial_lse[batch, heads, split] (-inf for a split that saw
no key, whose partial output is then 0). The combined row is the splits' partial outputs
weighted by exp2(lse - lse_max), divided by the weights' sum: softmax over the whole cache.
"""

import tilec.language as T


@T.macro
def combine_splits(partial_lse, partial_out, Output, bid, head):
    """Output[bid, head, :] from the splits of one (sequence, head), in float32."""
    num_split, width = partial_out.shape[2], partial_out.shape[3]
    lse = T.alloc_fragment([num_split], "float32")
    lse_max = T.alloc_fragment([1], "float32")
    weight_sum = T.alloc_fragment([1], "float32")
    out = T.alloc_fragment([width], "float32")
    for s in T.Parallel(num_split):
        lse[s] = partial_lse[bid, head, s]
    T.reduce_max(lse, lse_max, dim=0)
    T.clear(weight_sum)
    for s in T.serial(num_split):
        weight_sum[0] += T.exp2(lse[s] - lse_max[0])
    T.clear(out)
    for s in T.serial(num_split):
        for j in T.Parallel(width):
            out[j] += partial_out[bid, head, s, j] * T.exp2(lse[s] - lse_max[0])
    for j in T.Parallel(width):
        Output[bid, head, j] = out[j] / weight_sum[0]
