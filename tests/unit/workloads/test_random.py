"""Known answers for NURand, the C constants, last names, the middle customer and strings."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from oltplab.workloads.tpcc import random as tr


class Stub:
    """A generator whose randint returns preset values and records the ranges asked for."""

    def __init__(self, values):
        self.values = list(values)
        self.calls = []

    def randint(self, a, b):
        self.calls.append((a, b))
        value = self.values.pop(0)
        assert a <= value <= b
        return value


def test_syllables_and_known_last_names():
    assert tr.SYLLABLES == ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY",
                            "ATION", "EING")
    assert tr.last_name(0) == "BARBARBAR"
    assert tr.last_name(371) == "PRICALLYOUGHT"
    assert tr.last_name(40) == "BARPRESBAR"
    assert tr.last_name(999) == "EINGEINGEING"
    assert max(len(tr.last_name(n)) for n in range(1000)) == 15
    assert len({tr.last_name(n) for n in range(1000)}) == 1000


@pytest.mark.parametrize("n", [-1, 1000])
def test_last_name_range(n):
    with pytest.raises(ValueError):
        tr.last_name(n)


def test_nurand_hand_computed():
    # (200 | 37) = 237; 237 + 123 = 360; 360 % 1000 + 0 = 360
    rng = Stub([200, 37])
    assert tr.nurand(rng, 255, 0, 999, 123) == 360
    assert rng.calls == [(0, 255), (0, 999)]
    # (8191 | 100000) = 106495; (106495 + 5000) % 100000 + 1 = 11496
    rng = Stub([8191, 100000])
    assert tr.nurand(rng, 8191, 1, 100000, 5000) == 11496
    assert rng.calls == [(0, 8191), (1, 100000)]
    # (1023 | 3000) = 3071; (3071 + 0) % 3000 + 1 = 72
    assert tr.nurand(Stub([1023, 3000]), 1023, 1, 3000, 0) == 72


def test_nurand_is_not_the_precedence_trap():
    # a | b + C would give 200 | 160 = 232
    assert tr.nurand(Stub([200, 37]), 255, 0, 999, 123) != 200 | (37 + 123)


def test_nurand_stays_in_range_and_is_skewed():
    rng = random.Random(7)
    values = [tr.nurand(rng, 255, 0, 999, 42) for _ in range(50_000)]
    assert min(values) >= 0 and max(values) <= 999
    counts = Counter(values)
    # Uniform would put ~50 on each value; NURand concentrates on a few.
    assert counts.most_common(1)[0][1] > 150


@pytest.mark.parametrize("delta,ok", [(64, False), (65, True), (95, True), (96, False),
                                      (97, True), (111, True), (112, False), (113, True),
                                      (119, True), (120, False), (0, False)])
def test_c_delta_rule(delta, ok):
    assert tr.c_delta_ok(100 + delta, 100) is ok
    assert tr.c_delta_ok(200 - delta, 200) is ok


def test_pick_c_run_skips_invalid_candidates():
    # deltas 0, 96, 112, 64, 120 are refused; 65 is taken
    rng = Stub([100, 196, 212, 164, 220, 165])
    assert tr.pick_c_run(rng, 100) == 165
    assert all(call == (0, 255) for call in rng.calls)


def test_pick_c_run_valid_for_every_c_load():
    rng = random.Random(3)
    for c_load in range(256):
        c_run = tr.pick_c_run(rng, c_load)
        assert 0 <= c_run <= 255
        assert 65 <= abs(c_run - c_load) <= 119
        assert abs(c_run - c_load) not in (96, 112)


def test_load_constants_ranges():
    rng = random.Random(11)
    for _ in range(200):
        c_last, c_id, c_ol_i_id = tr.load_constants(rng)
        assert 0 <= c_last <= 255 and 0 <= c_id <= 1023 and 0 <= c_ol_i_id <= 8191


@pytest.mark.parametrize("n,index", [(1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (6, 2), (7, 3)])
def test_middle_index(n, index):
    assert tr.middle_index(n) == index


def test_middle_index_needs_a_customer():
    with pytest.raises(ValueError):
        tr.middle_index(0)


def test_cents():
    assert tr.cents(1) == "0.01"
    assert tr.cents(999_999) == "9999.99"
    assert tr.cents(-1000) == "-10.00"
    assert tr.cents(30_000_00) == "30000.00"


def test_uniform_offsets():
    rng = random.Random(5)
    values = tr.uniform_offsets(rng, 11, 110_000)
    assert len(values) == 110_000
    counts = Counter(values)
    assert sorted(counts) == list(range(11))
    assert all(9_000 < c < 11_000 for c in counts.values())
    assert tr.uniform_offsets(random.Random(5), 11, 100) == values[:100]


def test_alphabet_has_128_symbols_with_alphanumerics():
    assert len(set(tr.ALPHABET)) == len(tr.ALPHABET) == 128
    assert set("abcdefghijklmnopqrstuvwxyz"
               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") <= set(tr.ALPHABET)
    # nothing that COPY's text format would need to escape
    assert not set("\\\t\n\r ") & set(tr.ALPHABET)


def test_char_source_uses_every_symbol_evenly():
    source = tr.CharSource(random.Random(9), tr.ALPHABET, chunk=4096)
    text = "".join(source.take(n) for n in range(1, 700))  # crosses many refills
    counts = Counter(text)
    assert set(counts) == set(tr.ALPHABET)
    expected = len(text) / 128
    assert all(0.8 * expected < c < 1.2 * expected for c in counts.values())


def test_char_source_is_reproducible():
    a = tr.CharSource(random.Random(1), tr.LETTERS)
    b = tr.CharSource(random.Random(1), tr.LETTERS)
    assert a.take(5000) == b.take(5000)


def test_take_fields_places_separators():
    source = tr.CharSource(random.Random(2), tr.LETTERS)
    text = source.take_fields(10, 24, "\t")
    assert len(text) == 250
    fields = text.split("\t")
    assert fields[-1] == "" and len(fields) == 11
    assert all(len(f) == 24 and f.isalpha() for f in fields[:10])


def test_strings_kinds():
    s = tr.Strings(random.Random(4))
    for _ in range(200):
        a = s.astring(26, 50)
        assert 26 <= len(a) <= 50 and set(a) <= set(tr.ALPHABET)
        assert re.fullmatch(r"[0-9]{4}11111", s.zip())
        assert re.fullmatch(r"[0-9]{16}", s.nstring(16))
        assert re.fullmatch(r"[A-Za-z]{24}", s.letters_n(24))
        marked = s.original(a)
        assert len(marked) == len(a) and "ORIGINAL" in marked


def test_fast_bytes_source_gives_the_same_kinds_of_strings():
    """Unseeded builds take their characters' random bytes from ssl.RAND_bytes."""
    import ssl

    s = tr.Strings(random.Random(8), ssl.RAND_bytes)
    text = "".join(s.astring(300, 500) for _ in range(100))
    assert set(text) == set(tr.ALPHABET)
    fields = s.letters.take_fields(1000, 24, "\t").split("\t")[:-1]
    assert len(fields) == 1000 and all(re.fullmatch(r"[A-Za-z]{24}", f) for f in fields)
    assert re.fullmatch(r"[0-9]{4}11111", s.zip())


def test_order_rows_fixed_width_lines():
    from oltplab.workloads.tpcc import population as pop

    rng = random.Random(21)
    orders, new_order, lines, n_lines = pop.order_rows(12, 4, rng, tr.Strings(rng),
                                                       "2026-01-02 03:04:05")
    rows = [r.split("\t") for r in lines.decode("utf-8").split("\n")[:-1]]
    assert len(rows) == n_lines == sum(int(r.split("\t")[6]) for r in orders.splitlines())
    seen = Counter()
    for r in rows:
        o_id, d_id, w_id, number, i_id, supply, delivery, qty, amount, dist = r
        assert (int(d_id), int(w_id), int(supply), qty) == (4, 12, 12, "5")
        assert 1 <= int(i_id) <= 100_000 and re.fullmatch(r"[A-Za-z]{24}", dist)
        if int(o_id) < 2101:
            assert delivery == "2026-01-02 03:04:05" and amount == "0.00"
        else:
            assert delivery == "\\N" and 0.01 <= float(amount) <= 9999.99
        seen[int(o_id)] += 1
        assert int(number) == seen[int(o_id)]
    assert sorted(seen) == list(range(1, 3001))
    assert len(new_order.splitlines()) == 900


def test_replace_all_redraws_each_occurrence():
    from oltplab.workloads.tpcc.population import _replace_all

    buf = bytearray(b"1\t000000\t2\t000000\t3\t")
    values = iter([b"\t100000\t", b"\t100000\t"])
    _replace_all(buf, b"\t000000\t", lambda: next(values))
    assert buf == bytearray(b"1\t100000\t2\t100000\t3\t")
