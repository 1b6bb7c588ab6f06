//! `spec-gzip` with `harness = once` (the default; the program as it was before issue
//! 15, kept byte for byte so that its streams and every number made from them stay the
//! same): the memory access structure of SPEC CPU2000 164.gzip (predictive-replacement.txt,
//! Table 1): deflate compression of several inputs one after another. The compressor
//! really runs (hash chains, match search, sliding window) on seeded synthetic inputs,
//! so the probes of head[] and prev[] and the match reads back into the window fall
//! where gzip's would on such data; only the addresses are emitted.
//!
//! Arrays, in layout order: gzip's static tables window (2 x window bytes), prev (window
//! entries) and head (as many entries; 2 bytes an entry, 4 above a 32 KiB window), the
//! literal buffer l_buf (window bytes) and d_buf (window entries); then, per input, its
//! input buffer (file_kib) and its output buffer (SPEC compresses from memory to memory;
//! each input has its own buffers, as separate runs of the benchmark would). Inputs cycle
//! through five kinds like the paper's (a web server log, an image, a binary, random
//! data, a tarball), which differ in how often and how far back they repeat themselves.
//!
//! Per input:
//! 1. lm_init: clear head[] and prev[] (gzip clears only head[]; prev[] too here, so
//!    that no page is read before it is written), fill the window;
//! 2. fill_window, whenever the lookahead runs short: slide the window once strstart is
//!    in its upper half (copy the upper half down, rebase every entry of head[] and
//!    prev[]: read and write each), then bring in the next block of input: write it to
//!    the input buffer (its arrival from the file), then copy it into the window. So every
//!    input page is written once and read once, at about the same time: touched once;
//! 3. deflate (gzip's deflate_fast): at each position insert the string (read the window
//!    byte that completes the rolling hash, read head[h], write prev[pos], write head[h]),
//!    walk the hash chain (read prev[] at each candidate, read the window at the
//!    candidate and compare with the window at pos) up to the level's max_chain and
//!    nice_length, then tally a literal or a match (write l_buf, and d_buf for a match);
//!    strings inside a match are inserted too when it is at most max_insert long;
//! 4. flush_block when l_buf or d_buf is full and at the end: read the tallied items in
//!    order and write the compressed bits to the output buffer, sequentially.
//!
//! Simplified: every level uses deflate_fast's greedy matching with that level's limits
//! (gzip uses lazy matching from level 4); Huffman codes have fixed lengths (a literal 8
//! bits, a match 16 bits plus the distance's bit length) and the trees are not built;
//! copies and the slide's loops over head[] and prev[] move 64 bytes at a time, and a
//! match comparison reads 8 bytes of each side at a time; decompression is not run.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow, Stopped};
use super::layout::Layout;
use super::params::Params;
use super::stream::Plan;
use crate::Result;

/// A value, or the consumer went away (see [`Flow`]).
type Got<T> = std::result::Result<T, Stopped>;

const MIN_MATCH: usize = 3;
const MAX_MATCH: usize = 258;
const MIN_LOOKAHEAD: usize = MAX_MATCH + MIN_MATCH + 1;
/// Bytes moved at a time by copies and by the slide's table loops.
const CHUNK: u64 = 64;
/// Bytes of each side compared at a time in the match search.
const WORD: usize = 8;

/// gzip's configuration_table: (max_insert = max_lazy, nice_length, max_chain) by level.
const LEVELS: [(usize, usize, usize); 9] = [
    (4, 8, 4),
    (5, 16, 8),
    (6, 32, 32),
    (4, 16, 16),
    (16, 32, 32),
    (16, 128, 128),
    (32, 128, 256),
    (128, 258, 1024),
    (258, 258, 4096),
];

/// One kind of input: how often it copies an earlier string, the longest copy, and
/// whether its fresh bytes are uniform (binary, random) or text-like.
#[derive(Clone, Copy)]
struct Kind {
    copy: f64,
    longest: usize,
    uniform: bool,
}

/// A web server log, an image, a binary, random data, a tarball.
const KINDS: [Kind; 5] = [
    Kind { copy: 0.85, longest: 48, uniform: false },
    Kind { copy: 0.5, longest: 32, uniform: false },
    Kind { copy: 0.5, longest: 24, uniform: true },
    Kind { copy: 0.0, longest: 4, uniform: true },
    Kind { copy: 0.7, longest: 64, uniform: false },
];

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let files = p.count("files", 1, 1 << 20)?;
    // the generator holds one input in memory
    let file_bytes = p.count("file_kib", 1, 1 << 20)? * 1024;
    let window_kib = p.count("window_kib", 1, 16384)?;
    if !window_kib.is_power_of_two() {
        return Err(p.error(format!("parameter 'window_kib': expected a power of two from 1 to 16384, got {window_kib}")));
    }
    let level = p.count("level", 1, 9)?;
    let wsize = window_kib * 1024;
    let entry = if wsize <= 32768 { 2 } else { 4 };
    let mut layout = Layout::new(page_size, p.what());
    let tables = Tables {
        window: layout.bytes(2 * wsize)?,
        prev: layout.bytes(wsize * entry)?,
        head: layout.bytes(wsize * entry)?,
        l_buf: layout.bytes(wsize)?,
        d_buf: layout.bytes(wsize * entry)?,
        entry,
    };
    let mut buffers = Vec::new();
    for _ in 0..files {
        // the output bound: at most 16 + 24 bits for a 3-byte match, 8 for a literal
        buffers.push((layout.bytes(file_bytes)?, layout.bytes(2 * file_bytes + 64)?));
    }
    let (max_insert, nice, max_chain) = LEVELS[level as usize - 1];
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut d = Deflate::new(e, tables, wsize as usize, max_insert, nice, max_chain);
        for (f, &(input, output)) in buffers.iter().enumerate() {
            let data = synthesize(KINDS[f % KINDS.len()], file_bytes as usize, wsize as usize, &mut rng);
            d.compress(&data, input, output)?;
        }
        Ok(())
    }))
}

/// A seeded input of `len` bytes: runs of fresh bytes and copies of earlier strings
/// (mostly from nearby, sometimes from up to a window back).
fn synthesize(kind: Kind, len: usize, window: usize, rng: &mut Pcg64) -> Vec<u8> {
    let mut data = Vec::with_capacity(len + kind.longest);
    while data.len() < len {
        if data.len() >= 64 && rng.gen::<f64>() < kind.copy {
            let run = rng.gen_range(4..=kind.longest);
            let reach = data.len().min(window) - 1;
            let back = 1 + (rng.gen::<f64>().powi(3) * reach as f64) as usize;
            for _ in 0..run {
                data.push(data[data.len() - back]);
            }
        } else {
            for _ in 0..rng.gen_range(1..=8) {
                let byte = if kind.uniform { rng.gen() } else { 32 + (rng.gen::<f64>().powi(2) * 95.0) as u8 };
                data.push(byte);
            }
        }
    }
    data.truncate(len);
    data
}

/// Byte addresses of gzip's static tables.
#[derive(Clone, Copy)]
struct Tables {
    window: u64,
    prev: u64,
    head: u64,
    l_buf: u64,
    d_buf: u64,
    /// Bytes of a prev[], head[] or d_buf[] entry.
    entry: u64,
}

/// gzip's compressor state, with the real window and hash chains.
struct Deflate<'e> {
    e: &'e mut Emitter,
    t: Tables,
    wsize: usize,
    hash_bits: u32,
    max_insert: usize,
    nice: usize,
    max_chain: usize,
    window: Vec<u8>,
    /// Window bytes below this have been written (by some input).
    filled: usize,
    /// Chain links and chain heads: window positions, 0 = none (gzip's NIL).
    prev: Vec<u32>,
    head: Vec<u32>,
    ins_h: usize,
    strstart: usize,
    lookahead: usize,
    /// Input buffer address and the next input byte to bring in.
    input: u64,
    consumed: usize,
    /// Tallied items since the last flush: (is a match, output bits).
    items: Vec<(bool, u64)>,
    matches: usize,
    output: u64,
    out_bits: u64,
}

impl<'e> Deflate<'e> {
    fn new(e: &'e mut Emitter, t: Tables, wsize: usize, max_insert: usize, nice: usize, max_chain: usize) -> Self {
        Deflate {
            e,
            t,
            wsize,
            hash_bits: wsize.trailing_zeros(),
            max_insert,
            nice,
            max_chain,
            window: vec![0; 2 * wsize],
            filled: 0,
            prev: vec![0; wsize],
            head: vec![0; wsize],
            ins_h: 0,
            strstart: 0,
            lookahead: 0,
            input: 0,
            consumed: 0,
            items: Vec::new(),
            matches: 0,
            output: 0,
            out_bits: 0,
        }
    }

    fn max_dist(&self) -> usize {
        self.wsize - MIN_LOOKAHEAD
    }

    /// Reads window byte `x`. Reads past the data brought in so far (gzip looks a few
    /// bytes ahead at the end of an input; the static window is zero there) are not
    /// emitted, so that no page is read before it was written.
    fn window_byte(&mut self, x: usize) -> Got<u8> {
        if x < self.filled {
            self.e.read(self.t.window + x as u64)?;
            Ok(self.window[x])
        } else {
            Ok(0)
        }
    }

    /// Writes (and reads first, if `src` is given) `bytes` bytes, CHUNK at a time.
    fn copy(&mut self, src: Option<u64>, dst: u64, bytes: u64) -> Flow {
        for at in (0..bytes).step_by(CHUNK as usize) {
            let n = CHUNK.min(bytes - at);
            if let Some(src) = src {
                for w in (0..n).step_by(8) {
                    self.e.read(src + at + w)?;
                }
            }
            for w in (0..n).step_by(8) {
                self.e.write(dst + at + w)?;
            }
        }
        Ok(())
    }

    fn compress(&mut self, data: &[u8], input: u64, output: u64) -> Flow {
        // lm_init: clear the hash tables, fill the window
        let t = self.t;
        let entries = self.wsize as u64 * t.entry;
        self.copy(None, t.head, entries)?;
        self.copy(None, t.prev, entries)?;
        self.head.fill(0);
        self.prev.fill(0);
        (self.input, self.consumed, self.output, self.out_bits) = (input, 0, output, 0);
        (self.strstart, self.lookahead) = (0, 0);
        self.items.clear();
        self.matches = 0;
        self.fill_window(data)?;
        self.ins_h = 0;
        for j in 0..MIN_MATCH - 1 {
            let c = self.window_byte(j)?;
            self.update_hash(c);
        }
        let mut match_length = 0;
        let mut match_start = 0;
        while self.lookahead > 0 {
            let hash_head = self.insert_string(self.strstart)?;
            if hash_head != 0 && self.strstart - hash_head <= self.max_dist() {
                (match_length, match_start) = self.longest_match(hash_head)?;
                match_length = match_length.min(self.lookahead);
            }
            let flush = if match_length >= MIN_MATCH {
                let flush = self.tally(Some(self.strstart - match_start))?;
                self.lookahead -= match_length;
                if match_length <= self.max_insert {
                    for _ in 1..match_length {
                        self.strstart += 1;
                        self.insert_string(self.strstart)?;
                    }
                    self.strstart += 1;
                } else {
                    self.strstart += match_length;
                    self.ins_h = self.window_byte(self.strstart)? as usize;
                    let c = self.window_byte(self.strstart + 1)?;
                    self.update_hash(c);
                }
                match_length = 0;
                flush
            } else {
                self.window_byte(self.strstart)?;
                self.lookahead -= 1;
                self.strstart += 1;
                self.tally(None)?
            };
            if flush {
                self.flush_block()?;
            }
            while self.lookahead < MIN_LOOKAHEAD && self.consumed < data.len() {
                self.fill_window(data)?;
            }
        }
        self.flush_block()?;
        // the last partial byte
        if !self.out_bits.is_multiple_of(8) {
            self.e.write(self.output + self.out_bits / 8)?;
        }
        Ok(())
    }

    fn update_hash(&mut self, c: u8) {
        let shift = self.hash_bits.div_ceil(MIN_MATCH as u32);
        self.ins_h = ((self.ins_h << shift) ^ c as usize) & (self.wsize - 1);
    }

    /// gzip's INSERT_STRING: returns the previous head of the string's chain.
    fn insert_string(&mut self, pos: usize) -> Got<usize> {
        let c = self.window_byte(pos + MIN_MATCH - 1)?;
        self.update_hash(c);
        let (t, h, slot) = (self.t, self.ins_h, pos & (self.wsize - 1));
        self.e.read(t.head + h as u64 * t.entry)?;
        let hash_head = self.head[h];
        self.e.write(t.prev + slot as u64 * t.entry)?;
        self.prev[slot] = hash_head;
        self.e.write(t.head + h as u64 * t.entry)?;
        self.head[h] = pos as u32;
        Ok(hash_head as usize)
    }

    /// gzip's longest_match: the longest match and its start along the chain from
    /// `cur_match`.
    fn longest_match(&mut self, mut cur_match: usize) -> Got<(usize, usize)> {
        let t = self.t;
        let scan = self.strstart;
        let limit = scan.saturating_sub(self.max_dist());
        let nice = self.nice.min(self.lookahead);
        let longest = MAX_MATCH.min(self.window.len() - scan);
        let (mut best_len, mut best_start) = (MIN_MATCH - 1, 0);
        let mut chain = self.max_chain;
        loop {
            let m = cur_match;
            // the quick rejection: one read at the candidate (the scan bytes are in registers)
            self.window_byte(m + best_len)?;
            let w = &self.window;
            let same = |a: usize| w.get(m + a) == w.get(scan + a);
            if same(best_len) && same(best_len - 1) && same(0) && same(1) {
                let len = (0..longest).find(|&a| !same(a)).unwrap_or(longest);
                for at in (0..=len.min(longest - 1)).step_by(WORD) {
                    self.window_byte(scan + at)?;
                    self.window_byte(m + at)?;
                }
                if len > best_len {
                    (best_len, best_start) = (len, m);
                    if len >= nice {
                        break;
                    }
                }
            }
            let slot = m & (self.wsize - 1);
            self.e.read(t.prev + slot as u64 * t.entry)?;
            cur_match = self.prev[slot] as usize;
            chain -= 1;
            if cur_match <= limit || chain == 0 {
                break;
            }
        }
        Ok((best_len, best_start))
    }

    /// gzip's ct_tally: a literal (None) or a match at `distance`; true when the literal
    /// buffer or the distance buffer is full.
    fn tally(&mut self, distance: Option<usize>) -> Got<bool> {
        let t = self.t;
        self.e.write(t.l_buf + self.items.len() as u64)?;
        let bits = match distance {
            Some(d) => {
                self.e.write(t.d_buf + self.matches as u64 * t.entry)?;
                self.matches += 1;
                16 + (usize::BITS - d.leading_zeros()) as u64
            }
            None => 8,
        };
        self.items.push((distance.is_some(), bits));
        Ok(self.items.len() == self.wsize - 1 || self.matches == self.wsize)
    }

    /// compress_block: the tallied items in order, their bits out to the output buffer.
    fn flush_block(&mut self) -> Flow {
        let t = self.t;
        let mut dx = 0u64;
        for i in 0..self.items.len() {
            let (is_match, bits) = self.items[i];
            self.e.read(t.l_buf + i as u64)?;
            if is_match {
                self.e.read(t.d_buf + dx * t.entry)?;
                dx += 1;
            }
            let (from, to) = (self.out_bits / 8, (self.out_bits + bits) / 8);
            for byte in from..to {
                self.e.write(self.output + byte)?;
            }
            self.out_bits += bits;
        }
        self.items.clear();
        self.matches = 0;
        Ok(())
    }

    /// gzip's fill_window: slide when needed, then bring in the next block of input.
    fn fill_window(&mut self, data: &[u8]) -> Flow {
        let (t, wsize) = (self.t, self.wsize);
        let mut more = 2 * wsize - self.lookahead - self.strstart;
        if self.strstart >= wsize + self.max_dist() {
            self.copy(Some(t.window + wsize as u64), t.window, wsize as u64)?;
            self.window.copy_within(wsize.., 0);
            self.strstart -= wsize;
            let entries = wsize as u64 * t.entry;
            self.copy(Some(t.head), t.head, entries)?;
            self.copy(Some(t.prev), t.prev, entries)?;
            for x in self.head.iter_mut().chain(self.prev.iter_mut()) {
                *x = x.saturating_sub(wsize as u32);
            }
            more += wsize;
        }
        let n = more.min(data.len() - self.consumed);
        let at = self.strstart + self.lookahead;
        let src = self.input + self.consumed as u64;
        // the block arrives in the input buffer, then read_buf copies it into the window
        self.copy(None, src, n as u64)?;
        self.copy(Some(src), t.window + at as u64, n as u64)?;
        self.window[at..at + n].copy_from_slice(&data[self.consumed..self.consumed + n]);
        self.filled = self.filled.max(at + n);
        self.consumed += n;
        self.lookahead += n;
        Ok(())
    }
}
