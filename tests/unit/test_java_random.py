"""emu's java.util.Random and commons-math3 Well19937c against numbers the
JDK 17 and commons-math3 3.6.1 printed for the same seeds."""

from __future__ import annotations

import math
import struct

from emu.scenario.java_random import JavaRandom, Well19937c, java_round


def _bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def test_next_int() -> None:
    r = JavaRandom(42)
    assert [r.next_int() for _ in range(3)] == [-1170105035, 234785527, -1360544799]


def test_next_int_bound_power_of_two_and_rejection() -> None:
    r = JavaRandom(-7)
    got = [r.next_int(10), r.next_int(1 << 20)]
    got += [r.next_int(1_500_000_000) for _ in range(3)]
    got.append(r.next_int(3))
    assert got == [2, 945288, 1445645590, 1119890478, 314447087, 0]


def test_next_long() -> None:
    r = JavaRandom(123456789012345)
    assert [r.next_long() for _ in range(3)] == [
        -6103178366825116599,
        -2507209739361777064,
        -2184844392376802456,
    ]


def test_next_double() -> None:
    r = JavaRandom(0)
    assert [_bits(r.next_double()) for _ in range(2)] == [4604759192054975113, 4597834257986432532]


def test_next_gaussian_pairs() -> None:
    r = JavaRandom(2)
    assert [_bits(r.next_gaussian()) for _ in range(3)] == [
        4598639711650637076,
        4602300021645439628,
        -4656122705005725586,
    ]


def test_set_seed_restarts() -> None:
    r = JavaRandom(5)
    r.next_int()
    r.set_seed(5)
    assert r.next_int() == -1157408321


def test_well19937c() -> None:
    w = Well19937c(-8029185836278581393)
    assert [w.next(32), w.next(32)] == [414754410, -2114705724]
    assert _bits(w.next_double()) == 4600807037706045788
    assert [_bits(w.next_gaussian()), _bits(w.next_gaussian())] == [
        4603057748423331708,
        4607509366733015933,
    ]
    w.set_seed(3)
    x = 0
    for _ in range(2000):
        x ^= w.next(32)
    assert x == 1889656533


def test_lognormal_sample_as_commons_math() -> None:
    """LogNormalDistribution(2.0, 0.5) reseeded with 77: exp(mu + sigma * n)."""
    w = Well19937c(77)
    got = [math.exp(2.0 + 0.5 * w.next_gaussian()) for _ in range(3)]
    assert got == [8.168230431941213, 5.230045324579146, 12.458440004789397]


def test_java_round() -> None:
    assert java_round(0.49999999999999994) == 0
    assert java_round(-2.5) == -2
    assert java_round(2.5) == 3
    assert java_round(4503599627370497.0) == 4503599627370497
    assert java_round(math.nan) == 0
    assert java_round(1e300) == 9223372036854775807
