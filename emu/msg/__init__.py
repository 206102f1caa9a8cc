"""emu's messages: `types` (a class per message), `catalogue` (every
message's fields and who sends it to whom) and `codec` (msgpack bytes,
validated against the catalogue), used by a transport that carries bytes.

Nothing here imports any other part of emu: every actor depends on it, it
depends on no actor.
"""
