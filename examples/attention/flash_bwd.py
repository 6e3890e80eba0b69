"""FlashAttention backward as tile programs: dQ, dK, dV of O = softmax(Q K^T / sqrt(d)) V from
dO, given the forward's O and its base-2 log-sum-exp LSE (flash_fwd.py writes both).

Three kernels, layout [batch, seq, heads, dim] (bshd):
1. `flash_bwd_preprocess`: Delta[b, h, i] = sum_d O[i, d] * dO[i, d] (float32), the row term
   of softmax's derivative: dS = P * (dP - Delta).
2. `flash_bwd`: dK and dV. One block per `block_M` keys of one head holds K and V in shared
   memory and its dK, dV accumulators in registers, and walks the query tiles (`block_N`
   rows): it rebuilds P^T = exp2(K Q^T * scale - LSE) (keys as rows, so P^T and dS^T are the
   A operands of dV += P^T dO and dK += dS^T Q straight from registers) and dP^T = V dO^T.
3. `flash_bwd_dq`: dQ. One block per `block_M` queries walks the key tiles, rebuilds P and
   dP = dO V^T the same way and accumulates dQ += dS K in registers: two more gemms per tile
   than adding dQ by atomics from the dK / dV kernel, but dQ is written once, in the input
   dtype, with no float32 buffer to zero.
Or, in place of 2 and 3, `flash_bwd_fused` (attention_backward(fused=True)): the dK / dV
kernel also adds each query tile's dQ share by atomics into a float32 sum, five gemms per tile
pair (FlashAttention-3's schedule), and `flash_bwd_dq_convert` scales the sum into dQ.
Causal: a block starts (or stops) at the tile holding the diagonal and masks only the tiles
crossing it. A tile two gemms read, once as N x K (transpose_B: K Q^T, V dO^T, Q K^T) and
once as K x N (P^T dO, dS^T Q, dS K), is copied once: tilec's wgmma path reads one
128-byte-swizzled tile either way. The 1/sqrt(d) of dS is applied once, to dK and dQ at
the end, not per element of every tile. `attention_backward` runs the three.

Runs on the GPU when there is one, else on the CPU target, and checks against torch autograd
in float32.
"""

import math

import torch

import tilec as tilelang
import tilec.language as T

LOG2E = 1.4426950408889634
FAST_MATH = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}


@T.macro
def probabilities(scores, lse, first_query, first_key, seq_len, scale, is_causal, ragged,
                  keys_are_rows):
    """One tile's P = exp2(S * scale - LSE) in place from its scores S (P^T from S^T when its
    rows are keys: the dK / dV kernel's), LSE indexed by the tile's queries; 0 where the key
    comes after the query (causal) or either lies past the sequence (rows read there as zeros,
    their LSE as garbage). Only the tiles crossing the diagonal or the end are masked."""
    rows, cols = scores.shape
    queries, keys = (cols, rows) if keys_are_rows else (rows, cols)
    for i, j in T.Parallel(rows, cols):
        scores[i, j] = T.exp2(scores[i, j] * scale - lse[j if keys_are_rows else i])
    if is_causal:
        if first_key + keys > first_query:
            for i, j in T.Parallel(rows, cols):
                scores[i, j] = T.if_then_else(
                    first_key + (i if keys_are_rows else j)
                    <= first_query + (j if keys_are_rows else i), scores[i, j], 0)
    if ragged:
        if (first_query + queries > seq_len) | (first_key + keys > seq_len):
            for i, j in T.Parallel(rows, cols):
                scores[i, j] = T.if_then_else(
                    (first_query + (j if keys_are_rows else i) < seq_len)
                    & (first_key + (i if keys_are_rows else j) < seq_len), scores[i, j], 0)


@T.macro
def store_scaled(acc, staging, out, batch, first_row, head, scale):
    """acc * scale as out[batch, first_row:, head, :] (bshd) in out's dtype, through
    `staging` (a shared tile of that dtype)."""
    rows, dim = acc.shape
    for i, j in T.Parallel(rows, dim):
        acc[i, j] *= scale
    T.copy(acc, staging)
    T.copy(staging, out[batch, first_row:first_row + rows, head, :])


@tilelang.jit(out_idx=[2], pass_configs=FAST_MATH)
def flash_bwd_preprocess(batch, heads, seq_len, dim, dtype="float16", block=32, threads=128):
    shape = [batch, seq_len, heads, dim]
    accum = "float32"

    @T.prim_func
    def main(Output: T.Tensor(shape, dtype), dO: T.Tensor(shape, dtype),  # noqa: N803
             Delta: T.Tensor([batch, heads, seq_len], accum)):  # noqa: N803
        with T.Kernel(T.ceildiv(seq_len, block), heads, batch, threads=threads) as (bx, by, bz):
            o = T.alloc_fragment([block, dim], dtype)
            do = T.alloc_fragment([block, dim], dtype)
            product = T.alloc_fragment([block, dim], accum)
            delta = T.alloc_fragment([block], accum)
            T.copy(Output[bz, bx * block:(bx + 1) * block, by, :], o)
            T.copy(dO[bz, bx * block:(bx + 1) * block, by, :], do)
            for i, j in T.Parallel(block, dim):
                product[i, j] = o[i, j] * do[i, j]
            T.reduce_sum(product, delta, dim=1)
            T.copy(delta, Delta[bz, by, bx * block:(bx + 1) * block])

    return main


@tilelang.jit(out_idx=[6, 7], pass_configs=FAST_MATH)
def flash_bwd(batch, heads, seq_len, dim, is_causal, dtype="float16", block_M=128, block_N=64,
              num_stages=2, threads=256, heads_kv=None):
    heads_kv = heads_kv or heads
    groups = heads // heads_kv
    scale = LOG2E / math.sqrt(dim)
    shape = [batch, seq_len, heads, dim]
    kv_shape = [batch, seq_len, heads_kv, dim]
    row_shape = [batch, heads, seq_len]
    accum = "float32"
    ragged = seq_len % block_N != 0 or seq_len % block_M != 0

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(kv_shape, dtype),  # noqa: N803
             V: T.Tensor(kv_shape, dtype), dO: T.Tensor(shape, dtype),  # noqa: N803
             LSE: T.Tensor(row_shape, accum), Delta: T.Tensor(row_shape, accum),  # noqa: N803
             dK: T.Tensor(kv_shape, dtype), dV: T.Tensor(kv_shape, dtype)):  # noqa: N803
        with T.Kernel(T.ceildiv(seq_len, block_M), heads_kv, batch, threads=threads) as (
                bx, by, bz):
            K_shared = T.alloc_shared([block_M, dim], dtype)
            V_shared = T.alloc_shared([block_M, dim], dtype)
            q_shared = T.alloc_shared([block_N, dim], dtype)
            do_shared = T.alloc_shared([block_N, dim], dtype)
            lse_shared = T.alloc_shared([block_N], accum)
            delta_shared = T.alloc_shared([block_N], accum)
            dk_shared = T.alloc_shared([block_M, dim], dtype)
            dv_shared = T.alloc_shared([block_M, dim], dtype)
            pT = T.alloc_fragment([block_M, block_N], accum)
            dpT = T.alloc_fragment([block_M, block_N], accum)
            pT_cast = T.alloc_fragment([block_M, block_N], dtype)
            dsT_cast = T.alloc_fragment([block_M, block_N], dtype)
            dk = T.alloc_fragment([block_M, dim], accum)
            dv = T.alloc_fragment([block_M, dim], accum)

            T.copy(K[bz, bx * block_M:(bx + 1) * block_M, by, :], K_shared)
            T.copy(V[bz, bx * block_M:(bx + 1) * block_M, by, :], V_shared)
            T.clear(dk)
            T.clear(dv)
            first_tile = T.floordiv(bx * block_M, block_N) if is_causal else 0
            tiles = T.ceildiv(seq_len, block_N) - first_tile  # query tiles per query head
            # the query tiles of each of the KV head's `groups` query heads in turn
            for t in T.Pipelined(groups * tiles, num_stages=num_stages):
                head = by * groups + t // tiles if groups > 1 else by
                k = first_tile + t % tiles if groups > 1 else first_tile + t
                T.copy(Q[bz, k * block_N:(k + 1) * block_N, head, :], q_shared)
                T.copy(LSE[bz, head, k * block_N:(k + 1) * block_N], lse_shared)
                T.gemm(K_shared, q_shared, pT, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                probabilities(pT, lse_shared, k * block_N, bx * block_M, seq_len, scale,
                              is_causal, ragged, True)
                T.copy(dO[bz, k * block_N:(k + 1) * block_N, head, :], do_shared)
                T.copy(Delta[bz, head, k * block_N:(k + 1) * block_N], delta_shared)
                T.gemm(V_shared, do_shared, dpT, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                T.copy(pT, pT_cast)
                T.gemm(pT_cast, do_shared, dv, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(block_M, block_N):
                    dsT_cast[i, j] = pT[i, j] * (dpT[i, j] - delta_shared[j])
                T.gemm(dsT_cast, q_shared, dk, policy=T.GemmWarpPolicy.FullRow)

            store_scaled(dk, dk_shared, dK, bz, bx * block_M, by, 1.0 / math.sqrt(dim))
            store_scaled(dv, dv_shared, dV, bz, bx * block_M, by, 1.0)

    return main


@tilelang.jit(out_idx=[6], pass_configs=FAST_MATH)
def flash_bwd_dq(batch, heads, seq_len, dim, is_causal, dtype="float16", block_M=128,
                 block_N=64, num_stages=2, threads=256, heads_kv=None):
    heads_kv = heads_kv or heads
    groups = heads // heads_kv
    scale = LOG2E / math.sqrt(dim)
    shape = [batch, seq_len, heads, dim]
    kv_shape = [batch, seq_len, heads_kv, dim]
    row_shape = [batch, heads, seq_len]
    accum = "float32"
    ragged = seq_len % block_N != 0

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(kv_shape, dtype),  # noqa: N803
             V: T.Tensor(kv_shape, dtype), dO: T.Tensor(shape, dtype),  # noqa: N803
             LSE: T.Tensor(row_shape, accum), Delta: T.Tensor(row_shape, accum),  # noqa: N803
             dQ: T.Tensor(shape, dtype)):  # noqa: N803
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            dO_shared = T.alloc_shared([block_M, dim], dtype)
            k_shared = T.alloc_shared([block_N, dim], dtype)
            v_shared = T.alloc_shared([block_N, dim], dtype)
            dq_shared = T.alloc_shared([block_M, dim], dtype)
            p = T.alloc_fragment([block_M, block_N], accum)
            dp = T.alloc_fragment([block_M, block_N], accum)
            ds_cast = T.alloc_fragment([block_M, block_N], dtype)
            dq = T.alloc_fragment([block_M, dim], accum)
            lse = T.alloc_fragment([block_M], accum)
            delta = T.alloc_fragment([block_M], accum)

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.copy(dO[bz, bx * block_M:(bx + 1) * block_M, by, :], dO_shared)
            T.copy(LSE[bz, by, bx * block_M:(bx + 1) * block_M], lse)
            T.copy(Delta[bz, by, bx * block_M:(bx + 1) * block_M], delta)
            T.clear(dq)
            kv_head = by // groups
            key_tiles = T.ceildiv(seq_len, block_N)
            if is_causal:
                key_tiles = T.min(key_tiles, T.ceildiv((bx + 1) * block_M, block_N))
            for k in T.Pipelined(key_tiles, num_stages=num_stages):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, kv_head, :], k_shared)
                T.gemm(Q_shared, k_shared, p, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                probabilities(p, lse, bx * block_M, k * block_N, seq_len, scale, is_causal,
                              ragged, False)
                T.copy(V[bz, k * block_N:(k + 1) * block_N, kv_head, :], v_shared)
                T.gemm(dO_shared, v_shared, dp, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(block_M, block_N):
                    ds_cast[i, j] = p[i, j] * (dp[i, j] - delta[i])
                T.gemm(ds_cast, k_shared, dq, policy=T.GemmWarpPolicy.FullRow)

            store_scaled(dq, dq_shared, dQ, bz, bx * block_M, by, 1.0 / math.sqrt(dim))

    return main


@tilelang.jit(out_idx=[6, 7], pass_configs=FAST_MATH)
def flash_bwd_fused(batch, heads, seq_len, dim, is_causal, dtype="float16", block_M=128,
                    block_N=64, num_stages=2, threads=256, heads_kv=None):
    """`flash_bwd` that also adds each query tile's dQ share into the float32 `dQ_sum` (zeroed
    by the caller; `flash_bwd_dq_convert` scales it into dQ): dS^T goes to shared memory and
    the share is computed transposed, dQ^T = K^T dS^T, so its M is the head dimension, which
    the two warpgroups split, and both operands are read MN-major by wgmma; five gemms per
    tile pair in all where `flash_bwd` + `flash_bwd_dq` take seven (FlashAttention-3's)."""
    heads_kv = heads_kv or heads
    groups = heads // heads_kv
    scale = LOG2E / math.sqrt(dim)
    shape = [batch, seq_len, heads, dim]
    kv_shape = [batch, seq_len, heads_kv, dim]
    row_shape = [batch, heads, seq_len]
    accum = "float32"
    ragged = seq_len % block_N != 0 or seq_len % block_M != 0

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(kv_shape, dtype),  # noqa: N803
             V: T.Tensor(kv_shape, dtype), dO: T.Tensor(shape, dtype),  # noqa: N803
             LSE: T.Tensor(row_shape, accum), Delta: T.Tensor(row_shape, accum),  # noqa: N803
             dK: T.Tensor(kv_shape, dtype), dV: T.Tensor(kv_shape, dtype),  # noqa: N803
             dQ_sum: T.Tensor(shape, accum)):  # noqa: N803
        with T.Kernel(T.ceildiv(seq_len, block_M), heads_kv, batch, threads=threads) as (
                bx, by, bz):
            K_shared = T.alloc_shared([block_M, dim], dtype)
            V_shared = T.alloc_shared([block_M, dim], dtype)
            q_shared = T.alloc_shared([block_N, dim], dtype)
            do_shared = T.alloc_shared([block_N, dim], dtype)
            lse_shared = T.alloc_shared([block_N], accum)
            delta_shared = T.alloc_shared([block_N], accum)
            dsT_shared = T.alloc_shared([block_M, block_N], dtype)
            dk_shared = T.alloc_shared([block_M, dim], dtype)
            dv_shared = T.alloc_shared([block_M, dim], dtype)
            pT = T.alloc_fragment([block_M, block_N], accum)
            dpT = T.alloc_fragment([block_M, block_N], accum)
            pT_cast = T.alloc_fragment([block_M, block_N], dtype)
            dsT_cast = T.alloc_fragment([block_M, block_N], dtype)
            dk = T.alloc_fragment([block_M, dim], accum)
            dv = T.alloc_fragment([block_M, dim], accum)
            dqT = T.alloc_fragment([dim, block_N], accum)

            T.copy(K[bz, bx * block_M:(bx + 1) * block_M, by, :], K_shared)
            T.copy(V[bz, bx * block_M:(bx + 1) * block_M, by, :], V_shared)
            T.clear(dk)
            T.clear(dv)
            first_tile = T.floordiv(bx * block_M, block_N) if is_causal else 0
            tiles = T.ceildiv(seq_len, block_N) - first_tile  # query tiles per query head
            for t in T.Pipelined(groups * tiles, num_stages=num_stages):
                head = by * groups + t // tiles if groups > 1 else by
                k = first_tile + t % tiles if groups > 1 else first_tile + t
                T.copy(Q[bz, k * block_N:(k + 1) * block_N, head, :], q_shared)
                T.copy(LSE[bz, head, k * block_N:(k + 1) * block_N], lse_shared)
                T.copy(dO[bz, k * block_N:(k + 1) * block_N, head, :], do_shared)
                T.copy(Delta[bz, head, k * block_N:(k + 1) * block_N], delta_shared)
                # each gemm issued before the work that does not need it: P^T's exp2 under
                # V dO^T, dS^T under dV (with TILEC_DEFER_PIPELINE_GEMM_WAITS=1 their wgmma
                # groups stay in flight until then)
                T.gemm(K_shared, q_shared, pT, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                T.gemm(V_shared, do_shared, dpT, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                probabilities(pT, lse_shared, k * block_N, bx * block_M, seq_len, scale,
                              is_causal, ragged, True)
                T.copy(pT, pT_cast)
                T.gemm(pT_cast, do_shared, dv, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(block_M, block_N):
                    dsT_cast[i, j] = pT[i, j] * (dpT[i, j] - delta_shared[j])
                T.copy(dsT_cast, dsT_shared)
                T.gemm(dsT_cast, q_shared, dk, policy=T.GemmWarpPolicy.FullRow)
                T.gemm(K_shared, dsT_shared, dqT, transpose_A=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                for d, i in T.Parallel(dim, block_N):
                    T.atomic_add(dQ_sum[bz, k * block_N + i, head, d], dqT[d, i])

            store_scaled(dk, dk_shared, dK, bz, bx * block_M, by, 1.0 / math.sqrt(dim))
            store_scaled(dv, dv_shared, dV, bz, bx * block_M, by, 1.0)

    return main


@tilelang.jit(out_idx=[1], pass_configs=FAST_MATH)
def flash_bwd_dq_convert(batch, heads, seq_len, dim, dtype="float16", block=64, threads=128):
    """dQ = dQ_sum / sqrt(dim) in dQ's dtype: the last step of `flash_bwd_fused`'s dQ."""
    shape = [batch, seq_len, heads, dim]
    scale = 1.0 / math.sqrt(dim)

    @T.prim_func
    def main(dQ_sum: T.Tensor(shape, "float32"), dQ: T.Tensor(shape, dtype)):  # noqa: N803
        with T.Kernel(T.ceildiv(seq_len, block), heads, batch, threads=threads) as (bx, by, bz):
            acc = T.alloc_fragment([block, dim], "float32")
            out = T.alloc_fragment([block, dim], dtype)
            T.copy(dQ_sum[bz, bx * block:(bx + 1) * block, by, :], acc)
            for i, j in T.Parallel(block, dim):
                out[i, j] = acc[i, j] * scale
            T.copy(out, dQ[bz, bx * block:(bx + 1) * block, by, :])

    return main


def attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor,
                       do: torch.Tensor, lse: torch.Tensor, is_causal: bool, fused: bool = False,
                       **tiles) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dQ, dK, dV (bshd, the inputs' dtype) from the forward's O and LSE and the gradient dO;
    K and V may have fewer heads than Q (grouped-query attention). `fused`: dQ added by
    atomics from the dK / dV kernel (`flash_bwd_fused`) instead of its own kernel."""
    batch, seq_len, heads, dim = q.shape
    heads_kv = k.shape[2]
    dtype = str(q.dtype).removeprefix("torch.")
    delta = flash_bwd_preprocess(batch, heads, seq_len, dim, dtype)(o, do)
    if fused:
        dq_sum = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
        dk, dv = flash_bwd_fused(batch, heads, seq_len, dim, is_causal, dtype,
                                 heads_kv=heads_kv, **tiles)(q, k, v, do, lse, delta, dq_sum)
        return flash_bwd_dq_convert(batch, heads, seq_len, dim, dtype)(dq_sum), dk, dv
    dk, dv = flash_bwd(batch, heads, seq_len, dim, is_causal, dtype, heads_kv=heads_kv,
                       **tiles)(q, k, v, do, lse, delta)
    dq = flash_bwd_dq(batch, heads, seq_len, dim, is_causal, dtype, heads_kv=heads_kv,
                      **tiles)(q, k, v, do, lse, delta)
    return dq, dk, dv


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor,
              is_causal: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dQ, dK, dV by torch autograd through attention in float32 (bshd), K and V's heads
    repeated for grouped queries (their gradients summed over each group)."""
    q, k, v = (t.detach().float().requires_grad_() for t in (q, k, v))
    groups = q.shape[2] // k.shape[2]
    keys, values = k.repeat_interleave(groups, dim=2), v.repeat_interleave(groups, dim=2)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, keys) / math.sqrt(q.shape[-1])
    if is_causal:
        seq = q.shape[1]
        mask = torch.ones(seq, seq, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), values)
    out.backward(do.float())
    return q.grad, k.grad, v.grad


def main() -> None:
    import flash_fwd

    device = "cuda" if torch.cuda.is_available() else "cpu"
    batch, heads, seq, dim = (4, 16, 2048, 128) if device == "cuda" else (1, 2, 96, 64)
    fwd_tiles = {} if device == "cuda" else {"block_M": 64, "block_N": 32, "threads": 128}
    bwd_tiles = {} if device == "cuda" else {"block_M": 64, "block_N": 32, "threads": 128}
    for is_causal in (False, True):
        q, k, v, do = (torch.randn(batch, seq, heads, dim, device=device, dtype=torch.float16)
                       for _ in range(4))
        o, lse = flash_fwd.flash_fwd(batch, heads, seq, dim, is_causal, **fwd_tiles)(q, k, v)
        grads = attention_backward(q, k, v, o, do, lse, is_causal, **bwd_tiles)
        for name, got, want in zip("qkv", grads, reference(q, k, v, do, is_causal),
                                   strict=True):
            error = (got.float() - want).abs().max().item() / want.abs().max().item()
            print(f"flash_bwd d{name} causal={is_causal} {batch}x{seq}x{heads}x{dim} on {device}:"
                  f" max error {error:.2e} of the largest")
            assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
