"""A frozen sample copied with a few fields changed: every other field is the original's, as with
dataclasses.replace, whatever fields the class gains later."""

from __future__ import annotations

import dataclasses

import pytest

from gputop.core.frozen_copy import copier
from gputop.core.model import GpuSample, MigSample


@pytest.mark.parametrize("cls", [GpuSample, MigSample])
def test_a_copy_keeps_every_field_but_those_changed(cls: type) -> None:
    names = [field.name for field in dataclasses.fields(cls)]
    original = cls(**{name: object() for name in names})  # a value of its own in every field
    processes = object()
    copy = copier(cls, "processes")(original, processes)
    assert type(copy) is cls and copy is not original
    assert [getattr(copy, name) is getattr(original, name) for name in names] == [name != "processes" for name in names]
    assert copy.processes is processes
    assert copy == dataclasses.replace(original, processes=processes)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.processes = ()


def test_a_gpu_copied_with_its_lists_equals_the_one_replace_makes() -> None:
    gpu = GpuSample(index=3, name="H200", memory_used=5 << 30, power_draw=412.5, mig_mode=True)
    mig = MigSample(index=0, uuid="MIG-1", name="1g.18gb")
    copy = copier(GpuSample, "processes", "mig_devices")(gpu, (), (mig,))
    assert copy == dataclasses.replace(gpu, processes=(), mig_devices=(mig,))
    assert hash(copy) == hash(dataclasses.replace(gpu, processes=(), mig_devices=(mig,)))


def test_only_a_slotted_dataclass_without_post_init_and_only_its_fields() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            assert self.value >= 0

    with pytest.raises(TypeError):
        copier(Checked, "value")
    with pytest.raises(TypeError):
        copier(GpuSample, "no_such_field")


def test_a_record_made_from_every_field_in_order_equals_the_one_its_class_makes() -> None:
    from gputop.core.analysis.diagnosis.diagnoser import ProcessDiagnosis
    from gputop.core.frozen_copy import maker

    made = maker(ProcessDiagnosis)(612.5, True, 8 << 30)
    assert type(made) is ProcessDiagnosis
    assert made == ProcessDiagnosis(idle_seconds=612.5, idle=True, memory=8 << 30)
    assert (made.idle_seconds, made.idle, made.memory) == (612.5, True, 8 << 30)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.idle = False  # type: ignore[misc]


def test_a_record_made_by_keyword_equals_the_one_its_class_makes_defaults_included() -> None:
    from gputop.core.frozen_copy import keyword_maker

    make = keyword_maker(GpuSample)
    names = [field.name for field in dataclasses.fields(GpuSample)]
    values = {name: object() for name in names}  # a value of its own in every field
    made = make(**values)
    assert type(made) is GpuSample
    assert [getattr(made, name) is values[name] for name in names] == [True] * len(names)
    few = make(index=2, name="H200", power_draw=412.5)
    assert few == GpuSample(index=2, name="H200", power_draw=412.5)  # every field compared: the defaults too
    with pytest.raises(TypeError):
        make(index=2, no_such_field=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        make(name="H200")  # type: ignore[call-arg]  # index has no default
    with pytest.raises(dataclasses.FrozenInstanceError):
        few.name = "H100"  # type: ignore[misc]


def test_a_keyword_maker_only_for_fields_without_factories() -> None:
    from gputop.core.frozen_copy import keyword_maker

    @dataclasses.dataclass(frozen=True, slots=True)
    class Listed:
        items: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError):
        keyword_maker(Listed)
