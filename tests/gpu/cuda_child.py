"""A real GPU process for the real-GPU tier, through the CUDA driver API with ctypes (no PyTorch, no nvcc).

    python tests/gpu/cuda_child.py BYTES

Creates a context on device 0, allocates BYTES of GPU memory, has the driver JIT-compile the PTX
kernel below and run it over the whole allocation, checks a few words it wrote, prints
``ready PID`` and then holds the memory until it is killed (or its stdin closes).

The calls, as the CUDA driver API documents them (cuda.h): cuInit(flags), cuDeviceGet(&device,
ordinal), cuCtxCreate_v2(&context, flags, device), cuMemAlloc_v2(&pointer, bytes),
cuModuleLoadData(&module, image), cuModuleGetFunction(&function, module, name),
cuLaunchKernel(function, grid x/y/z, block x/y/z, shared bytes, stream, params, extra),
cuCtxSynchronize(), cuMemcpyDtoH_v2(host, device pointer, bytes).
"""

from __future__ import annotations

import ctypes
import os
import sys

# fill(out, words, seed): out[i] = seed ^ i for every i < words. PTX ISA 6.0 for sm_50: any driver
# since CUDA 9 JIT-compiles it for the GPU it has (sm_90 on an H100/H200).
PTX = b"""
.version 6.0
.target sm_50
.address_size 64

.visible .entry fill(
    .param .u64 fill_out,
    .param .u32 fill_words,
    .param .u32 fill_seed
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [fill_out];
    ld.param.u32 %r2, [fill_words];
    ld.param.u32 %r3, [fill_seed];
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %ntid.x;
    mov.u32 %r6, %tid.x;
    mad.lo.s32 %r1, %r4, %r5, %r6;
    setp.ge.u32 %p1, %r1, %r2;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    xor.b32 %r7, %r3, %r1;
    st.global.u32 [%rd4], %r7;
DONE:
    ret;
}
"""
KERNEL = b"fill"
SEED = 0x5EED
THREADS = 256


class CudaError(RuntimeError):
    pass


def _checked(cuda: ctypes.CDLL, name: str) -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    function = getattr(cuda, name)
    function.restype = ctypes.c_int

    def call(*args: object) -> None:
        result = function(*args)
        if result != 0:
            text = ctypes.c_char_p()
            cuda.cuGetErrorString(result, ctypes.byref(text))
            raise CudaError(f"{name}: error {result} ({(text.value or b'?').decode()})")

    return call  # type: ignore[return-value]


def run(size: int) -> tuple[int, list[int]]:
    """Allocate ``size`` bytes on device 0 and fill them with the kernel; (device pointer, first words)."""
    cuda = ctypes.CDLL("libcuda.so.1")
    _checked(cuda, "cuInit")(0)
    device = ctypes.c_int()
    _checked(cuda, "cuDeviceGet")(ctypes.byref(device), 0)
    context = ctypes.c_void_p()
    _checked(cuda, "cuCtxCreate_v2")(ctypes.byref(context), 0, device)
    pointer = ctypes.c_uint64()
    _checked(cuda, "cuMemAlloc_v2")(ctypes.byref(pointer), ctypes.c_size_t(size))
    module = ctypes.c_void_p()
    _checked(cuda, "cuModuleLoadData")(ctypes.byref(module), ctypes.c_char_p(PTX))
    function = ctypes.c_void_p()
    _checked(cuda, "cuModuleGetFunction")(ctypes.byref(function), module, ctypes.c_char_p(KERNEL))
    words = size // 4
    out, count, seed = ctypes.c_uint64(pointer.value), ctypes.c_uint32(words), ctypes.c_uint32(SEED)
    params = (ctypes.c_void_p * 3)(
        ctypes.addressof(out), ctypes.addressof(count), ctypes.addressof(seed)
    )
    blocks = (words + THREADS - 1) // THREADS
    _checked(cuda, "cuLaunchKernel")(function, blocks, 1, 1, THREADS, 1, 1, 0, None, params, None)
    _checked(cuda, "cuCtxSynchronize")()
    first = (ctypes.c_uint32 * 4)()
    _checked(cuda, "cuMemcpyDtoH_v2")(first, ctypes.c_uint64(pointer.value), ctypes.c_size_t(ctypes.sizeof(first)))
    return pointer.value, list(first)


def main() -> int:
    size = int(sys.argv[1])
    try:
        _, first = run(size)
    except (OSError, CudaError) as error:
        print(f"failed {error}", flush=True)
        return 1
    expected = [SEED ^ i for i in range(4)]
    if first != expected:
        print(f"failed the kernel wrote {first}, not {expected}", flush=True)
        return 1
    print(f"ready {os.getpid()}", flush=True)
    sys.stdin.read()  # hold the memory until the test closes stdin or kills this process
    return 0


if __name__ == "__main__":
    sys.exit(main())
