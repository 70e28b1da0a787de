"""NVML field values: the ids gputop asks for, and one batched ``nvmlDeviceGetFieldValues`` that reads them.

A batch keeps its ctypes array between reads; a driver that does not know a field answers it alone
(that slot's return code), so one missing field never costs the others. Every call goes through the gateway.
Each field's classic call, asked where the batch does not answer, is in nvml_fallback.py.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Sequence
from typing import Any

import pynvml

from gputop.core.sources.nvml_gateway import Gateway, Handle, checked, public, symbol

ALL_LINKS = 0xFFFFFFFF  # a field's scope: summed over every link


def _field(name: str, number: int) -> int:
    """A field id by name; nvml.h's number where an older nvidia-ml-py does not name it yet."""
    return int(getattr(pynvml, name, number))


FI_ECC_VOLATILE = pynvml.NVML_FI_DEV_ECC_DBE_VOL_TOTAL  # uncorrected = double bit
FI_ECC_AGGREGATE = pynvml.NVML_FI_DEV_ECC_DBE_AGG_TOTAL
FI_ENERGY = pynvml.NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION  # mJ since the driver loaded
FI_MEMORY_TEMP = _field("NVML_FI_DEV_MEMORY_TEMP", 82)  # °C
FI_PCIE_REPLAY = _field("NVML_FI_DEV_PCIE_REPLAY_COUNTER", 94)  # replays since the driver loaded
FI_LINK_COUNT = pynvml.NVML_FI_DEV_NVLINK_LINK_COUNT
FI_LINK_VERSION = _field("NVML_FI_DEV_NVLINK_GET_VERSION", 166)
FI_LINK_STATE = _field("NVML_FI_DEV_NVLINK_GET_STATE", 165)
FI_ERROR_TOTALS = (
    pynvml.NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL,
    pynvml.NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL,
    pynvml.NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL,
)
FI_LINK_ERRORS = (
    _field("NVML_FI_DEV_NVLINK_ERROR_DL_CRC", 163),
    _field("NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY", 161),
    _field("NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY", 162),
)
# Row remapping (corrected rows, uncorrected rows, pending, failure) and pages pending retirement:
# nvmlDeviceGetRemappedRows and nvmlDeviceGetRetiredPagesPendingStatus, read in the tick's batch.
FI_REMAPPED = (
    _field("NVML_FI_DEV_REMAPPED_COR", 142),
    _field("NVML_FI_DEV_REMAPPED_UNC", 143),
    _field("NVML_FI_DEV_REMAPPED_PENDING", 144),
    _field("NVML_FI_DEV_REMAPPED_FAILURE", 145),
)
FI_RETIRED_PENDING = _field("NVML_FI_DEV_RETIRED_PENDING", 31)
FI_NVLINK_RX = _field("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX", 139)
FI_NVLINK_TX = _field("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX", 138)

Field = tuple[int, int]  # (field id, scope)

# A batch's answers are read from the array's bytes, laid out as pynvml's structures say: each
# attribute of a pynvml structure is read through its __getattribute__ (about 1 us; three a field).
_SLOT = pynvml.c_nvmlFieldValue_t
_SLOT_SIZE = ctypes.sizeof(_SLOT)
_TYPE_AT = _SLOT.valueType.offset
_TYPE_AND_RETURN = struct.Struct(f"=I{_SLOT.nvmlReturn.offset - _TYPE_AT - 4}xI")  # valueType, nvmlReturn
_VALUE_AT = _SLOT.value.offset
# Each NVML_VALUE_TYPE's member of nvmlValue_t, by its C type (nvml.h: double, unsigned int, unsigned long,
# unsigned long long, signed long long, signed int, unsigned short), in struct's native codes. Fixed by the
# driver's ABI, not taken from pynvml's union: bindings before 12.570 lack its usVal member.
_VALUES = {kind: struct.Struct("@" + code) for kind, code in enumerate("dILQqiH")}
# The same members in struct's standard sizes (a batch's values are unpacked together, without padding):
# unsigned long is 4 bytes there, 8 natively on 64-bit Linux.
_STANDARD = {
    kind: code if struct.calcsize("=" + code) == value.size else {4: "I", 8: "Q"}[value.size]
    for kind, (code, value) in enumerate(zip("dILQqiH", _VALUES.values(), strict=True))
}


class FieldBatch:
    """A fixed list of fields read in one nvmlDeviceGetFieldValues; the array is kept between reads
    (pynvml builds a new one, field by field, each call)."""

    def __init__(self, fields: Sequence[Field]) -> None:
        self.fields = tuple(fields)
        self._array = (pynvml.c_nvmlFieldValue_t * len(self.fields))()
        for slot, (field_id, scope) in zip(self._array, self.fields, strict=True):
            slot.fieldId, slot.scopeId = field_id, scope
        # Every slot's value type and return code, unpacked at once; and, for the last ones seen (a
        # field's type does not change from one read to the next), the values of the slots that
        # answered, unpacked at once: two calls a read, not two a field.
        self._heads = struct.Struct("=" + "".join(f"{_TYPE_AT}xII{_SLOT_SIZE - _TYPE_AT - 8}x" for _ in self.fields))
        self._last_heads: tuple[int, ...] = ()
        self._answering: tuple[Field, ...] = ()
        self._values = struct.Struct("")
        self._last_answers: tuple[float | int, ...] = ()  # the answering slots' values last read
        self._last: dict[Field, float | int | None] | None = None  # the values last read gave

    def read(self, gateway: Gateway, handle: Handle) -> dict[Field, float | int | None] | None:
        """Each field's value (None where it has none); None when the call itself failed. Slots that
        answer as they did last read give last read's dict (its caller must not change it)."""
        if not self.fields:
            return {}
        if gateway.call(_field_values, handle, self._array) is None:
            return None
        raw = bytes(self._array)
        heads = self._heads.unpack(raw)
        if heads != self._last_heads:
            self._decide(heads)
        answers = self._values.unpack(raw)
        if answers == self._last_answers and self._last is not None:
            return self._last
        values: dict[Field, float | int | None] = dict.fromkeys(self.fields)
        values.update(zip(self._answering, answers, strict=True))
        self._last_answers, self._last = answers, values
        return values

    def _decide(self, heads: tuple[int, ...]) -> None:
        """The slots that answered with a value of a known type, and the layout of their values."""
        codes, answering = ["="], []
        for at, field in enumerate(self.fields):
            value_type, code = heads[2 * at], heads[2 * at + 1]
            value = _VALUES.get(value_type) if code == pynvml.NVML_SUCCESS else None
            if value is None:
                codes.append(f"{_SLOT_SIZE}x")
            else:
                codes.append(f"{_VALUE_AT}x{_STANDARD[value_type]}{_SLOT_SIZE - _VALUE_AT - value.size}x")
                answering.append(field)
        self._last_heads, self._answering, self._values = heads, tuple(answering), struct.Struct("".join(codes))
        self._last = None  # other slots answer: the values are made again


def _field_values(handle: Handle, array: Any) -> bool:
    fn = symbol("nvmlDeviceGetFieldValues")
    if fn is None:
        # No private lookup in this pynvml: its public call, each field by id and scope, copied in.
        values = public("nvmlDeviceGetFieldValues")(handle, [(slot.fieldId, slot.scopeId) for slot in array])
        for slot, value in zip(array, values, strict=True):
            ctypes.memmove(ctypes.byref(slot), ctypes.byref(value), ctypes.sizeof(slot))
        return True
    checked(int(fn(handle, ctypes.c_int(len(array)), array)))
    return True


_field_values.__name__ = "nvmlDeviceGetFieldValues"


def one_field(handle: Handle, scope: int, field_id: int) -> float | int | None:
    """One field on its own (a link's, or a field asked again after its classic call failed); raises
    NVMLError with the entry's code when the driver refuses it, so that the gateway maps it."""
    array = (pynvml.c_nvmlFieldValue_t * 1)()
    array[0].fieldId, array[0].scopeId = field_id, scope
    _field_values(handle, array)
    checked(array[0].nvmlReturn)
    return _field_value(array[0])


one_field.__name__ = "nvmlDeviceGetFieldValues"


def _field_value(slot: Any) -> float | int | None:
    return _decoded(ctypes.string_at(ctypes.addressof(slot), _SLOT_SIZE), 0)


def _decoded(raw: bytes, at: int) -> float | int | None:
    """The value of the field slot at byte ``at`` of ``raw``; None where the driver gave none."""
    value_type, code = _TYPE_AND_RETURN.unpack_from(raw, at + _TYPE_AT)
    value = _VALUES.get(value_type) if code == pynvml.NVML_SUCCESS else None
    return None if value is None else value.unpack_from(raw, at + _VALUE_AT)[0]


def integer(value: float | int | None) -> int | None:
    return None if value is None else int(value)


def remapped(values: dict[Field, float | int | None]) -> tuple[int, int, int, int] | None:
    """The four row-remapping figures, or None unless all four are known."""
    found = [values.get((field_id, 0)) for field_id in FI_REMAPPED]
    if any(value is None for value in found):
        return None
    corrected, uncorrected, pending, failure = (int(value) for value in found if value is not None)
    return corrected, uncorrected, pending, failure


def temperature(values: dict[Field, float | int | None]) -> float | None:
    # A GPU without a memory sensor answers NOT_SUPPORTED (None) in the field; 0 °C is no reading either.
    value = values.get((FI_MEMORY_TEMP, 0))
    return float(value) if value else None
