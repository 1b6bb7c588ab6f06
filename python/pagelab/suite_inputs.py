"""The real-program suite's inputs, generated from a seed (nothing is downloaded): the
same name, size and seed give the same bytes on any machine and Python 3.9+ (only
``random.Random(seed).getrandbits`` and ``random()`` are used, whose streams Python
keeps stable). Each generator returns bytes; ``RECIPES`` maps a recipe's name to it.

- ``mixed``: the compressors' input, SPEC 164.gzip's five kinds of data in equal parts:
  a web-server log, a smooth 8-bit image with noise, machine-code-like binary records,
  random bytes (incompressible) and a tar-like archive of text files with 512-byte headers;
- ``c-source``: a self-contained C translation unit (no #include) of ``size`` bytes: structs,
  global tables, functions with loops, switches and calls between them;
- ``sql``: a SQLite script: two tables filled in one transaction, an index, then joins,
  GROUP BY, ORDER BY, a LIKE scan and an UPDATE; ``size`` is the number of orders;
- ``lines``: text lines for sort(1): a word, a number and a word, ``size`` bytes."""

from __future__ import annotations

import random
from typing import Callable, Dict, List

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu page frame swap fault token cluster "
         "gang migrate lifetime dead list predict valgrind kernel memory cache disk sector block inode").split()


def _pick(rng: random.Random, seq):
    return seq[int(rng.random() * len(seq))]


def _zipf_index(rng: random.Random, n: int) -> int:
    """An index in [0, n) skewed to small values (about Zipf 1)."""
    return min(n - 1, int(n ** rng.random()) - 1)


def web_log(size: int, rng: random.Random) -> bytes:
    paths = [f"/{_pick(rng, WORDS)}/{_pick(rng, WORDS)}-{i}.html" for i in range(2000)]
    agents = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/7.88.1", "Wget/1.21", "Googlebot/2.1",
              "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"]
    out: List[str] = []
    total, t = 0, 1_700_000_000
    while total < size:
        t += int(rng.random() * 3)
        ip = ".".join(str(int(rng.random() * 256)) for _ in range(4))
        line = (f'{ip} - - [{t}] "GET {paths[_zipf_index(rng, len(paths))]} HTTP/1.1" '
                f'{_pick(rng, (200, 200, 200, 304, 404))} {int(rng.random() * 50000)} "{_pick(rng, agents)}"\n')
        out.append(line)
        total += len(line)
    return "".join(out).encode()[:size]


def image(size: int, rng: random.Random) -> bytes:
    width = 1024
    rows = []
    a, b = 0.11 + rng.random() * 0.1, 0.07 + rng.random() * 0.1
    for y in range(size // width + 1):
        noise = rng.getrandbits(8 * width).to_bytes(width, "little")
        rows.append(bytes((int(x * a + y * b) + (noise[x] & 7)) & 0xFF for x in range(width)))
    return b"".join(rows)[:size]


def binary(size: int, rng: random.Random) -> bytes:
    opcodes = [rng.getrandbits(8) for _ in range(40)]
    out = bytearray()
    while len(out) < size:
        out.append(opcodes[_zipf_index(rng, len(opcodes))])
        kind = rng.random()
        if kind < 0.5:
            out += (int(rng.random() * 64)).to_bytes(4, "little")
        elif kind < 0.8:
            out += (0x400000 + 16 * int(rng.random() * 4096)).to_bytes(8, "little")
    return bytes(out[:size])


def random_bytes(size: int, rng: random.Random) -> bytes:
    return rng.getrandbits(8 * size).to_bytes(size, "little") if size else b""


def tarball(size: int, rng: random.Random) -> bytes:
    out = bytearray()
    i = 0
    while len(out) < size:
        body = " ".join(_pick(rng, WORDS) for _ in range(int(200 + rng.random() * 2000))).encode() + b"\n"
        header = f"file{i:05d}.txt".encode().ljust(100, b"\0") + b"0000644\0" + f"{len(body):011o}\0".encode()
        out += header.ljust(512, b"\0") + body + b"\0" * (-len(body) % 512)
        i += 1
    return bytes(out[:size])


def mixed(size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    part = size // 5
    parts = [web_log(part, rng), image(part, rng), binary(part, rng), random_bytes(part, rng),
             tarball(size - 4 * part, rng)]
    return b"".join(parts)


def c_source(size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    out = ["typedef unsigned long u64;\n",
           "struct node { u64 key; double weight; struct node *next; int tag[8]; };\n"]
    n = 0
    total = sum(len(s) for s in out)
    while total < size:
        k = int(4 + rng.random() * 12)
        callee = f"f{int(rng.random() * n)}" if n else None
        body = [f"static double table{n}[{16 * k}];\n",
                f"double f{n}(struct node *p, int n, double x) {{\n",
                "  double acc = x; int i, j;\n",
                f"  for (i = 0; i < n; i++) {{\n    table{n}[i % {16 * k}] += acc * {rng.random():.4f};\n"]
        for j in range(k):
            op = _pick(rng, ("+", "-", "*"))
            body.append(f"    acc = acc {op} (p ? p->weight : {j}.5) {op} table{n}[(i + {j}) % {16 * k}];\n")
        body.append("    switch (i & 7) {\n")
        for c in range(int(2 + rng.random() * 6)):
            body.append(f"      case {c}: acc += {c * 3 + 1}; if (p) p->tag[{c}] ^= i; break;\n")
        body.append("      default: acc *= 0.5;\n    }\n")
        if callee:
            body.append(f"    if (acc > {int(rng.random() * 1000)}) acc = {callee}(p ? p->next : 0, n / 2, acc);\n")
        body.append("  }\n  for (j = 0; j < n; j++) acc -= j * 0.25;\n  return acc;\n}\n")
        text = "".join(body)
        out.append(text)
        total += len(text)
        n += 1
    out.append(f"double suite_main(void) {{ return f{n - 1}(0, 100, 1.0); }}\n")
    return "".join(out).encode()


def sql(orders: int, seed: int) -> bytes:
    rng = random.Random(seed)
    customers = max(10, orders // 10)
    lines = ["PRAGMA cache_size = -65536;",
             "CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, city TEXT, since INTEGER);",
             "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER, item TEXT, qty INTEGER, "
             "price REAL, day INTEGER);",
             "BEGIN;"]
    for c in range(customers):
        lines.append(f"INSERT INTO customer VALUES ({c}, '{_pick(rng, WORDS)} {_pick(rng, WORDS)}', "
                     f"'{_pick(rng, WORDS)}', {int(rng.random() * 3650)});")
    for o in range(orders):
        lines.append(f"INSERT INTO orders VALUES ({o}, {_zipf_index(rng, customers)}, '{_pick(rng, WORDS)}', "
                     f"{1 + int(rng.random() * 9)}, {rng.random() * 100:.2f}, {int(rng.random() * 365)});")
    lines += ["COMMIT;",
              "CREATE INDEX orders_customer ON orders(customer);",
              "SELECT c.city, count(*), sum(o.qty * o.price) FROM orders o JOIN customer c ON c.id = o.customer "
              "GROUP BY c.city ORDER BY 3 DESC;",
              "SELECT item, avg(price), max(qty) FROM orders GROUP BY item ORDER BY item;",
              "SELECT name FROM customer WHERE name LIKE '%an%' ORDER BY since LIMIT 20;",
              "SELECT o.day, count(DISTINCT o.customer) FROM orders o GROUP BY o.day ORDER BY o.day;",
              "UPDATE orders SET price = price * 1.1 WHERE day % 7 = 0;",
              "SELECT customer, sum(price) AS s FROM orders GROUP BY customer ORDER BY s DESC LIMIT 10;"]
    return ("\n".join(lines) + "\n").encode()


def lines(size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    out, total = [], 0
    while total < size:
        line = f"{_pick(rng, WORDS)} {int(rng.random() * 10**9)} {_pick(rng, WORDS)}\n"
        out.append(line)
        total += len(line)
    return "".join(out).encode()


RECIPES: Dict[str, Callable[[int, int], bytes]] = {
    "mixed": mixed, "c-source": c_source, "sql": sql, "lines": lines,
}
