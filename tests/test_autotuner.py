"""The autotuner on the CPU target: every configuration compiled (in parallel), the fastest kept."""

import torch

import tilec
import tilec.language as T


def _configs() -> list[dict]:
    return [{"block_M": 16, "block_N": 16}, {"block_M": 32, "block_N": 16},
            {"block_M": 16, "block_N": 32, "threads": 64}]


@tilec.autotune(configs=_configs(), warmup=1, rep=3)
@tilec.jit(target="cpu")
def scale(X, block_M=8, block_N=8, threads=32):
    M, N = T.const("M, N")
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        tile = T.alloc_fragment((block_M, block_N), T.float32)
        T.copy(X[by * block_M, bx * block_N], tile)
        for i, j in T.Parallel(block_M, block_N):
            tile[i, j] = tile[i, j] * 2.0 + 1.0
        T.copy(tile, Y[by * block_M, bx * block_N])
    return Y


def test_autotune_picks_a_timed_config_and_runs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    x = torch.randn(40, 56)
    y = scale(x)
    torch.testing.assert_close(y, x * 2 + 1)
    (result,) = scale.results.values()
    assert result.config in _configs()
    assert all(latency is not None and latency > 0 for _, latency in result.timings)
    assert len(list(tmp_path.iterdir())) == len(_configs())  # each config compiled into the cache


def test_precompile_then_tune_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    errors = scale.precompile(T.Tensor((24, 24), T.float32), target="cpu")
    assert errors == [None] * len(_configs())
    entries = sorted(p.name for p in tmp_path.iterdir())
    result = scale.tune(torch.randn(24, 24))
    assert sorted(p.name for p in tmp_path.iterdir()) == entries  # nothing compiled again
    assert result.latency_ms > 0
