"""The generators SLS draws SYNTH workloads with, bit for bit in pure Python.

- `JavaRandom` is `java.util.Random` (commons-math3's `JDKRandomGenerator`
  adds nothing to it): the 48-bit linear congruential generator and the
  `nextInt`/`nextLong`/`nextDouble`/`nextGaussian` algorithms the JDK
  specifies. SynthTraceJobProducer draws job shapes from one, and
  AMDefinitionSynth picks each task's host from another.
- `Well19937c` is commons-math3 3.6.1's WELL generator (the version Hadoop
  3.4.2's hadoop-sls depends on), with `BitsStreamGenerator`'s `nextDouble`
  and Box-Muller `nextGaussian`: `LogNormalDistribution` and
  `NormalDistribution` sample through one each.

Integers are kept as Python ints and masked to Java's widths where Java
would overflow. `Well19937c.next_gaussian` calls the platform's `log`,
`cos` and `sin`, where commons-math calls its own `FastMath`; the two agree
to the last bit for about 999 inputs in 1000 and otherwise differ by one
unit in the last place, which moves a SYNTH value only when that value
then rounds (to a millisecond, MB, count or vcore) within one ulp of a
half, far rarer than anything a workload of millions of draws reaches.
"""

from __future__ import annotations

import math

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK48 = (1 << 48) - 1
_MASK32 = 0xFFFFFFFF
_INT_MIN = -(1 << 31)
_DOUBLE_UNIT = 2.0**-53
_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1


def to_int(value: int) -> int:
    """Java's `(int)` of an integer: its low 32 bits, signed."""
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def to_long(value: int) -> int:
    """Java's `(long)` of an integer: its low 64 bits, signed."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value & (1 << 63) else value


def java_round(x: float) -> int:
    """`Math.round(double)`: floor(x + 1/2) computed exactly (so
    0.49999999999999994 rounds to 0), NaN to 0, saturating at the long
    range."""
    if math.isnan(x):
        return 0
    if x >= 9.223372036854775807e18:
        return _LONG_MAX
    if x <= -9.223372036854775808e18:
        return _LONG_MIN
    f = math.floor(x)
    return int(f) + (1 if x - f >= 0.5 else 0)


class JavaRandom:
    """`java.util.Random`, the same seed giving the same sequence as the JDK's."""

    __slots__ = ("_have_next_gaussian", "_next_gaussian", "_seed")

    def __init__(self, seed: int) -> None:
        self._seed = 0
        self._next_gaussian = 0.0
        self._have_next_gaussian = False
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        """`setSeed(long)`: scrambles the seed and forgets a pending Gaussian."""
        self._seed = (seed ^ _MULTIPLIER) & _MASK48
        self._have_next_gaussian = False

    def next(self, bits: int) -> int:
        """`next(bits)`: the top `bits` of the next 48-bit state, as a Java int."""
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK48
        return to_int(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """`nextInt()`, or `nextInt(bound)` uniform in [0, bound) with the
        JDK's rejection of the biased top of the range."""
        if bound is None:
            return self.next(32)
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        r = u % bound
        while to_int(u - r + m) < 0:
            u = self.next(31)
            r = u % bound
        return r

    def next_long(self) -> int:
        return to_long((self.next(32) << 32) + self.next(32))

    def next_double(self) -> float:
        """`nextDouble`: 26 bits then 27, as two `next` calls (inlined)."""
        s1 = (self._seed * _MULTIPLIER + _ADDEND) & _MASK48
        s2 = (s1 * _MULTIPLIER + _ADDEND) & _MASK48
        self._seed = s2
        return (((s1 >> 22) << 27) + (s2 >> 21)) * _DOUBLE_UNIT

    def next_gaussian(self) -> float:
        """The JDK's polar method (`StrictMath.log`/`sqrt`)."""
        if self._have_next_gaussian:
            self._have_next_gaussian = False
            return self._next_gaussian
        while True:
            v1 = 2 * self.next_double() - 1
            v2 = 2 * self.next_double() - 1
            s = v1 * v1 + v2 * v2
            if 0 < s < 1:
                break
        multiplier = math.sqrt(-2 * math.log(s) / s)
        self._next_gaussian = v2 * multiplier
        self._have_next_gaussian = True
        return v1 * multiplier


_W = 624
_M1, _M2, _M3 = 70, 179, 449
_I_RM1 = [(j + _W - 1) % _W for j in range(_W)]
_I_RM2 = [(j + _W - 2) % _W for j in range(_W)]
_I1 = [(j + _M1) % _W for j in range(_W)]
_I2 = [(j + _M2) % _W for j in range(_W)]
_I3 = [(j + _M3) % _W for j in range(_W)]


class Well19937c:
    """commons-math3's `Well19937c` seeded with a long, as
    `AbstractRealDistribution.reseedRandomGenerator` seeds it. The pool
    holds the 624 ints unsigned."""

    __slots__ = ("_index", "_next_gaussian", "_v")

    def __init__(self, seed: int) -> None:
        self._v = [0] * _W
        self._index = 0
        self._next_gaussian = math.nan
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        """`setSeed(long)`: the long's two halves, the rest of the pool
        filled by Knuth's multiplier, as `AbstractWell.setSeed(int[])` does."""
        v = self._v
        v[0] = (seed >> 32) & _MASK32
        v[1] = seed & _MASK32
        for i in range(2, _W):
            prev = to_int(v[i - 2])
            v[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & _MASK32
        self._index = 0
        self._next_gaussian = math.nan

    def _next32(self) -> int:
        """One step of the recurrence and the tempering: 32 bits, unsigned."""
        v = self._v
        index = self._index
        rm1 = _I_RM1[index]
        rm2 = _I_RM2[index]
        v0 = v[index]
        vm1 = v[_I1[index]]
        vm2 = v[_I2[index]]
        vm3 = v[_I3[index]]
        z0 = (0x80000000 & v[rm1]) ^ (0x7FFFFFFF & v[rm2])
        z1 = (v0 ^ ((v0 << 25) & _MASK32)) ^ (vm1 ^ (vm1 >> 27))
        z2 = (vm2 >> 9) ^ (vm3 ^ (vm3 >> 1))
        z3 = z1 ^ z2
        z4 = z0 ^ (z1 ^ ((z1 << 9) & _MASK32)) ^ (z2 ^ ((z2 << 21) & _MASK32)) ^ (z3 ^ (z3 >> 21))
        v[index] = z3
        v[rm1] = z4
        v[rm2] &= 0x80000000
        self._index = rm1
        z4 ^= (z4 << 7) & 0xE46E1700
        return z4 ^ ((z4 << 15) & 0x9B868000)

    def next(self, bits: int) -> int:
        """`next(bits)`: the top `bits` of the next 32, as a Java int."""
        return to_int(self._next32() >> (32 - bits))

    def next_double(self) -> float:
        """`BitsStreamGenerator.nextDouble`: 52 random bits."""
        high = self._next32() >> 6
        return ((high << 26) | (self._next32() >> 6)) * 2.0**-52

    def next_gaussian(self) -> float:
        """`BitsStreamGenerator.nextGaussian`: Box-Muller, one pair at a time."""
        if not math.isnan(self._next_gaussian):
            value = self._next_gaussian
            self._next_gaussian = math.nan
            return value
        x = self.next_double()
        y = self.next_double()
        alpha = 2 * math.pi * x
        r = math.sqrt(-2 * math.log(y)) if y > 0 else math.inf  # Java's log(0) is -inf
        self._next_gaussian = r * math.sin(alpha)
        return r * math.cos(alpha)
