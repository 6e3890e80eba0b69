"""The attention tile programs of examples/attention/ compute attention (CPU target, small and
ragged shapes, float32 reference, outputs poisoned first), so a speed measured on the GPU by
benchmarks/attention.py is of a right answer."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

ROOT = Path(__file__).resolve().parents[1]
SMALL_TILE = {"block_M": 64, "block_N": 32, "num_stages": 2, "threads": 128}


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"attention_{name}",
                                                  ROOT / "examples" / "attention" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


flash_fwd = _example("flash_fwd")
flash_decode = _example("flash_decode")
flash_fwd_varlen = _example("flash_fwd_varlen")
flash_bwd = _example("flash_bwd")
mla_decode = _example("mla_decode")


def _qkv(dtype: str, batch: int, seq: int, heads: int, heads_kv: int, dim: int
         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Fresh random queries (batch, seq, heads, dim) and keys / values with heads_kv heads."""
    torch_dtype = getattr(torch, dtype)
    return (torch.randn(batch, seq, heads, dim).to(torch_dtype),
            torch.randn(batch, seq, heads_kv, dim).to(torch_dtype),
            torch.randn(batch, seq, heads_kv, dim).to(torch_dtype))


@pytest.mark.parametrize(("dtype", "dim", "causal", "heads_kv", "seq"), [
    ("float16", 64, False, 2, 96),    # whole tiles
    ("float16", 64, True, 2, 80),     # causal, a ragged last tile of queries and keys
    ("bfloat16", 128, True, 1, 72),   # multi-query, bf16
    ("float16", 128, False, 1, 50),   # one ragged key tile, grouped 2:1
])
def test_flash_fwd_matches_float32(dtype, dim, causal, heads_kv, seq, tmp_path,
                                   monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(3)
    heads, batch = 2, 2
    q, k, v = _qkv(dtype, batch, seq, heads, heads_kv, dim)
    kernel = flash_fwd.flash_fwd(batch, heads, seq, dim, causal, heads_kv, dtype, **SMALL_TILE)
    out, lse = kernel.get_profiler().run_poisoned(q, k, v)
    expected = flash_fwd.reference(q, k, v, causal)
    tolerance = 2e-2 if dtype == "bfloat16" else 4e-3
    assert (out.float() - expected).abs().max().item() < tolerance
    assert (lse - _lse_base2(q, k, causal)).abs().max().item() < 1e-3


def _lse_base2(q: torch.Tensor, k: torch.Tensor, causal: bool) -> torch.Tensor:
    """log2 of each row's sum of exp(score / sqrt(d)), float32, [batch, heads, seq]."""
    groups = q.shape[2] // k.shape[2]
    qf = q.float().transpose(1, 2)
    kf = k.float().transpose(1, 2).repeat_interleave(groups, dim=1)
    scores = qf @ kf.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        keep = torch.ones(q.shape[1], q.shape[1], dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    return scores.logsumexp(-1) / torch.log(torch.tensor(2.0))


@pytest.mark.parametrize(("dtype", "dim", "causal", "seq", "tiles", "heads"), [
    ("float16", 64, False, 128, {"block_M": 64, "block_N": 32, "threads": 128}, (2, 2)),
    ("float16", 64, True, 96, {"block_M": 64, "block_N": 32, "threads": 128}, (2, 2)),
    # ragged: the last key block and query tile run past the sequence's end
    ("bfloat16", 64, True, 77, {"block_M": 32, "block_N": 64, "threads": 128}, (2, 2)),
    ("float16", 128, False, 50, {"block_M": 64, "block_N": 32, "threads": 128}, (2, 2)),
    # grouped queries: dK / dV summed over the group's heads (2:1 causal and ragged, 4:1)
    ("float16", 64, True, 77, {"block_M": 64, "block_N": 32, "threads": 128}, (2, 1)),
    ("bfloat16", 64, False, 64, {"block_M": 32, "block_N": 32, "threads": 128}, (4, 1)),
])
def test_flash_bwd_matches_float32_autograd(dtype, dim, causal, seq, tiles, heads, tmp_path,
                                            monkeypatch) -> None:
    """dQ, dK, dV of the three backward kernels against autograd through float32 attention,
    each kernel's outputs poisoned, O and LSE from flash_fwd."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(11)
    batch, (heads, heads_kv) = 2, heads
    torch_dtype = getattr(torch, dtype)
    q, do = (torch.randn(batch, seq, heads, dim).to(torch_dtype) for _ in range(2))
    k, v = (torch.randn(batch, seq, heads_kv, dim).to(torch_dtype) for _ in range(2))
    o, lse = flash_fwd.flash_fwd(batch, heads, seq, dim, causal, heads_kv, dtype=dtype,
                                 **SMALL_TILE).get_profiler().run_poisoned(q, k, v)
    delta = flash_bwd.flash_bwd_preprocess(batch, heads, seq, dim, dtype).get_profiler() \
        .run_poisoned(o, do)
    assert (delta - (o.float() * do.float()).sum(-1).transpose(1, 2)).abs().max() < 1e-3
    dk, dv = flash_bwd.flash_bwd(batch, heads, seq, dim, causal, dtype, heads_kv=heads_kv,
                                 **tiles).get_profiler().run_poisoned(q, k, v, do, lse, delta)
    dq = flash_bwd.flash_bwd_dq(batch, heads, seq, dim, causal, dtype, heads_kv=heads_kv,
                                **tiles).get_profiler().run_poisoned(q, k, v, do, lse, delta)
    tolerance = 2e-2 if dtype == "bfloat16" else 4e-3
    for got, want in zip((dq, dk, dv), flash_bwd.reference(q, k, v, do, causal), strict=True):
        assert got.dtype == torch_dtype and got.shape == want.shape
        assert (got.float() - want).abs().max().item() < tolerance * want.abs().max().item()


@pytest.mark.parametrize(("dtype", "dim", "causal", "seq", "tiles", "heads"), [
    ("float16", 64, False, 96, {"block_M": 64, "block_N": 32, "threads": 128}, (2, 2)),
    ("float16", 64, True, 77, {"block_M": 64, "block_N": 32, "threads": 128}, (2, 2)),
    ("bfloat16", 128, True, 50, {"block_M": 64, "block_N": 32, "threads": 128}, (2, 2)),
    ("float16", 64, True, 77, {"block_M": 64, "block_N": 32, "threads": 128}, (4, 1)),
])
def test_fused_flash_bwd_matches_float32_autograd(dtype, dim, causal, seq, tiles, heads,
                                                  tmp_path, monkeypatch) -> None:
    """flash_bwd_fused (dQ added by atomics into a float32 sum from the dK / dV kernel, then
    scaled by flash_bwd_dq_convert) against autograd through float32 attention: whole and
    ragged tiles, causal, bf16, grouped queries (each query head's dQ from its KV head's
    blocks). dK, dV and dQ are poisoned (run_poisoned runs a kernel twice, so dK and dV come
    from that and the sum from one call of its own: it starts at zero, as the caller gives it;
    an element no atomic reaches stays 0, which the random reference rules out)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(13)
    batch, (heads, heads_kv) = 2, heads
    torch_dtype = getattr(torch, dtype)
    q, do = (torch.randn(batch, seq, heads, dim).to(torch_dtype) for _ in range(2))
    k, v = (torch.randn(batch, seq, heads_kv, dim).to(torch_dtype) for _ in range(2))
    o, lse = flash_fwd.flash_fwd(batch, heads, seq, dim, causal, heads_kv, dtype=dtype,
                                 **SMALL_TILE).get_profiler().run_poisoned(q, k, v)
    delta = flash_bwd.flash_bwd_preprocess(batch, heads, seq, dim, dtype)(o, do)
    fused = flash_bwd.flash_bwd_fused(batch, heads, seq, dim, causal, dtype, heads_kv=heads_kv,
                                      **tiles)
    dk, dv = fused.get_profiler().run_poisoned(q, k, v, do, lse, delta,
                                               torch.zeros(q.shape, dtype=torch.float32))
    dq_sum = torch.zeros(q.shape, dtype=torch.float32)
    fused(q, k, v, do, lse, delta, dq_sum)
    dq = flash_bwd.flash_bwd_dq_convert(batch, heads, seq, dim, dtype).get_profiler() \
        .run_poisoned(dq_sum)
    tolerance = 2e-2 if dtype == "bfloat16" else 4e-3
    for got, want in zip((dq, dk, dv), flash_bwd.reference(q, k, v, do, causal), strict=True):
        assert got.dtype == torch_dtype and got.shape == want.shape
        assert (got.float() - want).abs().max().item() < tolerance * want.abs().max().item()


def test_attention_backward_runs_the_three_kernels(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(12)
    q, k, v, do = (torch.randn(1, 64, 2, 64).half() for _ in range(4))
    o, lse = flash_fwd.flash_fwd(1, 2, 64, 64, True, **SMALL_TILE)(q, k, v)
    grads = flash_bwd.attention_backward(q, k, v, o, do, lse, True, block_M=64, block_N=32,
                                         threads=128)
    for got, want in zip(grads, flash_bwd.reference(q, k, v, do, True), strict=True):
        assert (got.float() - want).abs().max().item() < 4e-3 * want.abs().max().item()


@pytest.mark.parametrize("threads", [128, 256])
@pytest.mark.parametrize("num_split", [1, 3])
def test_mla_decode_matches_float32_on_a_paged_cache(num_split, threads, tmp_path,
                                                      monkeypatch) -> None:
    """Pages in a random order; lengths ending inside a page, on a page's end, within the first
    page and filling the cache (with 3 splits the 1-page sequence leaves two splits empty);
    a block per half of the latent columns (128 threads) or for all of them (256)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(13)
    batch, heads, max_len, page = 4, 64, 256, 64
    kv, table = mla_decode.paged_cache(batch, max_len, page, "cpu")
    q = torch.randn(batch, heads, mla_decode.LATENT + mla_decode.ROPE).half()
    lengths = torch.tensor([150, 128, 9, 256], dtype=torch.int32)
    kernel = mla_decode.mla_decode(batch, heads, kv.shape[0], table.shape[1], page, num_split,
                                   num_stages=2, threads=threads)
    out = kernel.get_profiler().run_poisoned(q, kv, table, lengths)
    expected = mla_decode.reference(q, kv, table, lengths)
    assert (out.float() - expected).abs().max().item() < 4e-3


def test_mla_decode_rejects_a_head_count_off_its_tiles() -> None:
    with pytest.raises(ValueError, match="multiple of block_H"):
        mla_decode.mla_decode(1, 96, 4, 4)


def test_benchmark_summary_takes_the_lowest_ratio() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import attention

    rows = [{"impl": attention.OWN_FORWARD, "seq_len": s, "causal": c, "ratio_to_cudnn": r,
             "dim": 128, "passed": True} for s, c, r in [(1024, False, 0.1), (4096, False, 0.9),
                                             (4096, True, 0.7), (16384, True, 0.8)]]
    rows.append({"impl": attention.EXAMPLE_MAIN, "seq_len": 4096, "causal": False,
                 "tflops": 477.2, "passed": True})
    rows.append({"impl": attention.EXAMPLE_MAIN, "seq_len": 4096, "causal": True,
                 "tflops": 624.3, "passed": True})
    rows.append({"impl": attention.OWN_FORWARD, "seq_len": 4096, "causal": True,
                 "ratio_to_cudnn": 0.5, "dim": 64, "passed": True})
    rows += [{"impl": attention.OWN_FORWARD + " (P V in flight)", "seq_len": 8192,
              "causal": c, "ratio_to_cudnn": r, "dim": 128, "passed": True}
             for c, r in ((False, 1.1), (True, 1.05))]
    mla = [{"impl": attention.OWN_MLA + suffix, "fraction_of_copy": f, "passed": passed}
           for suffix, f, passed in (("", 0.3, True), ("", 0.2, True), ("", 0.1, False),
                                     (" (whole rows)", 0.6, True))]
    summary = attention.summary(rows, mla=mla)
    assert summary["mla_decode_fraction_of_copy"] == 0.2
    assert summary["mla_decode_fraction_of_copy_whole_rows"] == 0.6
    assert summary["mla_decode_fraction_of_copy_synchronous"] is None
    assert summary["mla_tilelang_example_fraction_of_copy"] is None
    assert summary["fwd_d128_vs_cudnn_overlap"] == 1.05
    assert summary["fwd_d128_vs_cudnn_pingpong"] is None
    assert summary["fwd_d128_vs_cudnn"] == 0.7
    assert summary["fwd_d64_vs_cudnn"] == 0.5 and summary["fwd_d256_vs_cudnn"] is None
    assert summary["tilelang_example_vs_tilelang"] == pytest.approx(2.0, rel=1e-3)


def test_benchmark_rounds_ratio_each_round_to_its_own_cudnn() -> None:
    """attention_rounds: a round where every timing doubles (clock drift) moves no ratio; the
    spread is the largest minus the smallest ratio; each round starts one row later."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import attention_rounds as rounds

    rotated = rounds.OWN_FORWARD + rounds.SUFFIXES[0]
    timings = {rounds.CUDNN: [1.0, 2.0, 1.0], rounds.OWN_FORWARD: [1.25, 2.5, 1.25],
               rotated: [1.0, 2.5, 1.25]}
    summary = rounds.summarize(timings)
    assert summary[rounds.OWN_FORWARD] == {"ratio_to_cudnn": 0.8, "spread": 0.0,
                                           "vs_plain": 1.0}
    assert summary[rotated]["ratio_to_cudnn"] == 0.8
    assert summary[rotated]["spread"] == pytest.approx(0.2)
    assert summary[rotated]["vs_plain"] == 1.0
    assert summary[rounds.CUDNN]["ratio_to_cudnn"] == 1.0
    assert rounds.plain_name(rounds.EXAMPLE + rounds.SUFFIXES[1]) == rounds.EXAMPLE
    assert rounds.round_order(["a", "b", "c"], 1) == ["b", "c", "a"]
    assert rounds.round_order(["a", "b", "c"], 3) == ["a", "b", "c"]


@pytest.mark.parametrize("causal", [False, True])
def test_flash_fwd_varlen_matches_float32(causal, tmp_path, monkeypatch) -> None:
    """Packed sequences: one longer than a tile, one shorter than a tile, one with fewer keys
    than queries (causal: its first queries see no key and get zeros), one without keys."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(7)
    q_lens, k_lens = [81, 7, 40, 5], [90, 30, 20, 0]
    heads, heads_kv, dim = 4, 2, 64
    cu_q = torch.tensor([0, *torch.tensor(q_lens).cumsum(0).tolist()], dtype=torch.int32)
    cu_k = torch.tensor([0, *torch.tensor(k_lens).cumsum(0).tolist()], dtype=torch.int32)
    q = torch.randn(int(cu_q[-1]), heads, dim).half()
    k = torch.randn(int(cu_k[-1]), heads_kv, dim).half()
    v = torch.randn(int(cu_k[-1]), heads_kv, dim).half()
    kernel = flash_fwd_varlen.flash_fwd_varlen(len(q_lens), q.shape[0], k.shape[0], max(q_lens),
                                               heads, dim, causal, heads_kv, **SMALL_TILE)
    out = kernel.get_profiler().run_poisoned(q, k, v, cu_q, cu_k)
    expected = flash_fwd_varlen.reference(q, k, v, cu_q, cu_k, causal)
    assert (out.float() - expected).abs().max().item() < 4e-3


def test_flash_decode_matches_float32_with_ragged_caches(tmp_path, monkeypatch) -> None:
    """Lengths that leave splits empty (3 of 4 for the first sequence), end inside a tile, and
    fill the cache; grouped heads 4:1 in 64-row tiles."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(5)
    batch, heads, heads_kv, seqlen, dim = 3, 8, 2, 160, 64
    q = torch.randn(batch, heads, dim).half()
    k = torch.randn(batch, seqlen, heads_kv, dim).half()
    v = torch.randn(batch, seqlen, heads_kv, dim).half()
    lengths = torch.tensor([17, 101, 160], dtype=torch.int32)
    kernel = flash_decode.flash_decode(batch, heads, heads_kv, seqlen, dim, num_split=4,
                                       block_N=32)
    out = kernel.get_profiler().run_poisoned(q, k, v, lengths)
    expected = flash_decode.reference(q, k, v, lengths)
    assert (out.float() - expected).abs().max().item() < 4e-3


def test_flash_fwd_loop_is_fed_by_a_tma_ring_on_sm90a(tmp_path, monkeypatch) -> None:
    """The attention loop (two wgmma gemms, the online softmax between them in registers)
    runs on a producer warpgroup's TMA ring: K and V by cp.async.bulk.tensor, P as wgmma's
    register A operand, and no block barrier between a slot's mbarrier wait and its gemms."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    kernel = flash_fwd.flash_fwd(2, 4, 512, 128, True)
    assert "tile.tma_ring = {consumers = 2 : i64, overlap = false" in kernel.asm["tile-cuda"]
    ptx = kernel.get_kernel_source()
    assert "cp.async.bulk.tensor" in ptx and "setmaxnreg.inc" in ptx
    assert re.search(r"wgmma\.mma_async\S*\s*\{[^}]*\},\s*\{", ptx), "P not from registers"
    # the gpu stage keeps program order: the consumers' wait on a slot (the second wait; the
    # producer's is first), the loop's body, then the slot handed back
    gpu = kernel.asm["gpu"]
    waits = [m.start() for m in re.finditer(r"nvvm\.mbarrier\.try_wait\.parity", gpu)]
    assert len(waits) == 2
    body = gpu[waits[1]:gpu.index("nvvm.mbarrier.arrive ", waits[1])]
    assert body.count("nvvm.wgmma.fence.aligned") == 2  # both gemms, in the body
    assert "nvvm.barrier" not in body and "gpu.barrier" not in body


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("causal", [False, True])
def test_flash_fwd_consumers_take_turns_when_opted_in(causal, tmp_path, monkeypatch) -> None:
    """TILEC_WARPGROUP_PINGPONG=1 on the loop as written (TILEC_ROTATE_ATTENTION_LOOP=0): the
    plain flash_fwd source's loop gets tile.pingpong with turns apart, and in the PTX each
    consumer warpgroup hands its turn on right after committing Q K^T (a bar.arrive between
    that commit and its wait) and waits for it before P V's fence; ptxas assembles it without
    spills. The opt-in is part of the cache key: the same kernel compiled before without it,
    in the same cache, is another kernel."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    monkeypatch.setenv("TILEC_ROTATE_ATTENTION_LOOP", "0")
    assert "tile.pingpong" not in flash_fwd.flash_fwd(2, 4, 512, 128, causal).asm["tile-cuda"]
    monkeypatch.setenv("TILEC_WARPGROUP_PINGPONG", "1")
    kernel = flash_fwd.flash_fwd(2, 4, 512, 128, causal)
    assert "tile.pingpong = {barrier = 4 : i64, together = false}" in kernel.asm["tile-cuda"]
    ptx = kernel.get_kernel_source()
    # each gemm from its fence to its wait (ptxas's block order need not be program order)
    gemms = [ptx[m.start():ptx.index("wgmma.wait_group", m.start())]
             for m in re.finditer(r"wgmma\.fence\.sync\.aligned", ptx)]
    assert len(gemms) == 2
    assert sum("bar.arrive" in gemm[gemm.index("wgmma.commit_group"):] for gemm in gemms) == 1
    assert len(re.findall(r"bar\.sync\s+%r\d+, 256;\s*wgmma\.fence", ptx)) == 1
    assert _ptxas_spill_bytes(ptx) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize(("causal", "dim"), [(False, 128), (True, 128), (False, 64)])
def test_rotated_flash_fwd_consumers_take_turns_on_both_gemms(causal, dim, tmp_path,
                                                              monkeypatch) -> None:
    """TILEC_WARPGROUP_PINGPONG=1 on the default rotated loop (FlashAttention-3's ping-pong
    with its intra-warpgroup overlap): tile.pingpong with together = true, and in the PTX
    each consumer warpgroup waits for its turn (bar.sync on its barrier) right before Q K^T's
    fence, issues Q K^T and P V back to back, hands the turn on (bar.arrive) right after
    P V's commit and only then waits for Q K^T with P V in flight (wait_group 1); after the
    loop warpgroup 0 waits once more (warpgroup 1's last hand-on). ptxas assembles it
    without serializing the wgmmas (C7514) and without spills."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    monkeypatch.setenv("TILEC_WARPGROUP_PINGPONG", "1")
    tiles = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    kernel = flash_fwd.flash_fwd(2, 4, 512, dim, causal, **tiles)
    assert kernel.asm["tile-cuda"].count("tile.deferred_wait") == 2
    assert "tile.pingpong = {barrier = 4 : i64, together = true}" in kernel.asm["tile-cuda"]
    ptx = kernel.get_kernel_source()
    turn = re.search(r"bar\.sync\s+(%r\d+), 256;\s*wgmma\.fence\.sync\.aligned;"
                     r"(?:(?!bar\.|wgmma\.wait_group)[^\n]*\n)*?"
                     r"\s*wgmma\.commit_group\.sync\.aligned;\n"
                     r"(?:(?!bar\.|wgmma\.wait_group)[^\n]*\n)*?"
                     r"\s*wgmma\.commit_group\.sync\.aligned;\n"
                     r"(?:(?!bar\.|wgmma\.)[^\n]*\n)*?"
                     r"\s*bar\.arrive\s+%r\d+, %r\d+;\n"
                     r"(?:(?!bar\.|wgmma\.)[^\n]*\n)*?"
                     r"\s*wgmma\.wait_group\.sync\.aligned\s+1;", ptx)
    assert turn, "no turn of both gemms"
    assert len(re.findall(r"\bbar\.sync\s+" + re.escape(turn.group(1)) + r", 256;", ptx)) == 2
    log = _ptxas_log(ptx)
    assert "C7514" not in log and "wgmma.mma_async instructions are serialized" not in log
    assert _spill_bytes(log) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("causal", [False, True])
def test_flash_fwd_on_one_warpgroup_runs_on_two(causal, tmp_path, monkeypatch) -> None:
    """At TileLang's example_mha_fwd_bshd.py main() configuration (128 x 128 tiles, d 128, one
    stage, 128 threads) one warpgroup would hold S, P and O, 320 registers a thread: ptxas
    spilled 1652 bytes. widen-register-bound-blocks runs the block on two consumer
    warpgroups, so the kernel is the one 256 threads compile to (the same PTX), both gemms on
    wgmma, assembled without spills."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    tiles = {"block_M": 128, "block_N": 128, "num_stages": 1}
    kernel = flash_fwd.flash_fwd(2, 4, 512, 128, causal, threads=128, **tiles)
    assert "threads [256]" in kernel.asm["tile-schedule"]
    assert "tile.tma_ring = {consumers = 2 : i64" in kernel.asm["tile-cuda"]
    ptx = kernel.get_kernel_source()
    assert ptx == flash_fwd.flash_fwd(2, 4, 512, 128, causal, threads=256,
                                      **tiles).get_kernel_source()
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
    assert re.search(r"wgmma\.mma_async\S*\s*\{[^}]*\},\s*\{", ptx), "P not from registers"
    assert _ptxas_spill_bytes(ptx) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("pingpong", [False, True])
def test_flash_fwd_leaves_p_v_in_flight_when_opted_in(pingpong, tmp_path, monkeypatch) -> None:
    """TILEC_OVERLAP_RING_GEMMS=1 (overlap-ring-gemms): the plain flash_fwd source's ring at
    the benchmark's tiles gets overlap and a third slot; in the PTX Q K^T still waits for
    every group (the softmax reads S) while P V's commit is followed by wait_group 1 before
    the slot hand-over, and wait_group 0 only after the loop; ptxas assembles it without
    spills, with the warpgroups' turns as well. The opt-in is part of the cache key."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    tiles = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    monkeypatch.setenv("TILEC_ROTATE_ATTENTION_LOOP", "0")  # the loop as written
    plain = flash_fwd.flash_fwd(2, 4, 512, 128, False, **tiles).asm["tile-cuda"]
    assert "overlap = false" in plain and "overlap = true" not in plain
    monkeypatch.setenv("TILEC_OVERLAP_RING_GEMMS", "1")
    if pingpong:
        monkeypatch.setenv("TILEC_WARPGROUP_PINGPONG", "1")
    kernel = flash_fwd.flash_fwd(2, 4, 512, 128, False, **tiles)
    assert "overlap = true" in kernel.asm["tile-cuda"]
    assert "stages = 3 : i64" in kernel.asm["tile-cuda"]
    assert ("tile.pingpong" in kernel.asm["tile-cuda"]) == pingpong
    ptx = kernel.get_kernel_source()
    waits = [ptx.index("wgmma.wait_group", m.start())
             for m in re.finditer(r"wgmma\.commit_group", ptx)]
    assert [ptx[w:ptx.index(";", w)].split()[-1] for w in waits] == ["0", "1"]
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+0;", ptx[waits[1] + 20:])
    assert _ptxas_spill_bytes(ptx) == 0


# O's rescale right after the rotated loop's Q K^T (an scf.if on k > 0 follows the gemm)
RESCALED_UNDER_QK = re.compile(r"tile\.deferred_wait, transpose_b = true\}[^\n]*\n\s*scf\.if")


@pytest.mark.parametrize("rescale_under_qk", ["0", "1"])
@pytest.mark.parametrize(("dtype", "dim", "causal", "heads_kv", "seq"), [
    ("float16", 64, True, 2, 80),     # causal, a ragged last tile of queries and keys
    ("float16", 64, False, 1, 96),    # whole tiles, grouped 2:1
    ("bfloat16", 128, True, 1, 72),   # multi-query, bf16
    ("float16", 64, False, 2, 20),    # one key tile: the rotated loop runs twice
])
def test_rotated_flash_fwd_matches_float32(dtype, dim, causal, heads_kv, seq, rescale_under_qk,
                                           tmp_path, monkeypatch) -> None:
    """TILEC_ROTATE_ATTENTION_LOOP=1 (rotate-attention-loop, which the CPU target runs too):
    the loop one iteration longer, Q K^T of tile k and P V of tile k - 1 in one iteration,
    gives the same attention and LSE, outputs poisoned; so does it with
    TILEC_RESCALE_UNDER_QK=1, O's rescale by tile k - 1's scale one iteration later, right
    after Q K^T of tile k (none in the first iteration)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_ROTATE_ATTENTION_LOOP", "1")
    monkeypatch.setenv("TILEC_RESCALE_UNDER_QK", rescale_under_qk)
    torch.manual_seed(4)
    heads, batch = 2, 2
    q, k, v = _qkv(dtype, batch, seq, heads, heads_kv, dim)
    kernel = flash_fwd.flash_fwd(batch, heads, seq, dim, causal, heads_kv, dtype, **SMALL_TILE)
    assert "arith.maxsi" in kernel.asm["loops"], "the loop was not rotated (no V corner clamp)"
    rotated = "\n".join(kernel.trace().step("rotate-attention-loop").text.lines)
    assert bool(RESCALED_UNDER_QK.search(rotated)) == (rescale_under_qk == "1")
    out, lse = kernel.get_profiler().run_poisoned(q, k, v)
    tolerance = 2e-2 if dtype == "bfloat16" else 4e-3
    assert (out.float() - flash_fwd.reference(q, k, v, causal)).abs().max().item() < tolerance
    assert (lse - _lse_base2(q, k, causal)).abs().max().item() < 1e-3


@tilec.jit(out_idx=[3], pass_configs={tilec.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def mask_initialised_attention(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=32,
                               num_stages=2, threads=128):
    """Attention as TileLang's example_mha_fwd_bshd.py writes it: the scores initialised to 0
    or -inf (causal, or past the sequence) and Q K^T added to them."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [batch, seq_len, heads, dim]

    @T.prim_func
    def main(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"),
             V: T.Tensor(shape, "float16"), Output: T.Tensor(shape, "float16")):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], "float16")
            K_shared = T.alloc_shared([block_N, dim], "float16")
            V_shared = T.alloc_shared([block_N, dim], "float16")
            acc_s = T.alloc_fragment([block_M, block_N], "float32")
            acc_s_cast = T.alloc_fragment([block_M, block_N], "float16")
            acc_o = T.alloc_fragment([block_M, dim], "float32")
            scores_max = T.alloc_fragment([block_M], "float32")
            scores_max_prev = T.alloc_fragment([block_M], "float32")
            scores_scale = T.alloc_fragment([block_M], "float32")
            scores_sum = T.alloc_fragment([block_M], "float32")
            logsum = T.alloc_fragment([block_M], "float32")
            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity("float32"))
            loop_range = T.min(T.ceildiv(seq_len, block_N), T.ceildiv(
                (bx + 1) * block_M, block_N)) if is_causal else T.ceildiv(seq_len, block_N)
            for k in T.Pipelined(loop_range, num_stages=num_stages):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0,
                                                     -T.infinity("float32"))
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j >= seq_len,
                                                     -T.infinity("float32"), 0)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullRow)
                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity("float32"))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return main


@pytest.mark.parametrize("rescale_under_qk", ["0", "1"])
@pytest.mark.parametrize(("causal", "seq"), [(True, 80), (False, 80), (True, 64)])
def test_rotated_mask_initialised_attention_matches_float32(causal, seq, rescale_under_qk,
                                                            tmp_path, monkeypatch) -> None:
    """TileLang's form of attention (scores initialised to 0 / -inf, Q K^T added) with
    TILEC_ROTATE_ATTENTION_LOOP=1: mask-scores-after-gemm applies the mask after a clearing
    Q K^T, rotate-attention-loop then rotates the loop (with TILEC_RESCALE_UNDER_QK=1 its
    scores_scale rescale of acc_o one iteration later, after Q K^T); the CPU target's attention
    equals float32's, outputs poisoned, ragged tiles (80 keys over 32-key tiles) included."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_ROTATE_ATTENTION_LOOP", "1")
    monkeypatch.setenv("TILEC_RESCALE_UNDER_QK", rescale_under_qk)
    torch.manual_seed(5)
    q, k, v = _qkv("float16", 2, seq, 2, 2, 64)
    kernel = mask_initialised_attention(2, 2, seq, 64, causal)
    assert "arith.maxsi" in kernel.asm["loops"], "the loop was not rotated (no V corner clamp)"
    masked = "\n".join(kernel.trace().step("mask-scores-after-gemm").text.lines)
    assert "clear_accum = true" in masked, "the mask was not moved after Q K^T"
    rotated = "\n".join(kernel.trace().step("rotate-attention-loop").text.lines)
    assert bool(RESCALED_UNDER_QK.search(rotated)) == (rescale_under_qk == "1")
    out = kernel.get_profiler().run_poisoned(q, k, v)
    assert (out.float() - flash_fwd.reference(q, k, v, causal)).abs().max().item() < 4e-3


@pytest.mark.parametrize("causal", [False, True])
def test_mask_initialised_attention_masks_after_q_k_by_default(causal, tmp_path,
                                                                monkeypatch) -> None:
    """On sm_90a at the benchmark's tiles, by default (fast math flushes denormals): Q K^T
    clears its accumulator and the mask's T.Parallel follows it (before, the mask was
    computed ahead of Q K^T's issue: 230 SASS instructions per key tile in the causal loop),
    the loop is rotated (both gemms' waits deferred), exp2 is ex2.approx.ftz, and it assembles
    without spills. With TILEC_ROTATE_ATTENTION_LOOP=0, or without fast math, the kernel is
    as written."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    tiles = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    kernel = mask_initialised_attention(2, 4, 512, 128, causal, **tiles)
    schedule = kernel.asm["tile-schedule"]
    loop = schedule[schedule.index("tile.pipelined"):]
    first_gemm = loop.index("tile.gemm")
    assert "clear_accum = true" in loop[first_gemm:loop.index("\n", first_gemm)]
    mask = loop.index("tile.parallel")
    assert mask > first_gemm and "memref.load" in loop[mask:loop.index("}", mask)]
    assert kernel.asm["tile-cuda"].count("tile.deferred_wait") == 2
    ptx = kernel.get_kernel_source()
    assert "ex2.approx.ftz.f32" in ptx and "ex2.approx.f32" not in ptx
    assert re.search(r"\bfma\.rn\.ftz\.f32", ptx), "f32 arithmetic not flushed"
    if ptxas_path() is not None:
        assert _ptxas_spill_bytes(ptx) == 0
    exact = tilec.compile(mask_initialised_attention.fn(2, 4, 512, 128, causal, **tiles),
                          out_idx=[3], target="cuda:sm_90a")
    monkeypatch.setenv("TILEC_ROTATE_ATTENTION_LOOP", "0")
    plain = mask_initialised_attention(2, 4, 512, 128, causal, **tiles)
    for unrotated in (plain, exact):
        assert "clear_accum = true" not in unrotated.asm["tile-schedule"]
        assert "tile.deferred_wait" not in unrotated.asm["tile-cuda"]
    assert "ex2.approx.ftz.f32" in plain.asm["ptx"]


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("causal", [False, True])
def test_rotated_flash_fwd_leaves_p_v_in_flight_through_the_softmax(causal, tmp_path,
                                                                      monkeypatch) -> None:
    """The default at the benchmark's tiles on sm_90a (the loop rotated where fast math flushes
    denormals; TILEC_ROTATE_ATTENTION_LOOP=0 leaves it as written): the ring loop commits
    Q K^T, then P V, waits with one group pending before the first k < n branch (the
    softmax's statements on S), and with none at the start of the second (writing P, scaling
    O), a block of its own; the body's end waits for all before the slot goes back. P is
    converted two halves to a register (cvt.rn.f16x2.f32) and crosses the back edge packed.
    ptxas assembles it without serializing the wgmmas (C7514, which the wait inside the
    branch caused) and without spills (142 bytes at the consumers' 232 registers while P
    crossed as halves). Each exp2 is one ex2.approx.ftz.f32. The setting is part of the cache
    key."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    tiles = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    kernel = flash_fwd.flash_fwd(2, 4, 512, 128, causal, **tiles)
    monkeypatch.setenv("TILEC_ROTATE_ATTENTION_LOOP", "0")
    assert "tile.deferred_wait" not in flash_fwd.flash_fwd(2, 4, 512, 128, causal,
                                                           **tiles).asm["tile-cuda"]
    assert kernel.asm["tile-cuda"].count("tile.deferred_wait") == 2
    assert "tile.tma_ring" in kernel.asm["tile-cuda"]
    ptx = kernel.get_kernel_source()
    loop = ptx[ptx.index("wgmma.fence"):]
    commits = re.findall(r"wgmma\.(commit_group|wait_group\.sync\.aligned\s+\d+)", loop)
    assert commits[:3] == ["commit_group", "commit_group", "wait_group.sync.aligned \t1"]
    # P V committed and Q K^T waited for before the first k < n branch; P V's wait heads a
    # block of its own, after the second branch (ptxas waits at the start of the block holding
    # the wait: the softmax's statements on S, in the first branch, run under P V)
    after = loop[loop.index("wgmma.wait_group.sync.aligned \t1;"):]
    assert re.match(r"wgmma\.wait_group\.sync\.aligned \t1;\n(?:(?!wgmma\.)[^\n]*\n)*?"
                    r"\t@%p\d+ bra", after)
    assert re.search(r"\t@%p\d+ bra \t\$L__BB\d+_\d+;\n\twgmma\.wait_group\.sync\.aligned \t0;",
                     ptx)
    assert "cvt.rn.f16x2.f32" in ptx and "cvt.rn.f16.f32" not in ptx
    assert "ex2.approx.ftz.f32" in ptx and "ex2.approx.f32" not in ptx
    assert re.search(r"\bfma\.rn\.ftz\.f32", ptx), "f32 arithmetic not flushed"
    log = _ptxas_log(ptx)
    assert "C7514" not in log and "wgmma.mma_async instructions are serialized" not in log
    assert _spill_bytes(log) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("causal", [False, True])
def test_rescale_under_qk_runs_under_the_next_q_k(causal, tmp_path, monkeypatch) -> None:
    """TILEC_RESCALE_UNDER_QK=1 on the default rotated loop at the benchmark's tiles (sm_90a):
    O's rescale (64 mul.ftz.f32 a thread) runs between the commits of Q K^T and P V, after a
    wait_group 1 that waits for nothing (Q K^T alone in flight) but tells ptxas the previous
    iteration's P V is done, and the block after P V's wait only converts P. ptxas assembles
    it without injecting a wait there (C7517: without that wait_group 1 it waited for Q K^T
    before the rescale), serializing wgmmas (C7514) or spilling. Without the setting the loop
    is as before: the 64 multiplies after P V's wait."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    tiles = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    plain = flash_fwd.flash_fwd(2, 4, 512, 128, causal, **tiles).get_kernel_source()
    monkeypatch.setenv("TILEC_RESCALE_UNDER_QK", "1")
    ptx = flash_fwd.flash_fwd(2, 4, 512, 128, causal, **tiles).get_kernel_source()

    def parts(ptx: str) -> tuple[list[str], str, str]:
        """The loop's commits and waits, what lies between its two commits, and what lies
        between P V's wait_group 0 and the body's end."""
        loop = ptx[ptx.index("wgmma.fence"):]
        waits = re.findall(r"wgmma\.(commit_group|wait_group\.sync\.aligned\s+\d+)", loop)
        first = loop.index("wgmma.commit_group")
        between = loop[first:loop.index("wgmma.commit_group", first + 1)]
        after = loop[loop.index("wgmma.wait_group.sync.aligned \t0"):]
        return waits, between, after[:after.index("wgmma.wait_group", 20)]

    waits, between, after = parts(ptx)
    assert waits[:5] == ["commit_group", "wait_group.sync.aligned \t1", "commit_group",
                         "wait_group.sync.aligned \t1", "wait_group.sync.aligned \t0"]
    assert between.count("mul.ftz.f32") == 64 and "mul.ftz.f32" not in after
    assert "cvt.rn.f16x2.f32" in after
    waits, between, after = parts(plain)
    assert waits[:3] == ["commit_group", "commit_group", "wait_group.sync.aligned \t1"]
    assert "mul.ftz.f32" not in between and after.count("mul.ftz.f32") == 64
    log = _ptxas_log(ptx)
    assert "C7517" not in log and "C7514" not in log
    assert _spill_bytes(log) == 0


def _exp2_kernel(fast_math: bool):
    import tilec
    import tilec.language as T

    configs = {tilec.PassConfigKey.TL_ENABLE_FAST_MATH: fast_math}

    @tilec.jit(out_idx=[1], pass_configs=configs)
    def exp2_scaled(n):
        @T.prim_func
        def main(x: T.Tensor((n,), "float32"), y: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=128):
                for i in T.Parallel(n):
                    y[i] = T.exp2(x[i]) * x[i]
        return main

    return exp2_scaled(256)


@pytest.mark.parametrize(("arch", "fast_math", "rotate", "ftz", "rotated"), [
    ("sm_90a", True, None, None, True),     # the default: wgmma chip, denormals flushed
    ("sm_90a", True, "0", None, False),     # switched off
    ("sm_90a", True, None, "0", False),     # denormals kept: the rotation alone was mixed
    ("sm_90a", False, None, None, False),   # no fast math, nothing flushed
    ("sm_80", True, None, None, False),     # mma.sync: no deferred wgmma waits to gain from
    ("sm_80", False, "1", None, True),      # forced on any chip
    ("sm_90a", True, "", None, True),       # an empty variable is unset
])
def test_attention_loop_rotation_default(arch, fast_math, rotate, ftz, rotated,
                                         monkeypatch) -> None:
    """Where the CUDA target rotates attention loops (mask-scores-after-gemm and
    rotate-attention-loop) and flushes f32 denormals, from the chip, fast math and the two
    variables; both variables are COMPILE_SETTINGS, so a kernel compiled under another
    setting is kept under another key."""
    from tilec import cache
    from tilec.compiler.pipeline import CompileOptions
    from tilec.compiler.targets import cuda

    for name, value in (("TILEC_ROTATE_ATTENTION_LOOP", rotate), ("TILEC_FAST_MATH_FTZ", ftz)):
        assert name in cache.COMPILE_SETTINGS
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    options = CompileOptions(target=f"cuda:{arch}", fast_math=fast_math)
    assert cuda.rotate_attention_loops(options) == rotated
    assert cuda.flush_denormals(options) == (fast_math and ftz != "0")


@pytest.mark.parametrize("setting", [None, "0"])
def test_fast_math_flushes_denormals_unless_told_not_to(setting, tmp_path, monkeypatch) -> None:
    """Under fast math the kernel's f32 math flushes denormals by default, as nvcc's
    --use_fast_math does: exp2 is ex2.approx.ftz.f32 (libdevice through nvvm-reflect-ftz), the
    multiply mul.ftz.f32 (denormal-fp-math-f32); TILEC_FAST_MATH_FTZ=0 keeps them. Without fast
    math nothing is flushed either way, and its PTX is the same under both settings."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    exact = _exp2_kernel(False).asm["ptx"]
    if setting is not None:
        monkeypatch.setenv("TILEC_FAST_MATH_FTZ", setting)
    flushed = setting is None
    fast = _exp2_kernel(True).asm["ptx"]
    assert ("ex2.approx.ftz.f32" in fast) == flushed
    assert ("ex2.approx.f32" in fast) != flushed
    assert bool(re.search(r"\bmul(\.rn)?\.ftz\.f32", fast)) == flushed
    assert ".ftz" not in exact and _exp2_kernel(False).asm["ptx"] == exact


def test_fast_math_leaves_half_precision_values_unflushed(tmp_path, monkeypatch) -> None:
    """NVPTX flushes f16 arithmetic and conversions too under denormal-fp-math-f32 (a widened
    fp16 denormal read as 0: cvt.ftz.f32.f16; the half2 GEMV's fma.rn.ftz.f16x2), which nvcc's
    -ftz does not: a function computing on half-precision values keeps its denormals (its
    libdevice math still takes the ftz forms), one that only moves them (attention's P and
    output) is flushed."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))

    @tilec.jit(out_idx=[1], pass_configs={tilec.PassConfigKey.TL_ENABLE_FAST_MATH: True},
               target="cuda:sm_90a")
    def widen_scale(n):
        @T.prim_func
        def main(x: T.Tensor((n,), "float16"), y: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=128):
                for i in T.Parallel(n):
                    y[i] = T.exp2(T.cast(x[i], "float32")) * 3.0
        return main

    ptx = widen_scale(256).asm["ptx"]
    assert "cvt.f32.f16" in ptx and "cvt.ftz" not in ptx
    assert "ex2.approx.ftz.f32" in ptx and not re.search(r"\bmul(\.rn)?\.ftz\.f32", ptx)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_flash_bwd_gemms_all_run_on_wgmma_on_sm90a(tmp_path, monkeypatch) -> None:
    """At the benchmark's tiles, every gemm of the dK / dV and dQ kernels is planned for wgmma
    (none left to CUDA cores), the tiles read both as N x K and as K x N (Q and dO, K) each one
    shared tile (their second copies took 64 KiB of the dK / dV kernel's arena, 32 of the dQ
    kernel's), the PTX holds both instruction shapes (64-wide score tiles, 128-wide dK / dV /
    dQ), and ptxas assembles each kernel without spilling."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    tiles = {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256}
    for kernel, arena in ((flash_bwd.flash_bwd(2, 2, 256, 128, False, **tiles), 133120),
                          (flash_bwd.flash_bwd_dq(2, 2, 256, 128, False, **tiles), 132128)):
        assert f"tile.shared_bytes = {arena} " in kernel.asm["gpu"]
        gemms = [line for line in kernel.asm["tile-cuda"].splitlines() if "tile.gemm " in line]
        assert gemms and all("tile.wgmma" in line for line in gemms)
        ptx = kernel.get_kernel_source()
        assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" in ptx
        assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
        assert _ptxas_spill_bytes(ptx) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_causal_flash_bwd_assembles_without_spills(tmp_path, monkeypatch) -> None:
    """The causal dK / dV kernel at the benchmark's shape: its loop runs from the diagonal's
    tile, `64 - 2 * bx` iterations, which LLVM could not rule out to be none; GVN then kept
    the epilogue's column indices, hoisted from the mask, live across the loop on that
    path, and ptxas spilled 24 bytes at 255 registers. The constant grid is now the
    gpu.func's known_grid_size (block indices bounded), and it assembles without spills."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    tiles = {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256}
    kernel = flash_bwd.flash_bwd(8, 32, 4096, 128, True, **tiles)
    assert "known_grid_size = array<i32: 32, 32, 8>" in kernel.asm["gpu"]
    assert _ptxas_spill_bytes(kernel.get_kernel_source()) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("causal", [False, True])
def test_fused_flash_bwd_runs_five_wgmma_gemms_and_reduces_dq(causal, tmp_path,
                                                              monkeypatch) -> None:
    """flash_bwd_fused at the benchmark's shape on sm_90a: all five gemms are wgmma (dQ^T =
    K^T dS^T reads K and the staged dS^T as MN-major operands: 8 m64n64k16 steps for each of
    K Q^T and V dO^T, 4 m64n128k16 for each of dV and dK, 8 m64n64k16 for dQ^T), the
    accumulator's 32 dQ values a thread are added by atomics without a returned value (ptxas
    makes them REDs), and ptxas assembles it without spills."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    tiles = {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256}
    kernel = flash_bwd.flash_bwd_fused(8, 32, 4096, 128, causal, **tiles)
    gemms = [line for line in kernel.asm["tile-cuda"].splitlines() if "tile.gemm " in line]
    assert len(gemms) == 5 and all("tile.wgmma" in line for line in gemms)
    ptx = kernel.get_kernel_source()
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == 24
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 8
    assert len(re.findall(r"atom\.global\.add\.f32", ptx)) == 32
    assert _ptxas_spill_bytes(ptx) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_fused_flash_bwd_defers_its_gemm_waits_when_opted_in(tmp_path, monkeypatch) -> None:
    """TILEC_DEFER_PIPELINE_GEMM_WAITS=1 on flash_bwd_fused (benchmark shape, sm_90a): its
    cp.async loop's gemms but dQ^T (whose atomics read it at once) are tile.deferred_wait, so
    P^T's exp2 runs with V dO^T in flight and dS^T with dV (two wait_group 1), K and V (filled
    before the loop) need no fence and barrier of their own in the body (8 bar.sync in all,
    10 without the opt-in), and ptxas assembles it without spills and without serializing
    the wgmmas (no C7514 / C7515 warning)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    monkeypatch.setenv("TILEC_DEFER_PIPELINE_GEMM_WAITS", "1")
    tiles = {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256}
    kernel = flash_bwd.flash_bwd_fused(8, 32, 4096, 128, False, **tiles)
    gemms = [line for line in kernel.asm["tile-cuda"].splitlines() if "tile.gemm " in line]
    assert [("tile.deferred_wait" in line) for line in gemms] == [True] * 4 + [False]
    ptx = kernel.get_kernel_source()
    assert len(re.findall(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx)) == 2
    assert ptx.count("bar.sync") == 8
    log = _ptxas_log(ptx)
    assert _spill_bytes(log) == 0 and "C751" not in log


def test_mla_decode_gemms_all_run_on_wgmma_on_sm90a(tmp_path, monkeypatch) -> None:
    """Every gemm of MLA decode (three score gemms, P V) is planned for wgmma on sm_90a: none
    left to CUDA cores, as P V once was (8 ms instead of about 0.1 at the benchmark's shape on
    the H200); P V reads the latent tile the scores read (N x K there, K x N here)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    kernel = mla_decode.mla_decode(2, 64, 8, 4, 64, 2)
    gemms = [line for line in kernel.asm["tile-cuda"].splitlines() if "tile.gemm " in line]
    assert len(gemms) == 4 and all("tile.wgmma" in line for line in gemms)
    ptx = kernel.get_kernel_source()
    assert ptx.count("wgmma.mma_async") == 40 and ptx.count("fma.rn.f32") < 100


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_mla_decode_assembles_without_spills(tmp_path, monkeypatch) -> None:
    """MLA decode at the benchmark's shape (batch 64, 128 heads, 4096-token caches): its 36
    score wgmmas read tiles its loop does not rewrite, and LLVM hoisted each one's descriptors
    out of the loop (72 64-bit values live across it beside the 128 accumulators: 255
    registers, 740 bytes of spills); each tile's descriptor is now made once at its gemm."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    ptx = mla_decode.mla_decode(64, 128, 64 * 64, 64, 64, 1).get_kernel_source()
    assert ptx.count("wgmma.mma_async") == 40
    assert _ptxas_spill_bytes(ptx) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_mla_decode_pipelines_its_pages_with_table_loads(tmp_path, monkeypatch) -> None:
    """The page copies' corners come from the block table and the loop's trip count from the
    sequence's length: by default both loads are marked tile.table_load, and the loop becomes
    a TMA ring whose producer warpgroup loads them again (cp.async.bulk.tensor, 256 threads,
    no spills; with one consumer warpgroup no setmaxnreg: its registers are not rebalanced);
    with TILEC_PIPELINE_TABLE_LOADS=0, the copies stay synchronous global loads into
    registers and shared stores."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    shape = (64, 128, 64 * 64, 64, 64, 1)
    monkeypatch.setenv("TILEC_PIPELINE_TABLE_LOADS", "0")
    plain = mla_decode.mla_decode(*shape).get_kernel_source()
    assert "cp.async" not in plain
    monkeypatch.delenv("TILEC_PIPELINE_TABLE_LOADS")
    kernel = mla_decode.mla_decode(*shape)
    assert "tile.table_load" in kernel.asm["tile-schedule"]
    assert "known_block_size = array<i32: 256, 1, 1>" in kernel.asm["gpu"]
    ptx = kernel.get_kernel_source()
    assert ptx.count("cp.async.bulk.tensor") >= 3 and "setmaxnreg" not in ptx
    assert ptx.count("wgmma.mma_async") == 40
    assert _ptxas_spill_bytes(ptx) == 0


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_mla_decode_whole_rows_on_two_warpgroups(tmp_path, monkeypatch) -> None:
    """threads=256 (a block for all 512 latent columns of 64 heads, as TileLang's and
    FlashMLA's decode kernels) with TILEC_SPLIT_WGMMA_N=1: each warpgroup an m64n32 share of
    the scores and an m64n256 share of P V; with the pages on a TMA ring (a producer
    warpgroup beside the two) it fits sm_90a's shared memory only since P is cast from the
    split scores without a conversion in (231552 bytes; 8 KiB more before)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_TARGET", "cuda:sm_90a")
    monkeypatch.setenv("TILEC_SPLIT_WGMMA_N", "1")
    monkeypatch.setenv("TILEC_PIPELINE_TABLE_LOADS", "1")
    kernel = mla_decode.mla_decode(64, 128, 64 * 64, 64, 64, 1, threads=256)
    assert "tile.shared_bytes = 231552" in kernel.asm["gpu"]
    assert "known_block_size = array<i32: 384, 1, 1>" in kernel.asm["gpu"]
    ptx = kernel.get_kernel_source()
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n32k16") == 36
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n256k16") == 4
    assert "cp.async.bulk.tensor" in ptx
    assert _ptxas_spill_bytes(ptx) == 0


def _ptxas_log(ptx: str) -> str:
    """What ptxas -v says assembling `ptx` for sm_90a (its info lines, warnings included)."""
    source = Path(tempfile.mkdtemp(prefix="tilec-bwd-")) / "kernel.ptx"
    source.write_text(ptx)
    result = subprocess.run([ptxas_path(), "-arch=sm_90a", "-v", str(source), "-o",
                             str(source.with_suffix(".cubin"))], capture_output=True, text=True,
                            check=True)
    return result.stdout + result.stderr


def _spill_bytes(log: str) -> int:
    return sum(int(n) for n in re.findall(r"(\d+) bytes spill stores", log))


def _ptxas_spill_bytes(ptx: str) -> int:
    """The spill stores ptxas -v reports for sm_90a."""
    return _spill_bytes(_ptxas_log(ptx))
