"""NVML's arguments and answers as plain JSON values, and back (the capture format, docs/capture.md).

A structure becomes its fields (``{"$": "c_nvmlUtilization_t", "gpu": 87, "memory": 3}``), a handle or
other pointer a numbered reference (``{"$": "ref", "v": 1, "t": "LP_struct_c_nvmlDevice_t"}``: the
same pointer is the same number for the whole capture), bytes and tuples are marked so that they come
back as they were. Nothing here knows one NVML call from another: a call added to gputop is captured
and replayed without a change here.
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib
import threading
import types
from typing import Any

import pynvml

# Where a replayed handle points: never dereferenced (the answers come from the capture), only told
# apart, so a made-up address per reference number, clear of NULL.
_REF_BASE = 0x10000
_REF_STEP = 16

# The fields of an argument structure that say what was asked (the rest is room for the answer, and
# may hold last tick's answer when the structure is kept from one call to the next). A structure not
# named here is told apart by its type alone, and its calls by their order within the tick.
ASKED_FIELDS: dict[str, tuple[str, ...]] = {
    "c_nvmlFieldValue_t": ("fieldId", "scopeId"),
    "c_nvmlGpmMetricsGet_t": ("version", "numMetrics", "metrics"),
    "c_nvmlGpmMetric_t": ("metricId",),
}
# Where gputop's own values come from (the gateway's wrappers of a call: Memory, ...).
VALUES_FROM = "gputop.core.sources."
# A union is kept as the member its structure's ``valueType`` names (NVML's convention).
_VALUE_MEMBERS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}


def _pointer_types() -> dict[str, type[Any]]:
    found: dict[str, type[Any]] = {}
    for value in vars(pynvml).values():
        if isinstance(value, type) and issubclass(value, ctypes._Pointer):  # noqa: SLF001 - ctypes' public base
            found[value.__name__] = value
    return found


_POINTERS = _pointer_types()


class Refs:
    """Numbers for pointers: in order of first appearance while recording; made-up addresses on replay."""

    def __init__(self) -> None:
        self._numbers: dict[int, int] = {}
        self._lock = threading.Lock()

    def number(self, address: int) -> int:
        with self._lock:
            return self._numbers.setdefault(address, len(self._numbers) + 1)


class ReplayRefs(Refs):
    """A replay's pointers: reference n is a pointer to a made-up address that says n."""

    def number(self, address: int) -> int:
        if address >= _REF_BASE and (address - _REF_BASE) % _REF_STEP == 0:
            return (address - _REF_BASE) // _REF_STEP
        return super().number(address)  # a pointer the replay did not make: told apart, never matched

    @staticmethod
    def pointer(number: int | None, type_name: str) -> Any:
        kind = _POINTERS.get(type_name, ctypes.c_void_p)
        if number is None:
            return kind()
        if not isinstance(number, int) or not 0 < number < 1 << 32:
            raise ValueError(f"a reference that is not one: {number!r}")
        return ctypes.cast(ctypes.c_void_p(_REF_BASE + number * _REF_STEP), kind)


def _address(value: Any) -> int | None:
    return ctypes.cast(value, ctypes.c_void_p).value


def encode(value: Any, refs: Refs, nested: bool = False) -> Any:
    """A value NVML (or gputop's wrapper of a call) answered, as plain JSON; ``nested``: inside a
    structure or array, where the type goes without saying (no ``$``)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes):
        return {"$": "bytes", "v": value.decode("latin-1")}
    if isinstance(value, tuple):
        return {"$": "tuple", "v": [encode(item, refs) for item in value]}
    if isinstance(value, list):
        return [encode(item, refs) for item in value]
    if isinstance(value, ctypes._Pointer | ctypes.c_void_p):  # noqa: SLF001 - ctypes' public base
        address = _address(value)
        return {"$": "ref", "v": None if address is None else refs.number(address), "t": type(value).__name__}
    if isinstance(value, ctypes.Array):
        return [encode(item, refs, nested=True) for item in _used(value)]
    if isinstance(value, ctypes.Structure | ctypes.Union):
        return _encode_structure(value, refs, nested)
    if isinstance(value, ctypes._SimpleCData):  # noqa: SLF001 - ctypes' public base
        return encode(value.value, refs)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = type(value)
        fields = {f.name: encode(getattr(value, f.name), refs) for f in dataclasses.fields(value)}
        return {"$": f"{kind.__module__}.{kind.__qualname__}", **fields}
    if hasattr(value, "__dict__"):  # pynvml's friendly objects
        return {"$": "object", **{name: encode(item, refs) for name, item in vars(value).items()}}
    return {"$": "repr", "v": repr(value)}


def _used(array: Any) -> Any:
    """An array of structures without its trailing slots that hold nothing (all zero bytes): the room
    a structure leaves for more than was asked (GPM's 210 metrics)."""
    if not array._length_ or not issubclass(array._type_, ctypes.Structure):
        return array
    size = ctypes.sizeof(array._type_)
    raw = bytes(array)
    end = len(array)
    while end and not any(raw[(end - 1) * size : end * size]):
        end -= 1
    return array[:end]


def _encode_structure(value: Any, refs: Refs, nested: bool) -> dict[str, Any]:
    document: dict[str, Any] = {} if nested else {"$": type(value).__name__}
    if isinstance(value, ctypes.Union):
        document["hex"] = bytes(value).hex()
        return document
    for name, *_ in value._fields_:
        item = getattr(value, name)
        if isinstance(item, ctypes.Union):
            member = _VALUE_MEMBERS.get(int(getattr(value, "valueType", -1)))
            document[name] = {member: getattr(item, member)} if member else _encode_structure(item, refs, True)
            continue
        document[name] = encode(item, refs, nested=True)
    return document


def asked(args: tuple[Any, ...], refs: Refs) -> list[Any]:
    """What a call's arguments ask: handles as references, structures by the fields that ask."""
    return [_asked(arg, refs) for arg in args]


def _asked(value: Any, refs: Refs, nested: bool = False) -> Any:
    if isinstance(value, ctypes.Array):
        return [_asked(item, refs, True) for item in _used(value)]
    if isinstance(value, ctypes.Structure):
        kind = type(value).__name__
        fields = {name: _asked(getattr(value, name), refs, True) for name in ASKED_FIELDS.get(kind, ())}
        return fields if nested else {"$": kind, **fields}
    if isinstance(value, ctypes._Pointer | ctypes.c_void_p):  # noqa: SLF001 - ctypes' public base
        address = _address(value)
        return {"$": "ref", "v": None if address is None else refs.number(address)}
    return encode(value, refs)


def outputs(args: tuple[Any, ...], refs: Refs) -> dict[str, Any] | None:
    """The arguments NVML writes its answer into (arrays, structures), as they are after the call."""
    found = {
        str(position): encode(arg, refs)
        for position, arg in enumerate(args)
        if isinstance(arg, ctypes.Array | ctypes.Structure)
    }
    return found or None


def decode(value: Any, refs: ReplayRefs) -> Any:
    """A recorded answer as the call gave it: structures of pynvml's types, gputop's dataclasses."""
    if isinstance(value, list):
        return [decode(item, refs) for item in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("$")
    if kind == "bytes":
        return str(value["v"]).encode("latin-1")
    if kind == "tuple":
        return tuple(decode(item, refs) for item in value["v"])
    if kind == "ref":
        return refs.pointer(value["v"], str(value.get("t", "")))
    if kind == "repr":
        return value["v"]
    fields = {name: item for name, item in value.items() if name != "$"}
    if kind == "object":
        return types.SimpleNamespace(**{name: decode(item, refs) for name, item in fields.items()})
    if isinstance(kind, str) and kind.startswith(VALUES_FROM):
        # A capture may come from anyone: what it names is built only if it is one of the sources'
        # plain values (a dataclass), never called otherwise.
        module, _, name = kind.rpartition(".")
        cls = getattr(importlib.import_module(module), name, None)
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise ValueError(f"an answer of an unknown type {kind!r}")
        # A field gputop has since dropped is left out; one it has since added takes its default.
        known = {field.name for field in dataclasses.fields(cls)}
        return cls(**{name: decode(item, refs) for name, item in fields.items() if name in known})
    structure = getattr(pynvml, str(kind), None)
    if isinstance(structure, type) and issubclass(structure, ctypes.Structure):
        made = structure()
        fill(made, value, refs, pointers=True)
        return made
    raise ValueError(f"an answer of an unknown type {kind!r}")


def fill(target: Any, recorded: Any, refs: ReplayRefs, *, pointers: bool = False) -> None:
    """Write a recorded structure or array into ``target`` (an argument NVML answers into, or a
    structure being rebuilt); its pointers only when ``pointers`` (an argument's stay the caller's)."""
    if isinstance(target, ctypes.Array):
        for position, item in enumerate(recorded[: len(target)]):
            slot = target[position]
            if isinstance(slot, ctypes.Structure | ctypes.Union | ctypes.Array):
                fill(slot, item, refs, pointers=pointers)
            elif pointers or not isinstance(slot, ctypes._Pointer):  # noqa: SLF001 - ctypes' public base
                target[position] = decode(item, refs)
        return
    if isinstance(target, ctypes.Union):
        if "hex" in recorded:
            size = ctypes.sizeof(target)
            raw = bytes.fromhex(str(recorded["hex"]))[:size].ljust(size, b"\0")
            ctypes.memmove(ctypes.addressof(target), raw, size)
        else:
            for member, item in recorded.items():
                if member != "$":
                    setattr(target, member, item)
        return
    for name, *_ in target._fields_:
        if name not in recorded:
            continue
        item = recorded[name]
        current = getattr(target, name)
        if isinstance(current, ctypes.Structure | ctypes.Union) or (
            isinstance(current, ctypes.Array) and isinstance(item, list)
        ):
            fill(current, item, refs, pointers=pointers)
        elif isinstance(current, ctypes._Pointer | ctypes.c_void_p) or (  # noqa: SLF001
            isinstance(item, dict) and item.get("$") == "ref"
        ):
            if pointers:
                setattr(target, name, decode(item, refs))
        else:
            setattr(target, name, decode(item, refs))
