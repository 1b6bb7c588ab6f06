//! OPT (Belady's MIN) stack distances, and from them the exact MIN fault count at every
//! memory size, in one pass, O(log n) per reference.
//!
//! MIN is a stack algorithm (Mattson, Gecsei, Slutz and Traiger 1970): memory of s + 1
//! frames holds what memory of s frames holds, so each reference has a *stack
//! distance*, the smallest memory in which it hits. Mattson's own method keeps the MIN
//! stack ordered by priority (next use) and moves pages down it at every reference,
//! O(distinct pages) per reference. The distance of a reference depends only on the
//! references before it (Bilardi, Ekanadham and Pattnaik, "Optimal On-Line Computation of
//! Stack Distances for MIN and OPT", CF 2017), and their *critical markers* give it
//! without the future: one marker per memory size, each a place in the LRU stack.
//! This file is that method in time coordinates, with our own data structures:
//!
//! * Every reference takes a new *pair* of time slots: a *marker slot*, then the page's
//!   *live slot* (the time of its last reference, as in the LRU stack distances). A
//!   page's LRU depth is the number of live slots after its own.
//! * Memory size c + 1 (c = 1, 2, ...: one per page seen) has its marker in the marker
//!   slot of pair `marker[c]`; a marker at slot m stands at LRU depth #{live slots after
//!   m}.
//! * Weights: +1 for a slot holding a marker, -1 for a live slot; R(t) is the sum of the
//!   weights of the slots from t on. R >= -1 at every live slot (the paper's *imbalance*
//!   beta is R + 1 there, and it is never negative).
//! * A reference to a page last referenced at slot a (not the most recent live slot):
//!   let t be the first slot after a with R(t) = -1 (the paper's z: the deepest place
//!   above the page where the imbalance is zero), and c the least memory size whose
//!   marker is before t. The reference's OPT stack distance is c + 1 (it hits in memory
//!   of more than c frames). Then the page's live slot goes, and marker c moves with the
//!   page to a new pair at the end (LRU depth 1: the paper's "critical marker set to
//!   1"). A reference to the most recent page has distance 1 and changes nothing; a
//!   page's first reference adds memory size n + 1 (n pages seen before) with its marker
//!   at depth 1.
//! * Slot 2q is pair q's marker slot, 2q + 1 its live slot, so one bitmap holds both
//!   (markers on the even bits, live slots on the odd ones) and a byte of it, four pairs,
//!   has its weight sum and least suffix sum in a 256-entry table. A segment tree over
//!   64-slot words holds, per node, the sum of the weights and the least suffix sum:
//!   finding t is a pass down the path to the page's word and a descent on suffix sums,
//!   O(log n). Pairs are renumbered (the occupied ones packed, in order) when they run
//!   out, so the structure stays O(pages) however long the stream is.
//! * c without a tree: call size s a *run start* when s = 1 or marker s is older than
//!   marker s - 1. Every marker is at least as recent as its run's start (the markers of
//!   a run get more recent as the sizes grow), and the start is the run's least size, so
//!   the least size with its marker before t is the least run start with its marker
//!   before t. A move changes two of them: marker c becomes the newest, so c stops
//!   starting a run (size 1 always starts one) and c + 1 starts one; a new size's marker
//!   is the newest and starts none. The run starts are kept in a short array in size
//!   order (about a hundred on the 10 M-reference Zipf benchmark), and c is its first
//!   entry with a marker before t. (With a tree field for the least size in each node
//!   instead, and the two removals climbing apart, the loop over the benchmark's ids took
//!   2.18 s against 1.44-1.49 s.)
//! * The search does not depend on the page's live slot (R after it is the same with it
//!   or without), so it reads the tree first; the two slots that go (the page's live
//!   slot and marker c) are then written together, their paths merged where they meet
//!   and the climb stopped where a node is unchanged.
//!
//! A free record: the page's last entry stays in the stack as a page never referenced
//! again (MIN evicts such a page first, which is what a free frame gives), and its next
//! touch is a first reference. The tests check the curve against MIN replay at every size,
//! with and without frees, and the distances against Mattson's priority stack.

use std::hint::select_unpredictable;

use crate::hint::prefetch;
use crate::stream::for_each_batch;
use crate::trace::{has_frees, PageId, Progress, RefSource};
use crate::Result;

use super::stack_distance::{feed, Stack};
use super::LruFaultCurve;

const NONE: u32 = u32::MAX;
/// The marker slots of a word (pair i: bit 2i); the live slots are the odd bits.
const MARKERS: u64 = 0x5555_5555_5555_5555;
const PAIRS_PER_WORD: u32 = 32;

/// For each byte of the bitmap: the sum of its weights, and the least sum of the weights
/// from one of its slots to its top slot.
const BYTE_SUM: [i8; 256] = byte_tables().0;
const BYTE_MIN: [i8; 256] = byte_tables().1;
/// For each byte and each bound L in -5..=4 (index L + 5): its lowest slot i whose
/// weights from i to the byte's top sum to at most L, or 8 when none does. A byte's
/// suffix sums lie in -4..=4, so a bound above 4 is 4 and one below -5 is -5.
const BYTE_FIRST: [[u8; 10]; 256] = byte_tables().2;

/// The three byte tables, from each byte's suffix sums.
const fn byte_tables() -> ([i8; 256], [i8; 256], [[u8; 10]; 256]) {
    let (mut sum, mut min, mut first) = ([0i8; 256], [0i8; 256], [[8u8; 10]; 256]);
    let mut b = 0;
    while b < 256 {
        // suffix[i]: the weights of slots i..8
        let mut suffix = [0i8; 9];
        let mut m = i8::MAX;
        let mut i = 8;
        while i > 0 {
            i -= 1;
            let w = if (b >> i) & 1 == 0 { 0 } else if i % 2 == 0 { 1 } else { -1 };
            suffix[i] = suffix[i + 1] + w;
            if suffix[i] < m {
                m = suffix[i];
            }
            // from the top slot down, the last slot at or under a bound is the lowest
            let mut l = 0;
            while l < 10 {
                if suffix[i] <= l as i8 - 5 {
                    first[b][l] = i as u8;
                }
                l += 1;
            }
        }
        sum[b] = suffix[0];
        min[b] = m;
        b += 1;
    }
    (sum, min, first)
}

/// Bit j set where `q[j] < bound`. On x86-64 by SSE2 (every x86-64 has it): four
/// compares and a byte mask, where the compiler had left the sixteen compares scalar
/// (the whole OPT curve 1.156-1.171 -> 1.142-1.147 s; a byte per compare read as a u128
/// instead was slower, 1.29-1.30 s).
#[inline(always)]
fn below_mask(q: &[u32; 16], bound: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; the four unaligned loads read the array's 64
        // bytes. Unsigned order by signed compares: both sides biased by 2^31.
        unsafe {
            let bias = _mm_set1_epi32(i32::MIN);
            let b = _mm_xor_si128(_mm_set1_epi32(bound as i32), bias);
            let p = q.as_ptr() as *const __m128i;
            let lt = |k: usize| _mm_cmpgt_epi32(b, _mm_xor_si128(_mm_loadu_si128(p.add(k)), bias));
            let bytes = _mm_packs_epi16(_mm_packs_epi32(lt(0), lt(1)), _mm_packs_epi32(lt(2), lt(3)));
            _mm_movemask_epi8(bytes) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        q.iter().enumerate().fold(0, |m, (j, &x)| m | u32::from(x < bound) << j)
    }
}

/// The lowest slot at or above bit `lo` of word `x` with R <= -1 (R: the weight sum from
/// the slot to the word's top, plus `right`). Slots below `lo` count as empty: their R
/// is then that of `lo`, so a find among them is `lo`. Without a branch until the
/// answer: the bytes that reach -1 make a mask, and the first slot in the lowest is a
/// table's (an exit at the byte, then at the slot, was two mispredicted branches a
/// search: 2-3% of the whole curve).
#[inline]
fn first_slot_reaching(x: u64, lo: u32, right: i32) -> Option<u32> {
    let x = x & (!0u64 << lo);
    // R just above each byte, and the bytes with a slot at R <= -1
    let mut above = [0i32; 8];
    let (mut s, mut reach) = (right, 0u32);
    for k in (0..8).rev() {
        let b = (x >> (8 * k)) as u8 as usize;
        above[k] = s;
        reach |= u32::from(s + BYTE_MIN[b] as i32 <= -1) << k;
        s += BYTE_SUM[b] as i32;
    }
    // the bytes below `lo`'s are empty, and their R is that of `lo`'s lowest slot
    let reach = reach & (!0u32 << (lo / 8));
    if reach == 0 {
        return None;
    }
    let k = reach.trailing_zeros();
    let b = (x >> (8 * k)) as u8 as usize;
    let bound = (-1 - above[k as usize]).clamp(-5, 4);
    let i = u32::from(BYTE_FIRST[b][(bound + 5) as usize]);
    debug_assert!(i < 8, "the byte's least suffix sum is at one of its slots");
    Some((8 * k + i).max(lo))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
struct Node {
    /// Sum of the weights.
    sum: i32,
    /// Least sum of the weights from a slot of the node to its end.
    min_suffix: i32,
}

const EMPTY: Node = Node { sum: 0, min_suffix: 0 };

#[inline(always)]
fn combine(left: Node, right: Node) -> Node {
    Node { sum: left.sum + right.sum, min_suffix: right.min_suffix.min(right.sum + left.min_suffix) }
}

/// The parent of `node` and its sibling `sib`, `node` the left child when `is_left`.
/// Without a branch: which side a node is on is a coin toss on a path, and a
/// mispredicted branch per level cost more than computing both orders.
#[inline(always)]
fn with_sibling(node: Node, sib: Node, is_left: bool) -> Node {
    let (left, right) = (combine(node, sib), combine(sib, node));
    Node { sum: left.sum, min_suffix: select_unpredictable(is_left, left.min_suffix, right.min_suffix) }
}

/// Incremental OPT stack distances over dense page ids.
#[derive(Debug)]
pub struct OptStackDistances {
    /// Pair of each page's live slot plus one; 0 = none (never referenced, or freed).
    last: Vec<u32>,
    /// `marker[c]`: the pair of memory size c + 1's marker (index 0 unused).
    marker: Vec<u32>,
    /// Per word of 64 slots (32 pairs): pair i's marker on bit 2i, its live slot on 2i+1.
    bits: Vec<u64>,
    /// The tree over words, heap order (root 1, leaves `words..2 * words`).
    tree: Vec<Node>,
    words: usize,
    /// Next free pair.
    now: u32,
    /// The pair of the most recent live slot.
    top: u32,
    /// Sizes (= pages entered into the stack).
    sizes: u32,
    /// The run starts in increasing order, and the pairs of their markers.
    start_size: Vec<u32>,
    start_pair: Vec<u32>,
    /// Distinct page ids seen (one more than the largest).
    distinct: u32,
    /// `histogram[d]` = references at distance d (d >= 1).
    histogram: Vec<u64>,
    compulsory: u64,
}

impl Default for OptStackDistances {
    fn default() -> Self {
        Self::new()
    }
}

impl OptStackDistances {
    pub fn new() -> Self {
        let mut s = OptStackDistances {
            last: Vec::new(),
            marker: vec![NONE],
            bits: Vec::new(),
            tree: Vec::new(),
            words: 0,
            now: 0,
            top: NONE,
            sizes: 0,
            start_size: Vec::new(),
            start_pair: Vec::new(),
            distinct: 0,
            histogram: vec![0; 2],
            compulsory: 0,
        };
        s.renumber();
        s
    }

    /// The node of word `w` from its bits.
    #[inline]
    fn leaf(&self, w: usize) -> Node {
        let x = self.bits[w];
        let (mut sum, mut min_suffix) = (0i32, i32::MAX);
        for k in (0..8).rev() {
            let b = (x >> (8 * k)) as u8 as usize;
            min_suffix = min_suffix.min(sum + BYTE_MIN[b] as i32);
            sum += BYTE_SUM[b] as i32;
        }
        Node { sum, min_suffix }
    }

    /// New leaves for words `wa` and `wb` (the same word or two) and their ancestors: two
    /// paths up to where they meet, then one, up to the first node that does not change.
    /// On a re-reference the two changes are the page's live slot (-1) and a marker (+1)
    /// going: above the join the sums are as before, and often the least suffix sums
    /// too.
    fn update(&mut self, wa: usize, wb: usize) {
        let (mut i, mut j) = (self.words + wa, self.words + wb);
        let mut a = self.leaf(wa);
        self.tree[i] = a;
        if i != j {
            let mut b = self.leaf(wb);
            self.tree[j] = b;
            while i >> 1 != j >> 1 {
                a = with_sibling(a, self.tree[i ^ 1], i & 1 == 0);
                b = with_sibling(b, self.tree[j ^ 1], j & 1 == 0);
                i >>= 1;
                j >>= 1;
                self.tree[i] = a;
                self.tree[j] = b;
            }
        }
        self.climb(i);
    }

    /// New ancestors of node `i`, up to the first that does not change.
    #[inline]
    fn climb(&mut self, mut i: usize) {
        while i > 1 {
            let node = with_sibling(self.tree[i], self.tree[i ^ 1], i & 1 == 0);
            i >>= 1;
            if self.tree[i] == node {
                return;
            }
            self.tree[i] = node;
        }
    }

    /// Packs the occupied pairs (marker or live slot) to the front, in order, in a
    /// structure of twice their number at least (the number of words is a power of two),
    /// and of at least 2^15 pairs.
    fn renumber(&mut self) {
        let occupied_in = |x: u64| (x | x >> 1) & MARKERS;
        // new index of each occupied pair: the occupied pairs before it
        let mut before = Vec::with_capacity(self.bits.len());
        let mut count = 0u32;
        for &x in &self.bits {
            before.push(count);
            count += occupied_in(x).count_ones();
        }
        let capacity = (count + 1).saturating_mul(2).max(1 << 15);
        let words = (capacity as usize).div_ceil(PAIRS_PER_WORD as usize).next_power_of_two();
        let bits = &self.bits;
        let new_pair = |q: u32| {
            let (w, i) = ((q / PAIRS_PER_WORD) as usize, q % PAIRS_PER_WORD);
            before[w] + (occupied_in(bits[w]) & ((1u64 << (2 * i)) - 1)).count_ones()
        };
        // the occupied pairs in order: the n-th goes to pair n
        let mut packed = vec![0u64; words];
        let mut n = 0u32;
        for &x in &self.bits {
            let mut occ = occupied_in(x);
            while occ != 0 {
                let i = occ.trailing_zeros();
                packed[(n / PAIRS_PER_WORD) as usize] |= ((x >> i) & 3) << (2 * (n % PAIRS_PER_WORD));
                n += 1;
                occ &= occ - 1;
            }
        }
        debug_assert_eq!(n, count);
        for l in self.last.iter_mut().filter(|l| **l != 0) {
            *l = new_pair(*l - 1) + 1;
        }
        // a size whose marker is being placed (NONE) has left its old slot
        for m in self.marker.iter_mut().skip(1).chain(self.start_pair.iter_mut()).filter(|m| **m != NONE) {
            *m = new_pair(*m);
        }
        if self.top != NONE {
            self.top = new_pair(self.top);
        }
        self.bits = packed;
        self.words = words;
        self.now = count;
        self.tree = vec![EMPTY; 2 * words];
        for w in 0..words {
            self.tree[words + w] = self.leaf(w);
        }
        for i in (1..words).rev() {
            self.tree[i] = combine(self.tree[2 * i], self.tree[2 * i + 1]);
        }
    }

    /// The balance point: the first slot t >= `from` with R(t) <= -1 (R: the weight sum
    /// from t on). One pass down the path to `from`'s word finds the weights after each
    /// node on it and, of the right siblings that hang off it (the nodes wholly after
    /// `from`), the deepest whose least suffix sum reaches -1; then the word itself is
    /// searched, and if the point is not in it, that sibling is descended into. (A climb
    /// for the weights after the word, then a second climb to the first sibling that
    /// reaches -1, took 5% more of the whole curve: the pass's loads do not depend on
    /// each other, and it has no exit to mispredict. A Fenwick tree for the weights
    /// before the word, then a climb that stops at the sibling, took 13% more: the
    /// Fenwick tree's two updates a reference.)
    fn balance_point(&self, from: u32) -> u32 {
        let w0 = (from / 64) as usize;
        let leaf = self.words + w0;
        let (after, best, best_after) = self.path(leaf);
        // The word's leaf still counts the page's live slot, whose removal only raised R:
        // when its least suffix sum cannot reach -1 no slot of it can (3 in 4 searches
        // end outside the page's word), and the scan is skipped.
        if self.tree[leaf].min_suffix + after <= -1 {
            if let Some(t) = self.scan_word(w0, from % 64, after) {
                return t;
            }
        }
        debug_assert!(best != 0, "the most recent live slot has R = -1");
        self.descend(best, best_after)
    }

    /// The weights after leaf `leaf`, and the deepest right sibling off its path whose
    /// least suffix sum reaches -1, with the weights after it (node 0 when none).
    #[inline(always)]
    fn path(&self, leaf: usize) -> (i32, usize, i32) {
        #[cfg(target_arch = "x86_64")]
        {
            self.path_sse2(leaf)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.path_scalar(leaf)
        }
    }

    /// `path`, a level at a time from the root's children down.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn path_scalar(&self, leaf: usize) -> (i32, usize, i32) {
        let (mut after, mut best, mut best_after) = (0i32, 0usize, 0i32);
        let mut d = self.words.trailing_zeros();
        while d > 0 {
            d -= 1;
            let c = leaf >> d;
            let is_left = c & 1 == 0;
            let sib = self.tree[c ^ 1];
            let reaches = is_left & (sib.min_suffix + after <= -1);
            best = select_unpredictable(reaches, c ^ 1, best);
            best_after = select_unpredictable(reaches, after, best_after);
            after += select_unpredictable(is_left, sib.sum, 0);
        }
        (after, best, best_after)
    }

    /// `path`, four levels at a time in SSE2 lanes: the four siblings' sums (where they
    /// are right siblings) summed from the top lane down give the weights after each, and
    /// a compare gives the four that reach -1. A level at a time (`path_scalar`), the pass
    /// was a fifth of the curve's instructions, sixteen levels of loads, compares and
    /// three selects; in lanes the whole curve took 1.024-1.049 s against 1.099-1.107.
    /// Lane k of group g is the level of node `leaf >> (4g + k)`; the lanes above the
    /// root's children (the top group's, when the depth is not a multiple of four) read
    /// a node and count as no right sibling.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn path_sse2(&self, leaf: usize) -> (i32, usize, i32) {
        use std::arch::x86_64::*;
        let depth = self.words.trailing_zeros() as usize;
        let groups = depth.div_ceil(4);
        debug_assert!(groups <= 8 && self.tree.len() == 2 * self.words && leaf < self.tree.len());
        // by the node's shift: the weights after it, and whether its sibling reaches -1
        let mut afters = [0i32; 32];
        let mut reach_bits = 0u32;
        let levels = (1usize << depth) - 1;
        let tree = self.tree.as_ptr();
        // SAFETY: SSE2 is part of x86-64. Each load reads the 8 bytes of one `Node`
        // (repr(C): sum, then min_suffix) at index `(leaf >> s) ^ 1` <= `leaf | 1` <
        // `tree.len()`; the store writes four of `afters`' 32 entries (groups <= 8).
        unsafe {
            let lane_bit = _mm_setr_epi32(1, 2, 4, 8);
            let mut carry = _mm_setzero_si128();
            for g in (0..groups).rev() {
                let x = leaf >> (4 * g);
                let load = |c: usize| _mm_loadl_epi64(tree.add(c ^ 1) as *const __m128i);
                let (a, b) = (_mm_unpacklo_epi64(load(x), load(x >> 1)), _mm_unpacklo_epi64(load(x >> 2), load(x >> 3)));
                let sums = _mm_castps_si128(_mm_shuffle_ps::<0b10_00_10_00>(_mm_castsi128_ps(a), _mm_castsi128_ps(b)));
                let mins = _mm_castps_si128(_mm_shuffle_ps::<0b11_01_11_01>(_mm_castsi128_ps(a), _mm_castsi128_ps(b)));
                // a left child's sibling is its right sibling
                let left = (!x & (levels >> (4 * g)) & 0xF) as i32;
                let is_left = _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(left), lane_bit), lane_bit);
                let v = _mm_and_si128(sums, is_left);
                // lane k: the right siblings' sums of lanes k.. (k and the levels above)
                let mut incl = _mm_add_epi32(v, _mm_srli_si128::<4>(v));
                incl = _mm_add_epi32(incl, _mm_srli_si128::<8>(incl));
                let excl = _mm_add_epi32(_mm_sub_epi32(incl, v), carry);
                let reach = _mm_and_si128(is_left, _mm_cmplt_epi32(_mm_add_epi32(mins, excl), _mm_setzero_si128()));
                reach_bits |= (_mm_movemask_ps(_mm_castsi128_ps(reach)) as u32) << (4 * g);
                _mm_storeu_si128(afters.as_mut_ptr().add(4 * g) as *mut __m128i, excl);
                carry = _mm_add_epi32(carry, _mm_shuffle_epi32::<0>(incl));
            }
            let after = _mm_cvtsi128_si32(carry);
            if reach_bits == 0 {
                return (after, 0, 0);
            }
            // the deepest: the least shift
            let s = reach_bits.trailing_zeros() as usize;
            (after, (leaf >> s) ^ 1, afters[s])
        }
    }

    /// Two levels of `descend` at once: of node `i`'s four grandchildren (contiguous),
    /// the first whose least suffix sum reaches -1, and the weights after it; `right`
    /// the weights after `i`. A level at a time took a dependent load a level (the
    /// whole curve 1.030-1.050 -> 1.023-1.027 s).
    #[inline(always)]
    fn first_grandchild_reaching(&self, i: usize, right: i32) -> (usize, i32) {
        let g: &[Node; 4] = self.tree[4 * i..4 * i + 4].try_into().expect("four grandchildren");
        let a3 = right;
        let a2 = a3 + g[3].sum;
        let a1 = a2 + g[2].sum;
        let a0 = a1 + g[1].sum;
        let (k, after) = select_unpredictable(g[2].min_suffix + a2 <= -1, (2, a2), (3, a3));
        let (k, after) = select_unpredictable(g[1].min_suffix + a1 <= -1, (1, a1), (k, after));
        select_unpredictable(g[0].min_suffix + a0 <= -1, (0, a0), (k, after))
    }

    /// `balance_point` within node `i`, `right` the weights after it.
    fn descend(&self, mut i: usize, mut right: i32) -> u32 {
        while 2 * i < self.words {
            // the great-great-grandchildren, 16 nodes: the load after next
            prefetch(&self.tree, 16 * i);
            prefetch(&self.tree, 16 * i + 8);
            let (k, after) = self.first_grandchild_reaching(i, right);
            i = 4 * i + k;
            right = after;
        }
        while i < self.words {
            // the great-grandchildren, 8 nodes of 8 bytes: the load after next
            prefetch(&self.tree, 8 * i);
            let (l, r) = (self.tree[2 * i], self.tree[2 * i + 1]);
            let go_left = l.min_suffix + right + r.sum <= -1;
            right += select_unpredictable(go_left, r.sum, 0);
            i = 2 * i + usize::from(!go_left);
        }
        self.scan_word(i - self.words, 0, right).expect("a slot with R = -1 in the node")
    }

    /// The leftmost slot of word `w` at or above bit `lo` with R <= -1, `right` the
    /// weights after the word.
    #[inline]
    fn scan_word(&self, w: usize, lo: u32, right: i32) -> Option<u32> {
        first_slot_reaching(self.bits[w], lo, right).map(|i| (w * 64) as u32 + i)
    }

    /// The index among the run starts of the least size with its marker before slot t.
    #[inline]
    fn least_start_before(&self, t: u32) -> usize {
        // pair q's marker is slot 2q
        let bound = t.div_ceil(2);
        // sixteen compares at a time, into a mask (the loop with an exit per entry was 7%
        // of the whole; `below_mask`)
        let mut chunks = self.start_pair.chunks_exact(16);
        let mut at = 0;
        for chunk in &mut chunks {
            let mask = below_mask(chunk.try_into().expect("sixteen"), bound);
            if mask != 0 {
                return at + mask.trailing_zeros() as usize;
            }
            at += 16;
        }
        at + chunks.remainder().iter().position(|&q| q < bound).expect("a marker before the balance point")
    }

    /// Marker `c` has become the newest: `c` starts no run (1 always does), `c + 1` does.
    /// `k` is `c`'s index among the run starts.
    fn moved_to_the_top(&mut self, k: usize, c: u32) {
        let next = c + 1;
        let add_next = next <= self.sizes && self.start_size.get(k + 1) != Some(&next);
        if c == 1 {
            self.start_pair[k] = self.marker[1];
            if add_next {
                self.start_size.insert(k + 1, next);
                self.start_pair.insert(k + 1, self.marker[next as usize]);
            }
        } else if add_next {
            self.start_size[k] = next;
            self.start_pair[k] = self.marker[next as usize];
        } else {
            self.start_size.remove(k);
            self.start_pair.remove(k);
        }
    }

    /// A new pair at the end: the marker of size index `c`, then the live slot of `page`.
    fn push_pair(&mut self, c: u32, page: PageId) {
        if self.now == self.words as u32 * PAIRS_PER_WORD {
            // out of pairs: pack the occupied ones
            self.renumber();
        }
        let q = self.now;
        self.now += 1;
        let w = (q / PAIRS_PER_WORD) as usize;
        self.bits[w] |= 3 << (2 * (q % PAIRS_PER_WORD));
        self.marker[c as usize] = q;
        self.last[page as usize] = q + 1;
        self.top = q;
        // the word's two newest slots: their weights sum to 0, so every older slot's
        // suffix sum is as it was, and the live slot's is -1 (no leaf to recompute)
        let i = self.words + w;
        let leaf = Node { min_suffix: self.tree[i].min_suffix.min(-1), ..self.tree[i] };
        debug_assert_eq!(leaf, self.leaf(w));
        if leaf != self.tree[i] {
            self.tree[i] = leaf;
            self.climb(i);
        }
    }

    /// Records a reference to `page` repeated `repeat` times; returns its OPT stack
    /// distance (0 for a first reference). The repeats are at distance 1.
    #[inline]
    pub fn reference(&mut self, page: PageId, repeat: u32) -> u32 {
        let p = page as usize;
        if p >= self.last.len() {
            self.last.resize((p + 1).max(self.last.len() * 3 / 2), 0);
        }
        let prev = self.last[p];
        let distance = if prev == 0 {
            self.compulsory += 1;
            self.distinct = self.distinct.max(page + 1);
            self.sizes += 1;
            self.marker.push(NONE);
            if self.histogram.len() <= self.sizes as usize + 1 {
                let n = (self.sizes as usize + 2).max(self.histogram.len() * 3 / 2);
                self.histogram.resize(n, 0);
            }
            let c = self.sizes;
            self.push_pair(c, page);
            if c == 1 {
                self.start_size.push(1);
                self.start_pair.push(self.marker[1]);
            }
            0
        } else {
            let qa = prev - 1;
            if qa == self.top {
                1
            } else {
                // the page's live slot goes first: slots after it keep their R, and the
                // search may start at the emptied slot (its R is now that of the slot
                // after it, and it holds no marker)
                let wa = (qa / PAIRS_PER_WORD) as usize;
                self.bits[wa] &= !(2u64 << (2 * (qa % PAIRS_PER_WORD)));
                let t = self.balance_point(2 * qa + 1);
                let k = self.least_start_before(t);
                let (c, old) = (self.start_size[k], self.start_pair[k]);
                debug_assert!(c < self.sizes && old == self.marker[c as usize], "a size for the reference");
                // marker c moves to the new pair
                let wo = (old / PAIRS_PER_WORD) as usize;
                self.bits[wo] &= !(1u64 << (2 * (old % PAIRS_PER_WORD)));
                // none of them is in a pair until the push below (which may renumber)
                self.marker[c as usize] = NONE;
                self.start_pair[k] = NONE;
                self.last[p] = 0;
                self.update(wa, wo);
                self.push_pair(c, page);
                self.moved_to_the_top(k, c);
                c + 1
            }
        };
        self.histogram[distance as usize] += 1;
        if repeat > 1 {
            self.histogram[1] += (repeat - 1) as u64;
        }
        distance
    }

    /// The page is freed: its entry stays in the stack as a page never referenced again,
    /// and its next reference is a first reference.
    pub fn free(&mut self, page: PageId) {
        if let Some(l) = self.last.get_mut(page as usize) {
            *l = 0;
        }
    }

    /// Asks for the page's entry ahead of its reference.
    #[inline(always)]
    pub fn prefetch_page(&self, page: PageId) {
        prefetch(&self.last, page as usize);
    }

    /// Faults at every size 1..=sizes (compulsory included).
    pub fn fault_curve(&self) -> Vec<u64> {
        let n = self.sizes as usize;
        let mut faults = vec![0u64; n];
        let mut beyond = 0u64;
        for s in (1..=n).rev() {
            faults[s - 1] = self.compulsory + beyond;
            beyond += self.histogram.get(s).copied().unwrap_or(0);
        }
        faults
    }

    pub fn compulsory(&self) -> u64 {
        self.compulsory
    }

    /// References per distance (index 0: first references, counted as 0 here).
    pub fn histogram(&self) -> &[u64] {
        &self.histogram[..]
    }
}

impl Stack for OptStackDistances {
    fn prefetch_page(&self, page: PageId) { OptStackDistances::prefetch_page(self, page) }
    fn free(&mut self, page: PageId) { OptStackDistances::free(self, page) }
    fn reference(&mut self, page: PageId, repeat: u32) -> u32 { OptStackDistances::reference(self, page, repeat) }
}

/// The exact MIN (OPT) fault curve of a stream, in one pass.
pub fn opt_mrc(src: &mut dyn RefSource, progress: Progress) -> Result<LruFaultCurve> {
    let mut sd = OptStackDistances::new();
    let mut references = 0u64;
    let records = for_each_batch(src, progress, |batch, _| {
        references += if has_frees(&batch.kind) { feed::<_, true>(&mut sd, batch) } else { feed::<_, false>(&mut sd, batch) };
        Ok(())
    })?;
    sd.histogram[0] = 0;
    Ok(LruFaultCurve {
        records,
        references,
        distinct_pages: sd.distinct as u64,
        compulsory_faults: sd.compulsory,
        faults: sd.fault_curve(),
    })
}

#[cfg(test)]
mod tests;
