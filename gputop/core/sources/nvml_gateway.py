"""The one place every NVML call goes through, and the tables of versioned calls.

`Gateway` turns NVML errors into values: "no value" errors become None, a
lost GPU raises `DeviceLost`, and a missing symbol falls back to the older
version of the call, remembered so it is not retried each tick. `nvmlInit`,
`nvmlShutdown` and the lookup of symbols pynvml does not wrap go through it
too. It also remembers which call each thread is in, so a call that does
not come back can be named.
"""

from __future__ import annotations

import contextlib
import ctypes
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pynvml

from gputop.core.sources.base import SourceUnavailable
from gputop.core.sources.base import unavailable as unavailable  # the one line's words, for nvml.py

T = TypeVar("T")

LOST_ERRORS = frozenset({pynvml.NVML_ERROR_GPU_IS_LOST, pynvml.NVML_ERROR_UNKNOWN})

Handle = Any  # a pynvml c_nvmlDevice_t
ProcessList = list[tuple[int, "int | None"]]  # (pid, used GPU memory) as NVML lists them


class DeviceLost(Exception):
    """An NVML call answered GPU_IS_LOST or UNKNOWN for the device it was asked about."""


class Gateway:
    """The one place NVML calls go through; maps NVML errors to results."""

    def __init__(self) -> None:
        self._missing: set[str] = set()
        self._version: dict[str, int] = {}
        self._calling: dict[int, str] = {}  # thread id -> the NVML call it is in (or was in last)

    def init(self) -> None:
        """nvmlInit; SourceUnavailable (one line) when there is no usable driver."""
        self._calling[threading.get_ident()] = "nvmlInit"
        try:
            self._invoke(pynvml.nvmlInit, ())
        except pynvml.NVMLError_LibraryNotFound:
            raise SourceUnavailable(unavailable("libnvidia-ml.so.1 was not found")) from None
        except pynvml.NVMLError as error:
            raise SourceUnavailable(unavailable(f"nvmlInit failed: {describe(error)}")) from None

    def shutdown(self) -> None:
        """nvmlShutdown, whatever it answers."""
        self._calling[threading.get_ident()] = "nvmlShutdown"
        with contextlib.suppress(pynvml.NVMLError):
            self._invoke(pynvml.nvmlShutdown, ())

    def _invoke(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        """fn(*args): where the library is asked. A capture's recorder and player stand here
        (core/capture/), so that everything above runs as on the driver."""
        return fn(*args)

    def call(self, fn: Callable[..., T], *args: Any) -> T | None:
        """fn(*args), or None when NVML has no value; raises DeviceLost."""
        name = fn.__name__
        if name in self._missing:
            return None
        self._calling[threading.get_ident()] = name
        try:
            return self._invoke(fn, args)
        except pynvml.NVMLError as error:
            if error.value in LOST_ERRORS:
                raise DeviceLost(describe(error)) from error
            if error.value == pynvml.NVML_ERROR_FUNCTION_NOT_FOUND:
                self._missing.add(name)
            return None

    def call_versions(
        self, family: str, versions: Sequence[Callable[..., T]], *args: Any
    ) -> T | None:
        """The first of `versions` (newest first) the library has, remembered per family."""
        calling = self._calling
        thread = threading.get_ident()
        for position in range(self._version.get(family, 0), len(versions)):
            version = versions[position]
            calling[thread] = version.__name__
            try:
                result = self._invoke(version, args)
            except pynvml.NVMLError as error:
                if error.value == pynvml.NVML_ERROR_FUNCTION_NOT_FOUND:
                    self._version[family] = position + 1
                    continue
                if error.value in LOST_ERRORS:
                    raise DeviceLost(describe(error)) from error
                return None
            return result
        return None

    def lacks(self, family: str, versions: Sequence[object]) -> bool:
        """Whether the library has none of the family's versions (its None then means "no such call")."""
        return self._version.get(family, 0) >= len(versions)

    def last_call(self, thread: int | None) -> str | None:
        """The NVML call thread `thread` made last: the one it is stuck in, when it is."""
        return None if thread is None else self._calling.get(thread)


# pynvml's private lookup of a library function, the one private name of pynvml gputop uses (see
# tests/test_textual_private.py): it lets a list be read in one call into an array kept from the last
# tick. A pynvml without it is read through its public calls instead (one allocation per item).
PRIVATE_LOOKUP = "_nvmlGetFunctionPointer"


def symbol(name: str) -> Any | None:
    """The library's function `name` (FUNCTION_NOT_FOUND if absent); None when this pynvml has no
    private lookup, and the caller must use pynvml's public call."""
    lookup = getattr(pynvml, PRIVATE_LOOKUP, None)
    return None if lookup is None else lookup(name)


def binding_notice() -> str | None:
    """The one-line notice ``--debug`` gives when gputop reads NVML's lists the slower public way."""
    if hasattr(pynvml, PRIVATE_LOOKUP):
        return None
    return f"pynvml has no {PRIVATE_LOOKUP}: process lists are read through its public calls"


def public(name: str) -> Callable[..., Any]:
    """pynvml's public call `name`; FUNCTION_NOT_FOUND (as NVML says it) when this pynvml lacks it."""
    fn = getattr(pynvml, name, None)
    if fn is None:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
    return fn  # type: ignore[no-any-return]


def describe(error: Exception) -> str:
    """An NVML error's text, even when the library that would word it is gone."""
    try:
        return str(error)
    except Exception:  # pynvml asks the library for the text, which may be gone
        return f"NVML error {getattr(error, 'value', '?')}"


def _named(name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Name a version of a call after the NVML symbol it uses (the gateway reports it by name)."""

    def name_it(fn: Callable[..., T]) -> Callable[..., T]:
        fn.__name__ = name
        return fn

    return name_it


# --- memory ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Memory:
    total: int
    used: int
    free: int
    reserved: int | None


# What the versioned calls fill in, as nvml.h lays it out: gputop's own structures, read field by field
# in C (pynvml's are read through their __getattribute__, about 1 us a field), each made for one call.
class _MemoryV2(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint),
        ("total", ctypes.c_ulonglong),
        ("reserved", ctypes.c_ulonglong),
        ("free", ctypes.c_ulonglong),
        ("used", ctypes.c_ulonglong),
    ]


# nvml.h's NVML_STRUCT_VERSION: the size of the structure and its version number.
_MEMORY_V2 = int(getattr(pynvml, "nvmlMemory_v2", ctypes.sizeof(_MemoryV2) | 2 << 24))


def checked(result: int) -> None:
    """Raise NVML's error for a result other than success (a call made through its function pointer)."""
    if result != pynvml.NVML_SUCCESS:
        raise pynvml.NVMLError(result)


@_named("nvmlDeviceGetMemoryInfo_v2")
def _memory_v2(handle: Handle) -> Memory:
    fn = symbol("nvmlDeviceGetMemoryInfo_v2")
    if fn is None:
        info = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
        return Memory(int(info.total), int(info.used), int(info.free), int(info.reserved))
    memory = _MemoryV2(_MEMORY_V2)
    checked(fn(handle, ctypes.byref(memory)))
    return Memory(memory.total, memory.used, memory.free, memory.reserved)


@_named("nvmlDeviceGetMemoryInfo")
def _memory_v1(handle: Handle) -> Memory:
    info = pynvml.nvmlDeviceGetMemoryInfo(handle)
    return Memory(int(info.total), int(info.used), int(info.free), None)


MEMORY_VERSIONS = (_memory_v2, _memory_v1)


# --- temperature ----------------------------------------------------------------


class _TemperatureV1(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("sensorType", ctypes.c_uint), ("temperature", ctypes.c_int)]


_TEMPERATURE_V1 = int(getattr(pynvml, "nvmlTemperature_v1", ctypes.sizeof(_TemperatureV1) | 1 << 24))


@_named("nvmlDeviceGetTemperatureV")
def _temperature_v(handle: Handle) -> int:
    fn = symbol("nvmlDeviceGetTemperatureV")
    if fn is None:
        return int(pynvml.nvmlDeviceGetTemperatureV(handle, pynvml.NVML_TEMPERATURE_GPU))
    reading = _TemperatureV1(_TEMPERATURE_V1, pynvml.NVML_TEMPERATURE_GPU)
    checked(fn(handle, ctypes.byref(reading)))
    return int(reading.temperature)


@_named("nvmlDeviceGetTemperature")
def _temperature_v0(handle: Handle) -> int:
    return int(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU))


# nvidia-ml-py releases before GetTemperatureV only have the older call.
TEMPERATURE_VERSIONS = (
    (_temperature_v, _temperature_v0)
    if hasattr(pynvml, "nvmlDeviceGetTemperatureV")
    else (_temperature_v0,)
)


# --- process lists ---------------------------------------------------------------


# NVML's process items, as the driver lays them out: gputop's own, not pynvml's, whose classes differ
# from one release to the next (12.535.x has no c_nvmlProcessInfo_v2_t or _v3_t, and 12.535.77's
# c_nvmlProcessInfo_t carries a fifth field, usedGpuCcProtectedMemory, that no driver fills).
class _ProcessInfoV1(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class _ProcessInfoV2(ctypes.Structure):
    """nvmlProcessInfo_v2_t: the item of the _v2 and _v3 lists alike."""

    _fields_ = [
        ("pid", ctypes.c_uint),
        ("usedGpuMemory", ctypes.c_ulonglong),
        ("gpuInstanceId", ctypes.c_uint),
        ("computeInstanceId", ctypes.c_uint),
    ]


NOT_AVAILABLE = pynvml.NVML_VALUE_NOT_AVAILABLE_ulonglong.value
_LIST_TRIES = 3  # a list that keeps outgrowing its room is left unread this tick
# More items than any GPU lists (NVML's own limit on processes is far lower): a count above it is
# not believed, and the list is left unread rather than an array of that size made.
_LIST_MOST = 1 << 16
_PARSED_MOST = 256  # process lists kept, each as last read, by device


class _Buffers(threading.local):
    """Each thread's arrays for NVML's lists, by item type, kept from one tick to the next."""

    def __init__(self) -> None:
        self.arrays: dict[type[ctypes.Structure], Any] = {}


_BUFFERS = _Buffers()


def read_list(
    call: Callable[[Any, ctypes.c_uint], int], item: type[ctypes.Structure]
) -> bytes:
    """The raw items of an NVML list, read in one call while the array kept from last time is big
    enough; raises NVMLError.

    ``call(array, count)`` makes the NVML call with room for ``count`` items (``array`` None: none).
    pynvml asks for the size first (a second driver call) and turns every item into a Python object
    attribute by attribute: about 4 us a process, 2 ms a tick for a GPU with 512 processes.
    """
    arrays = _BUFFERS.arrays
    array = arrays.get(item)
    room = 0 if array is None else len(array)
    count = ctypes.c_uint(room)
    for _ in range(_LIST_TRIES):
        result = call(array, count)
        listed = count.value
        if result == pynvml.NVML_SUCCESS and listed <= room:
            return b"" if array is None else bytes(array)[: listed * ctypes.sizeof(item)]
        # Some NVML builds answer the size probe (no array) with SUCCESS and the count set, not
        # INSUFFICIENT_SIZE: a count larger than the room given is a size either way.
        if result not in (pynvml.NVML_SUCCESS, pynvml.NVML_ERROR_INSUFFICIENT_SIZE):
            break
        # INSUFFICIENT_SIZE without a count above the room given says nothing of the size needed:
        # growing the array on it would double it at every try, every tick.
        if listed <= room or listed > _LIST_MOST:
            result = pynvml.NVML_ERROR_INSUFFICIENT_SIZE
            break
        array = arrays[item] = (item * (listed * 2 + 5))()  # room for processes started since
        room = count.value = len(array)
    raise pynvml.NVMLError(result)


def layout(item: type[ctypes.Structure], *fields: str) -> struct.Struct:
    """A struct layout that unpacks these fields (in this order of offset) of each item."""
    codes = {ctypes.sizeof(ctypes.c_uint): "I", ctypes.sizeof(ctypes.c_ulonglong): "Q"}
    parts, at = ["="], 0
    for name in fields:
        descriptor = getattr(item, name)
        parts.append(f"{descriptor.offset - at}x{codes[descriptor.size]}")
        at = descriptor.offset + descriptor.size
    parts.append(f"{ctypes.sizeof(item) - at}x")
    return struct.Struct("".join(parts))


def _listing(name: str, item: type[ctypes.Structure]) -> Callable[[Handle], ProcessList]:
    """One version of a process-list symbol, as (pid, memory) pairs.

    A device whose list reads as the same bytes as its last gets the same list (its caller must not
    change it): not made again (3 us for 16 processes, 22 for 128), and compared with the last at once.
    """
    items = layout(item, "pid", "usedGpuMemory")
    # By handle (its id: a reused id is harmless, the bytes decide): the last list and what it was made of.
    # A MIG device's handle is a new object each tick: cleared past _PARSED_MOST.
    parsed: dict[int, tuple[bytes, ProcessList]] = {}

    @_named(name)
    def call(handle: Handle) -> ProcessList:
        fn = symbol(name)
        if fn is None:
            listed = public(name)(handle)
            return [(int(info.pid), _memory(info.usedGpuMemory)) for info in listed]
        raw = read_list(lambda array, count: int(fn(handle, ctypes.byref(count), array)), item)
        last = parsed.get(id(handle))
        if last is not None and last[0] == raw:
            return last[1]
        if len(parsed) >= _PARSED_MOST:
            parsed.clear()
        made = [(pid, None if memory == NOT_AVAILABLE else memory) for pid, memory in items.iter_unpack(raw)]
        parsed[id(handle)] = raw, made
        return made

    return call


def _memory(used: Any) -> int | None:
    """A process's memory as pynvml's public call gives it (None or NOT_AVAILABLE: not known)."""
    return None if used is None or int(used) == NOT_AVAILABLE else int(used)


# (type letter, version family, versions newest first)
PROCESS_LISTS: tuple[tuple[str, str, tuple[Callable[[Handle], ProcessList], ...]], ...] = tuple(
    (
        letter,
        kind,
        (
            _listing(f"nvmlDeviceGet{kind}RunningProcesses_v3", _ProcessInfoV2),
            _listing(f"nvmlDeviceGet{kind}RunningProcesses_v2", _ProcessInfoV2),
            _listing(f"nvmlDeviceGet{kind}RunningProcesses", _ProcessInfoV1),
        ),
    )
    for letter, kind in (("C", "Compute"), ("G", "Graphics"), ("C", "MPSCompute"))
)

# The CUDA driver version, newest call first.
CUDA_VERSIONS = (pynvml.nvmlSystemGetCudaDriverVersion_v2, pynvml.nvmlSystemGetCudaDriverVersion)
