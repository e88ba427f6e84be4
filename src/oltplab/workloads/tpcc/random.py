"""Random helpers of the TPC-C-derived workload: NURand, C constants, last names and strings.

Everything here is pure: the caller passes the random generator (``random.Random`` or anything
with the same ``randint``/``randbytes`` methods), so results are reproducible from a seed and the
arithmetic has unit tests with known answers.

Clauses: 2.1.4 (random within [x..y], a-strings, n-strings), 2.1.6 (NURand and the constant C),
2.1.6.1 (the C-delta rule for C_LAST), 4.3.2.3 (last-name syllables), 4.3.2.7 (zip codes).
"""

from __future__ import annotations

SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")

#: The A of NURand for each field [2.1.6].
A_C_LAST = 255
A_C_ID = 1023
A_OL_I_ID = 8191

#: Characters of a-strings [2.1.4]: at least 128 distinct symbols including a-z, A-Z and 0-9.
#: The 62 alphanumerics, the 31 ASCII punctuation marks other than the backslash (the escape
#: of COPY's text format), and 35 Latin-1 letters (two bytes each in UTF-8, so a-strings take
#: about 1.27 bytes per character). No whitespace: no value needs escaping in COPY text.
ALPHABET = (
    "0123456789"
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    "abcdefghijklmnopqrstuvwxyz"
    "!\"#$%&'()*+,-./:;<=>?@[]^_`{|}~"
    "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâã"
)
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"

assert len(ALPHABET) == 128 == len(set(ALPHABET)) and "\\" not in ALPHABET


def last_name(n: int) -> str:
    """C_LAST for a number 0..999: three syllables, one per decimal digit [4.3.2.3]."""
    if not 0 <= n <= 999:
        raise ValueError(f"last-name number {n} is outside 0..999")
    return SYLLABLES[n // 100] + SYLLABLES[(n // 10) % 10] + SYLLABLES[n % 10]


def nurand(rng, A: int, x: int, y: int, C: int) -> int:
    """NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x  [2.1.6].

    Draws ``rng.randint(0, A)`` first, then ``rng.randint(x, y)``.
    """
    return (((rng.randint(0, A) | rng.randint(x, y)) + C) % (y - x + 1)) + x


def c_delta_ok(c_run: int, c_load: int) -> bool:
    """The C-delta rule [2.1.6.1]: |C_RUN - C_LOAD| in 65..119, but neither 96 nor 112."""
    delta = abs(c_run - c_load)
    return 65 <= delta <= 119 and delta not in (96, 112)


def pick_c_run(rng, c_load: int) -> int:
    """A run-time C for C_LAST, uniform over the values 0..255 that satisfy the C-delta rule."""
    if not 0 <= c_load <= A_C_LAST:
        raise ValueError(f"C_LOAD {c_load} is outside 0..{A_C_LAST}")
    while True:
        c = rng.randint(0, A_C_LAST)
        if c_delta_ok(c, c_load):
            return c


def load_constants(rng) -> tuple[int, int, int]:
    """The C constants drawn at load time (C_LAST, C_ID, OL_I_ID) [2.1.6, 4.3.2.3].

    Only C_LAST's is used by the loader; all three are recorded with the schema.
    """
    return rng.randint(0, A_C_LAST), rng.randint(0, A_C_ID), rng.randint(0, A_OL_I_ID)


def middle_index(n: int) -> int:
    """0-based index of the customer taken from n customers sorted by C_FIRST [2.5.2.2].

    The row at position ceil(n / 2) (1-based): n = 1 -> 0, 2 -> 0, 3 -> 1, 4 -> 1, 5 -> 2.
    """
    if n < 1:
        raise ValueError("no customer matches the last name")
    return (n + 1) // 2 - 1


def cents(value: int) -> str:
    """An amount in cents as exact decimal text: 1 -> '0.01', 999999 -> '9999.99'."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    return f"{sign}{value // 100}.{value % 100:02d}"


def uniform_offsets(rng, k: int, n: int) -> bytes:
    """n independent values uniform in 0..k-1 (k <= 256), as bytes: iterate to get ints.

    Random bytes at or above the largest multiple of k are dropped, so there is no modulo bias.
    """
    if not 1 <= k <= 256:
        raise ValueError(f"k={k} is outside 1..256")
    table = bytes(b % k for b in range(256))
    drop = bytes(range(256 - 256 % k, 256))
    out = b""
    while len(out) < n:
        out += rng.randbytes(n - len(out) + n // 8 + 16).translate(table, drop)
    return out[:n]


def _byte_table(symbols: str) -> bytes:
    """A 256-entry ``bytes.translate`` table mapping byte b to symbol b % len(symbols).

    Used on bytes below the largest multiple of len(symbols), so every symbol is equally likely.
    """
    return bytes(symbols[b % len(symbols)].encode("latin-1")[0] for b in range(256))


class CharSource:
    """Fresh, independent random characters from one symbol set, served as slices of big buffers.

    Each character is used once: the data does not compress better than random text would.
    Buffers are random bytes mapped through a translation table; bytes that would bias the
    mapping are dropped first. The bytes come from ``randbytes(n)``: by default the generator's
    own (reproducible from its seed); ``ssl.RAND_bytes`` is an order of magnitude faster when
    reproducibility is not needed.
    """

    def __init__(self, rng, symbols: str, chunk: int = 1 << 20, randbytes=None):
        if len(symbols) > 256:
            raise ValueError("at most 256 symbols")
        self._randbytes = randbytes or rng.randbytes
        self._chunk = chunk
        self._table = _byte_table(symbols)
        keep = 256 - 256 % len(symbols)
        self._drop = bytes(range(keep, 256))
        self._buf = ""
        self._pos = 0

    def _fresh(self, n: int) -> bytearray:
        """n new symbols as their Latin-1 codes."""
        out = bytearray()
        while len(out) < n:
            want = n - len(out)
            draw = want if not self._drop else want * 256 // (256 - len(self._drop)) + 64
            out += self._randbytes(draw).translate(self._table, self._drop)
        del out[n:]
        return out

    def _refill(self, need: int) -> None:
        fresh = self._fresh(max(self._chunk, need)).decode("latin-1")
        self._buf = self._buf[self._pos:] + fresh
        self._pos = 0

    def take(self, n: int) -> str:
        """n fresh random characters."""
        if self._pos + n > len(self._buf):
            self._refill(n)
        p = self._pos
        self._pos = p + n
        return self._buf[p:p + n]

    def take_bytes(self, n: int) -> bytearray:
        """n fresh random symbols as bytes (their Latin-1 codes), bypassing the str buffer."""
        return self._fresh(n)

    def take_fields(self, count: int, width: int, sep: str) -> str:
        """count fields of width characters, each followed by sep (one ASCII character).

        One string for many fixed-width columns: S_DIST_01..10 of a stock row are 10 fields.
        """
        unit = width + 1
        raw = self._fresh(count * unit)
        raw[width::unit] = sep.encode("ascii") * count
        return raw.decode("latin-1")


class Strings:
    """The string kinds of the population rules [2.1.4, 4.3.2.2, 4.3.2.7] from one generator."""

    def __init__(self, rng, randbytes=None):
        """``randbytes`` (default ``rng.randbytes``) supplies the characters' random bytes."""
        self.rng = rng
        self.alpha = CharSource(rng, ALPHABET, randbytes=randbytes)
        self.letters = CharSource(rng, LETTERS, randbytes=randbytes)
        self.digits = CharSource(rng, DIGITS, chunk=1 << 16, randbytes=randbytes)

    def astring(self, lo: int, hi: int) -> str:
        """a-string [lo..hi]: random length, characters from the 128-symbol ALPHABET."""
        return self.alpha.take(self.rng.randint(lo, hi))

    def nstring(self, n: int) -> str:
        """n-string of exactly n digits."""
        return self.digits.take(n)

    def letters_n(self, n: int) -> str:
        """'a-string of n letters' (S_DIST_xx, OL_DIST_INFO, the *_STATE columns)."""
        return self.letters.take(n)

    def zip(self) -> str:
        """Zip code: 4 random digits and '11111' [4.3.2.7]."""
        return self.digits.take(4) + "11111"

    def original(self, s: str) -> str:
        """s with 'ORIGINAL' at a random position (s has at least 8 characters) [4.3.3.1]."""
        pos = self.rng.randint(0, len(s) - 8)
        return s[:pos] + "ORIGINAL" + s[pos + 8:]
