"""Gone: the messages are in `emu.msg`. Only `set_frames` is left, a no-op,
for `emu.rm.scheduler.shortcuts` until its call to it is removed; then
delete this module."""


def set_frames(on: bool) -> bool:
    """No-op: in one process messages are always handed over as objects."""
    return True
