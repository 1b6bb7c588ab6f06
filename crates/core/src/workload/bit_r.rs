//! *bit-r* of token-ordered-lru.txt (section 3.1, Table 1: 2^25 entries, max MAD
//! 131.3 MB, "quickly acquiring memory allotments", section 3.3): the bit-reversal
//! permutation of the data reordering step of radix-2 FFTs, done the cache-optimal
//! way of the paper's reference [27] (Zhang and Zhang, "Cache-optimal methods for
//! bit-reversals", SC'99): blocking with a small buffer, the method of Carter and Gatlin
//! ("Towards an optimal bit-reversal permutation program", FOCS 1998, their COBRA),
//! here in place. The elements are `elem_bytes` wide (4 by default: 2^25 single
//! precision entries are the 128 MiB of Table 1's 131.3 MB).
//!
//! With n = 2^lgn elements and a tile width B = 2^q (`block`), an index i splits into
//! (a, b, c): its top q bits, its middle lgn - 2q bits, its low q bits; its bit reversal
//! is (rev c, rev b, rev a). So the bit reversal maps tile b = {(a, b, c)} (B rows of B
//! contiguous elements, the rows 2^(lgn-q) elements apart) onto tile rev b, transposed.
//! For each middle value b with b <= rev b, in increasing order of b:
//!
//! 1. copy tile b into the buffer, transposing its row index: T[rev a][c] = x[a, b, c]
//!    (read x, write T, element by element along the rows);
//! 2. if b < rev b: for each row c' of tile rev b and each element a' of it, swap
//!    x[c', rev b, a'] with T[a'][rev c'] (read x, read T, write x, write T): tile rev b
//!    gets its new contents and the buffer takes its old ones; then copy the buffer back
//!    into tile b, x[a, b, c] = T[rev a][c] (read T, write x);
//!    if b = rev b: write the buffer back transposed, x[c', b, a'] = T[a'][rev c'].
//!
//! The buffer is B^2 elements after the array. Each tile pair touches B rows of the array
//! on each side (the "block working set": 2B pages while a row is shorter than a page,
//! plus the buffer's). Tile b's rows share pages with those of the next tiles, so that
//! side walks the array in order; tile rev b's rows are far apart and come back only
//! after rev b has visited every other part of the array, so the program touches all of
//! its pages early (type 1) and, with less memory than the array, refaults a page once
//! per visit of B elements rather than once per element as the plain loop does. The
//! default B = 32 keeps a tile pair's 64 pages within the 64-entry data TLB of the
//! paper's Pentium II (reference [27] matches the blocking to the TLB).
//!
//! `method = naive` is the plain in-place loop (the `bitrev` workload's, with these
//! elements): for each i, j = rev i; if i < j, swap x[i] and x[j].

use super::emitter::{Emitter, Flow};
use super::layout::Layout;
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "bit-r of token-ordered LRU: cache-optimal blocked in-place bit-reversal (Carter-Gatlin COBRA with a B^2 buffer), type 1";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "4194304", "number of elements, a power of two >= 4 (the paper: 2^25)"),
    param("elem_bytes", "4", "bytes per element: 1, 2, 4, 8 or 16 (the paper's 131.3 MB for 2^25 entries: 4)"),
    param("block", "32", "tile width B, a power of two with B^2 <= n; the buffer holds B^2 elements (32: a tile pair's pages fit a 64-entry TLB)"),
    param("method", "cobra", "cobra (blocked with a buffer) or naive (swap x[i] and x[rev i] for i < rev i)"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 4, 1 << 40)?;
    if !n.is_power_of_two() {
        return Err(p.error(format!("parameter 'n': expected a power of two, got {n}")));
    }
    let elem = p.count("elem_bytes", 1, 16)?;
    if !elem.is_power_of_two() {
        return Err(p.error(format!("parameter 'elem_bytes': expected 1, 2, 4, 8 or 16, got {elem}")));
    }
    let method = p.choice("method", &["cobra", "naive"])?;
    let block = p.count("block", 1, 1 << 20)?;
    if !block.is_power_of_two() || block.checked_mul(block).is_none_or(|b2| b2 > n) {
        return Err(p.error(format!("parameter 'block': expected a power of two B with B^2 <= n = {n}, got {block}")));
    }
    let mut layout = Layout::new(page_size, p.what());
    let x = layout.bytes(n.checked_mul(elem).ok_or_else(|| p.error("parameter 'n': too large"))?)?;
    let lgn = n.trailing_zeros();
    if method == "naive" {
        return Ok(Plan::new(layout.span_pages(), None, move |e| naive(&mut Addresses { e, x, t: 0, elem }, lgn)));
    }
    let t = layout.bytes(block * block * elem)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| cobra(&mut Addresses { e, x, t, elem }, lgn, block.trailing_zeros())))
}

/// An element: of the array x, or of the buffer T.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    X(u64),
    T(u64),
}

/// What the permutation does to memory: the generator emits the addresses, a test
/// moves values.
trait Moves {
    /// Reads `from`, writes `to` with its value.
    fn copy(&mut self, from: At, to: At) -> Flow;
    /// Reads both, writes both with each other's value.
    fn swap(&mut self, a: At, b: At) -> Flow;
}

/// The generator's side: byte addresses of x's and T's elements.
struct Addresses<'e> {
    e: &'e mut Emitter,
    x: u64,
    t: u64,
    elem: u64,
}

impl Addresses<'_> {
    #[inline(always)]
    fn addr(&self, at: At) -> u64 {
        match at {
            At::X(i) => self.x + i * self.elem,
            At::T(i) => self.t + i * self.elem,
        }
    }
}

impl Moves for Addresses<'_> {
    #[inline(always)]
    fn copy(&mut self, from: At, to: At) -> Flow {
        self.e.read(self.addr(from))?;
        self.e.write(self.addr(to))
    }

    #[inline(always)]
    fn swap(&mut self, a: At, b: At) -> Flow {
        let (a, b) = (self.addr(a), self.addr(b));
        self.e.read(a)?;
        self.e.read(b)?;
        self.e.write(a)?;
        self.e.write(b)
    }
}

/// The `bits`-bit reversal of `v`.
#[inline(always)]
fn rev(v: u64, bits: u32) -> u64 {
    if bits == 0 {
        0
    } else {
        v.reverse_bits() >> (64 - bits)
    }
}

/// The plain loop: swap x[i] and x[rev i] for every i < rev i.
fn naive(m: &mut impl Moves, lgn: u32) -> Flow {
    for i in 0..1u64 << lgn {
        let j = rev(i, lgn);
        if i < j {
            m.swap(At::X(i), At::X(j))?;
        }
    }
    Ok(())
}

/// The blocked in-place permutation with a B^2 buffer (B = 2^q), as in the module doc.
fn cobra(m: &mut impl Moves, lgn: u32, q: u32) -> Flow {
    let mid = lgn - 2 * q;
    let width = 1u64 << q;
    let at = |a: u64, b: u64, c: u64| At::X((a << (lgn - q)) | (b << q) | c);
    let buf = |r: u64, c: u64| At::T((r << q) | c);
    for b in 0..1u64 << mid {
        let rb = rev(b, mid);
        if rb < b {
            continue;
        }
        for a in 0..width {
            let ra = rev(a, q);
            for c in 0..width {
                m.copy(at(a, b, c), buf(ra, c))?;
            }
        }
        if rb == b {
            for c in 0..width {
                let rc = rev(c, q);
                for a in 0..width {
                    m.copy(buf(a, rc), at(c, b, a))?;
                }
            }
        } else {
            for c in 0..width {
                let rc = rev(c, q);
                for a in 0..width {
                    m.swap(at(c, rb, a), buf(a, rc))?;
                }
            }
            for a in 0..width {
                let ra = rev(a, q);
                for c in 0..width {
                    m.copy(buf(ra, c), at(a, b, c))?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Moves values, to check that a method is the bit-reversal permutation.
    struct Values {
        x: Vec<u64>,
        t: Vec<u64>,
    }

    impl Values {
        fn slot(&mut self, at: At) -> &mut u64 {
            match at {
                At::X(i) => &mut self.x[i as usize],
                At::T(i) => &mut self.t[i as usize],
            }
        }
    }

    impl Moves for Values {
        fn copy(&mut self, from: At, to: At) -> Flow {
            let v = *self.slot(from);
            *self.slot(to) = v;
            Ok(())
        }
        fn swap(&mut self, a: At, b: At) -> Flow {
            let (va, vb) = (*self.slot(a), *self.slot(b));
            *self.slot(a) = vb;
            *self.slot(b) = va;
            Ok(())
        }
    }

    #[test]
    fn both_methods_are_the_bit_reversal_permutation() {
        for lgn in [2u32, 3, 6, 9, 10] {
            let n = 1u64 << lgn;
            let expected: Vec<u64> = (0..n).map(|i| rev(i, lgn)).collect();
            let mut v = Values { x: (0..n).collect(), t: Vec::new() };
            naive(&mut v, lgn).unwrap();
            assert_eq!(v.x, expected, "naive, lgn = {lgn}");
            for q in 0..=lgn / 2 {
                let mut v = Values { x: (0..n).collect(), t: vec![u64::MAX; 1 << (2 * q)] };
                cobra(&mut v, lgn, q).unwrap();
                assert_eq!(v.x, expected, "cobra, lgn = {lgn}, q = {q}");
            }
        }
    }
}
