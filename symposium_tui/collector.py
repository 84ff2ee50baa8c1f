"""The garbage collector held while the console script starts (standard library only).

`symposium_tui.start` holds it before handing a command line to the CLI; the console and `attach`
turn it back on after their first frame, every other command as soon as it is chosen.
"""

from __future__ import annotations

import gc

_held = False


def hold_collection() -> None:
    """No cyclic garbage collection while a command starts (`resume_collection` turns it back
    on). What the console imports and builds before its first frame is nearly all alive for the
    whole run: the collector's passes over it (a full one among them) freed next to nothing and
    took a fifth of the time to that frame."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def resume_collection() -> None:
    """Collection back on, if `hold_collection` turned it off (the console after its first frame,
    every other command as soon as it is chosen). What the start built is kept out of the
    collector's passes (`gc.freeze`): it lives as long as the process. The few thousand objects of
    start-up garbage among it (of ~50,000 for the console) stay too: freeing them would take a full
    collection, ~30 ms, at the moment the console is first drawn."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
