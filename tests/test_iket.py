"""IKET events (tilec.tools.cuda.iket, TileLang's tilelang.tools.cuda.iket) in TileLang's syntax:
compiled into the kernel's cubin with IKET's metadata (nvcc + ptxas -c + nvlink, as
T.import_source code), numbered per module, listed by the session; what is rejected, at its
line; the host helpers. The kernels run on the GPU in TileLang's own iket/ examples (the
conformance runner); the profiler that reads the events is not here."""

from __future__ import annotations

import os
import re

import pytest

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda_extern import cuda_tool
from tilec.errors import CompileError, TilecError
from tilec.frontend.iket_ops import iket_source
from tilec.tools.cuda import iket

needs_toolkit = pytest.mark.skipif(
    any(cuda_tool(name) is None for name in ("nvcc", "ptxas", "nvlink")),
    reason="needs the CUDA toolkit (nvcc, ptxas, nvlink)")


def add_scale(n: int, threads: int = 128, dtype=T.float32):
    """TileLang's examples/iket/all_features.py kernel: a range around the body, marks with
    and without payloads, inside and outside T.Parallel."""

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), Scale: T.Tensor((1,), dtype),
             C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx, iket.range("block_total"):
            iket.mark("block_enter", payload=iket.payload(bx, dtype="int32"))
            for i in T.Parallel(threads):
                idx = bx * threads + i
                if idx < n:
                    iket.mark("load_inputs")
                    value = (A[idx] + B[idx]) * Scale[0]
                    iket.mark("store_index", payload=iket.payload(idx, dtype="int32"))
                    C[idx] = value
                    iket.mark("store_done")
            iket.mark("block_exit", payload=bx)

    return main


def pushed_ranges(n: int):
    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), C: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=n):
            iket.range_push("outer")
            with iket.range("inner", payload=iket.payload(1.5)):
                for i in T.Parallel(n):
                    C[i] = A[i] * 2.0
            iket.range_pop("outer")

    return main


def _arrays(source: str) -> dict[str, list[int]]:
    """The byte arrays a generated IKET source defines, by symbol."""
    found = re.findall(r"unsigned char (\w+)\[(\d+)\] = \{([^}]*)\};", source)
    return {name: [int(v) for v in values.split(", ")] for name, size, values in found}


def _u32(data: list[int], offset: int) -> int:
    return int.from_bytes(bytes(data[offset:offset + 4]), "little")


@needs_toolkit
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("payloads", [True, False])
def test_events_are_linked_into_the_cubin_with_ikets_metadata(arch: str, payloads: bool) -> None:
    with iket.session(runtime_payloads=payloads):
        kernel = tilec.compile(add_scale(2048), out_idx=-1, target=f"cuda:{arch}")
        table = iket.event_table()
    assert [(e["name"], e["event_id"], e["kind"], e["payload_type"]) for e in table] == [
        ("block_total", 1, "range", "NoPayload"), ("block_enter", 2, "mark", "int32"),
        ("load_inputs", 3, "mark", "NoPayload"), ("store_index", 4, "mark", "int32"),
        ("store_done", 5, "mark", "NoPayload"), ("block_exit", 6, "mark", "int32")]
    assert all(e["runtime_payload_iket_id"] == (5 if payloads and e["payload_type"] == "int32"
                                                else 0) for e in table)
    ptx = kernel.asm["ptx"]
    for number in range(1, 7):  # each event is a call of its function, the range's end too
        assert re.search(rf"call\.uni tilec_extern_\d+_tilec_iket_event_{number}\b", ptx)
    assert re.search(r"call\.uni tilec_extern_\d+_tilec_iket_range_end\b", ptx)
    binary = kernel.artifact.binary
    assert binary[:4] == b"\x7fELF"
    for symbol in (b"__iket_meta_info", b"__iket_evt_decl_block_total_1_attrs",
                   b"__iket_evt_decl_store_index_4_attrs",
                   b"__iket_range_decl_block_total_", b"tilec_iket_event_6"):
        assert symbol in binary


def test_metadata_records_each_event_and_range() -> None:
    iket.reset()
    events = [iket.register("span", "range"), iket.register("hit", "mark", "float32")]
    arrays = _arrays(iket_source(events, payloads=True))
    span, hit = arrays["__iket_evt_decl_span_1_attrs"], arrays["__iket_evt_decl_hit_2_attrs"]
    for record, number in ((span, 1), (hit, 2)):
        assert len(record) == 60 and _u32(record, 0) == 60 and _u32(record, 4) == number
        assert _u32(record, 8) == 3  # raised by pmevent after the shared store
    assert _u32(span, 16) == 1 and _u32(span, 20) == events[0].range_id != 0
    assert _u32(hit, 12) == 13 and _u32(span, 12) == 0  # float32's payload id; none
    assert _u32(hit, 24) == 3 and bytes(hit[28:31]) == b"hit"
    (range_symbol,) = [name for name in arrays if name.startswith("__iket_range_decl_span_")]
    record = arrays[range_symbol]
    assert _u32(record, 0) == 72 and _u32(record, 8) == events[0].range_id
    assert _u32(record, 12) == 0xFFFFFFFF and _u32(record, 16) == 2
    assert _u32(record, 32) == 4 and bytes(record[36:40]) == b"span"
    meta = arrays["__iket_meta_info"]
    assert _u32(meta, 0) == 48 and _u32(meta, 8) == 3  # two events and one range
    assert (_u32(meta, 12), _u32(meta, 16), _u32(meta, 20)) == (31, 32, 60)
    assert meta[24:28] == [157, 241, 190, 186] and _u32(meta, 32) == 2
    without = _arrays(iket_source(events, payloads=False))
    assert _u32(without["__iket_evt_decl_hit_2_attrs"], 12) == 0


@needs_toolkit
def test_each_module_numbers_its_events_from_one() -> None:
    with iket.session():
        first = tilec.compile(add_scale(256), out_idx=-1, target="cuda:sm_90a")
        second = tilec.compile(pushed_ranges(64), out_idx=-1, target="cuda:sm_90a")
        names = [(e["name"], e["event_id"]) for e in iket.event_table()]
    assert names[-2:] == [("outer", 7), ("inner", 8)]  # the session's ids go on
    assert b"__iket_evt_decl_outer_1_attrs" in second.artifact.binary  # the module's start at 1
    assert b"__iket_evt_decl_inner_2_attrs" in second.artifact.binary
    assert b"__iket_evt_decl_inner" not in first.artifact.binary


def _expect_error_at(kernel, line_text: str, match: str, error=TilecError, target="cpu"):
    with pytest.raises(error, match=match) as caught:
        tilec.compile(kernel, out_idx=-1, target=target)
    assert caught.value.filename == __file__
    with open(__file__) as source:
        assert line_text in source.read().splitlines()[caught.value.lineno - 1]


def test_events_outside_a_session_are_an_error_at_their_line() -> None:
    _expect_error_at(add_scale(256), 'iket.range("block_total")',
                     r"iket.range: IKET events are compiled inside `with iket.session")


def test_the_cpu_target_rejects_events_at_their_line() -> None:
    with iket.session():
        _expect_error_at(add_scale(256), 'iket.range("block_total")',
                         "an IKET event .* is CUDA instrumentation", CompileError)


def one_event(which: str):
    """A kernel with one bad IKET statement (`which`)."""

    @T.prim_func
    def main(C: T.Tensor((64,), T.float32)):
        with T.Kernel(1, threads=64) as bx:
            if which == "pop":
                iket.range_pop("x")  # bad: pop
            elif which == "float64":
                iket.mark("m", payload=iket.payload(bx, dtype="float64"))  # bad: float64
            elif which == "long":
                iket.mark("a_name_longer_than_thirty_two_bytes_")  # bad: long
            elif which == "unpopped":
                iket.range_push("open")  # bad: unpopped
            else:
                iket.mark("m")  # bad: no payload
            C[0] = 1.0

    return main


@pytest.mark.parametrize("which, message", [
    ("pop", "iket.range_pop without an open range"),
    ("float64", "an IKET payload is int32, uint32 or float32, got 'float64'"),
    ("long", "at most 32 UTF-8 bytes"),
    ("unpopped", "iket.range_push('open') is not ended by an iket.range_pop in its kernel"),
])
def test_bad_events_are_errors_at_their_line(which: str, message: str) -> None:
    with iket.session():
        _expect_error_at(one_event(which), f"# bad: {which}", re.escape(message),
                         target="cuda:sm_90a")


def test_an_event_keeps_its_payload_type() -> None:
    with iket.session():
        iket.register("m", "mark", "int32")
        _expect_error_at(one_event("payload"), "# bad: no payload",
                         "first used with payload type int32", target="cuda:sm_90a")


def test_kernel_statements_outside_a_kernel_are_errors_at_the_caller() -> None:
    with pytest.raises(TilecError, match=r"iket.mark is a statement of a kernel") as caught:
        iket.mark("x")
    assert caught.value.filename == __file__


def test_session_sets_and_restores_the_output_dir_payloads_and_cache(tmp_path) -> None:
    assert tilec.cache.is_enabled() and not iket.is_enabled()
    before = os.environ.get(iket.OUTPUT_DIR_ENV)
    with iket.session(output_dir=tmp_path / "out", runtime_payloads=True):
        assert iket.is_enabled() and iket.runtime_payloads_enabled()
        assert not tilec.cache.is_enabled()  # event numbers are not part of a kernel's key
        assert iket.output_dir() == tmp_path / "out" and (tmp_path / "out").is_dir()
        assert os.environ[iket.OUTPUT_DIR_ENV] == str(tmp_path / "out")
        assert iket.output_path("k.cu") == tmp_path / "out" / "k.cu"
        (tmp_path / "out" / "small.trace.json").write_text("{}")
        (tmp_path / "out" / "large.trace.json").write_text("{" + " " * 100 + "}")
        assert [p.name for p in iket.trace_files()] == ["large.trace.json", "small.trace.json"]
    assert tilec.cache.is_enabled() and not iket.is_enabled()
    assert not iket.runtime_payloads_enabled()
    assert os.environ.get(iket.OUTPUT_DIR_ENV) == before
    command = iket.profile_command(["python", "x.py"], directory="/tmp/t")
    assert command == ("python -m iket.cli.main --output-dir /tmp/t --clobber profile "
                       "--postprocess all -- python x.py")
