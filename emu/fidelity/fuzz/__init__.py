"""The differential fuzzer: random valid Hadoop inputs replayed under emu's
port and Hadoop's own scheduler, every divergence found, shrunk and counted
(`python -m emu.fidelity.fuzz`, `make fidelity-fuzz`)."""
