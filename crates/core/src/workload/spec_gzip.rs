//! `spec-gzip` with `harness = spec`: SPEC CPU2000 164.gzip as the benchmark runs it (predictive-replacement.txt, Table 1;
//! token-ordered-lru.txt, Table 1: input.graphic, max MAD 197.4 MB, type 1, "quickly
//! acquiring memory allotments"): gzip 1.2.4's deflate and inflate, driven by SPEC's
//! harness (spec.c, shared by 164.gzip and 256.bzip2), which does all its I/O in memory.
//! The compressor really runs (hash chains, match search, sliding window) on seeded
//! synthetic inputs, so the probes of head[] and prev[] and the match reads back into the
//! window fall where gzip's would on such data; the decompressor replays the compressed
//! stream the compressor produced; only the addresses are emitted.
//!
//! Memory, in layout order: gzip's static arrays, window (2 x window bytes), prev and
//! head (window entries each: 2 bytes, 4 above a 32 KiB window), inbuf (window bytes; it
//! is also deflate's literal buffer l_buf, as in gzip), outbuf (window / 2 bytes), d_buf
//! (window entries) and the inflate tables (8 KiB); then the harness's three buffers of
//! `file_kib` each plus its 100 KiB of slack (spec_fd[0] the input, [1] the compressed
//! data, [2] a third that only spec_init touches), and the validation samples (one byte
//! per KiB of input).
//!
//! Each input is one run of the benchmark (SPEC runs one per input):
//! 1. spec_init: writes one byte of every KiB of each of the three buffers (all of
//!    their pages, at once: MAD jumps to its maximum, type 1); spec_load copies the input
//!    into buffer 0; the validation samples are read from it (every 1027th byte);
//! 2. for each compression level of `level` (SPEC: 1, 3, 5, 7, 9):
//!    - compress buffer 0 into buffer 1 (gzip's zip): lm_init clears head[] (and
//!      prev[], which gzip leaves to be filled on the fly, so that no page is read before
//!      it is written); fill_window
//!      slides the window once strstart is in its upper half (copy the upper half down,
//!      rebase every entry of head[] and prev[]: read and write each) and reads the next
//!      input block from buffer 0 into the window (spec_read); deflate inserts each string
//!      (read the window byte that completes the rolling hash, read head[h], write
//!      prev[pos], write head[h]), walks the hash chain (read prev[] at each candidate,
//!      read the window at the candidate and compare with the window at pos) up to the
//!      level's max_chain and nice_length, then tallies a literal or a match (write
//!      l_buf, and d_buf for a match); strings inside a match are inserted too when it is
//!      at most max_insert long; flush_block (when l_buf or d_buf is full, and at the end)
//!      reads the tallied items and writes the compressed bits into outbuf, which goes to
//!      buffer 1 whenever it is full (spec_write);
//!    - spec_reset(0): clear buffer 0 (write every byte of the input's length);
//!    - uncompress buffer 1 into buffer 0 (gzip's unzip, inflate): huft_build writes the
//!      code tables; fill_inbuf copies the next block of buffer 1 into inbuf; each
//!      literal or match reads its code bits from
//!      inbuf and its entries of the inflate tables, then writes the literal into the
//!      window or copies the match from earlier in the window (the window wraps at its
//!      size); a full window is copied out to buffer 0 (flush_window, spec_write);
//!    - validate: read each sample and the byte of buffer 0 it was taken from;
//!    - spec_reset(1): clear buffer 1 (every byte of the compressed length);
//! 3. at its end the run's memory is freed (a free record for every page of the layout,
//!    when `free_between` and another input follows: the next run is a new process that
//!    gets fresh, zero-filled pages at the same addresses).
//!
//! So every level reads and writes buffers 0 and 1 whole (the reuse that makes the LRU
//! fault curve drop only at the buffers' size, with OPT well below it), while the window
//! and the hash tables are referenced at every byte (the curve's knee near the window
//! size). Inputs cycle through `kinds`: a web server log, an image, a binary, random
//! data, a tarball (the paper's five), which differ in how often and how far back they
//! repeat themselves.
//!
//! Simplified: every level uses deflate_fast's greedy matching with that level's limits
//! (gzip uses lazy matching from level 4); Huffman codes have fixed lengths (a literal 8
//! bits, a match 12 bits plus the distance's bit length, about deflate's length and
//! distance codes with their extra bits) and the trees are not built; the compressed data
//! is cut at the end of its buffer's slack should it ever outgrow it;
//! the CRC passes over the window are left out; copies and the slide's loops over head[]
//! and prev[] move 64 bytes at a time, and a match comparison reads 8 bytes of each side
//! at a time.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow, Stopped};
use super::layout::Layout;
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "SPEC gzip: deflate of several inputs, each touched once (harness=once); harness=spec: 164.gzip as run, deflate and inflate at levels 1,3,5,7,9 between in-memory buffers (type 1, reuse)";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("files", "5", "inputs, one run of the benchmark each (the paper: 5; kinds cycle through 'kinds')"),
    param("file_kib", "384", "size of each input in KiB, at most 1048576: each of the harness's three buffers holds this (the paper's runs: 64 MiB each, 192 MB)"),
    param("window_kib", "32", "sliding window in KiB, a power of two from 1 to 16384 (gzip: 32); head[] has as many entries"),
    param("harness", "once", "once: each input deflated once from its own buffers, touched once (the program before issue 15); spec: SPEC's harness, compress and uncompress at each level between three buffers (token-ordered-lru.txt's gzip, and predictive-replacement.txt's since issue 22: its Table 1's 192 MB are the three buffers)"),
    param("level", "6", "compression level 1-9 (gzip's max_chain, nice_length, max_insert); with harness=spec a comma-separated list, each compressing and uncompressing the input, 1,3,5,7,9 (SPEC's) when not given"),
    param("kinds", "log,image,binary,random,tarball", "with harness=spec: the inputs' kinds, comma-separated, cycled over the files (the paper's five; token-ordered LRU ran the image, input.graphic)"),
    param("free_between", "true", "with harness=spec: free the run's memory between inputs (each input is a new process); false: the next input reuses it"),
];

/// A value, or the consumer went away (see [`Flow`]).
type Got<T> = std::result::Result<T, Stopped>;

const MIN_MATCH: usize = 3;
const MAX_MATCH: usize = 258;
const MIN_LOOKAHEAD: usize = MAX_MATCH + MIN_MATCH + 1;
/// Bytes moved at a time by copies and by the slide's table loops.
const CHUNK: u64 = 64;
/// Bytes of each side compared at a time in the match search.
const WORD: usize = 8;
/// spec.c: slack allocated beyond each buffer's limit.
const FUDGE_BUF: u64 = 100 * 1024;
/// spec.c: spec_init writes a byte every KiB of each buffer.
const INIT_STRIDE: u64 = 1024;
/// spec.c: the validation keeps every 1027th byte of the input.
const VALIDATE_SKIP: u64 = 1027;
/// Bytes of inflate's code tables (gzip builds them with malloc; a few KiB).
const HUFT_BYTES: u64 = 8192;

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
const KINDS: [(&str, Kind); 5] = [
    ("log", Kind { copy: 0.85, longest: 48, uniform: false }),
    ("image", Kind { copy: 0.5, longest: 32, uniform: false }),
    ("binary", Kind { copy: 0.5, longest: 24, uniform: true }),
    ("random", Kind { copy: 0.0, longest: 4, uniform: true }),
    ("tarball", Kind { copy: 0.7, longest: 64, uniform: false }),
];

/// SPEC's levels, when `level` is not given with `harness = spec`.
const SPEC_LEVELS: [u64; 5] = [1, 3, 5, 7, 9];

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    if p.choice("harness", &["once", "spec"])? == "once" {
        for name in ["kinds", "free_between"] {
            if p.given(name).is_some() {
                return Err(p.error(format!("parameter '{name}': only with harness=spec (harness=once cycles the five kinds and frees nothing)")));
            }
        }
        return super::spec_gzip_once::plan(p, page_size, seed);
    }
    let files = p.count("files", 1, 1 << 20)?;
    // the generator holds one input in memory
    let file_bytes = p.count("file_kib", 1, 1 << 20)? * 1024;
    let window_kib = p.count("window_kib", 1, 16384)?;
    if !window_kib.is_power_of_two() {
        return Err(p.error(format!("parameter 'window_kib': expected a power of two from 1 to 16384, got {window_kib}")));
    }
    let levels = match p.given("level") {
        Some(_) => p.list("level", "compression levels from 1 to 9", |s| super::params::parse_whole(s).filter(|l| (1..=9).contains(l)))?,
        None => SPEC_LEVELS.to_vec(),
    };
    let kinds = p.list("kinds", "kinds among log, image, binary, random, tarball", |s| {
        KINDS.iter().find(|(name, _)| name.eq_ignore_ascii_case(s)).map(|&(_, k)| k)
    })?;
    let free_between = p.flag("free_between")?;
    let wsize = window_kib * 1024;
    let entry = if wsize <= 32768 { 2 } else { 4 };
    let mut layout = Layout::new(page_size, p.what());
    let t = Tables {
        window: layout.bytes(2 * wsize)?,
        prev: layout.bytes(wsize * entry)?,
        head: layout.bytes(wsize * entry)?,
        inbuf: layout.bytes(wsize)?,
        outbuf: layout.bytes(wsize / 2)?,
        d_buf: layout.bytes(wsize * entry)?,
        huft: layout.bytes(HUFT_BYTES)?,
        entry,
    };
    let bufs = [layout.bytes(file_bytes + FUDGE_BUF)?, layout.bytes(file_bytes + FUDGE_BUF)?, layout.bytes(file_bytes + FUDGE_BUF)?];
    let validate = layout.bytes(file_bytes.div_ceil(VALIDATE_SKIP))?;
    let span = layout.span_pages();
    Ok(Plan::new(span, None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let harness = Harness { bufs, validate, len: file_bytes };
        for f in 0..files {
            let data = synthesize(kinds[f as usize % kinds.len()], file_bytes as usize, wsize as usize, &mut rng);
            harness.run(e, t, wsize as usize, &levels, &data)?;
            if free_between && f + 1 < files {
                e.free_pages(0..span)?;
            }
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
    /// inflate's input buffer, and deflate's literal buffer (gzip's l_buf is inbuf).
    inbuf: u64,
    outbuf: u64,
    d_buf: u64,
    huft: u64,
    /// Bytes of a prev[], head[] or d_buf[] entry.
    entry: u64,
}

/// SPEC's harness: its three buffers and the validation samples.
struct Harness {
    bufs: [u64; 3],
    validate: u64,
    /// The input's length (each buffer's limit).
    len: u64,
}

impl Harness {
    /// One run of the benchmark on `data`.
    fn run(&self, e: &mut Emitter, t: Tables, wsize: usize, levels: &[u64], data: &[u8]) -> Flow {
        // spec_init: a byte of every KiB of each buffer
        for &buf in &self.bufs {
            for at in (0..self.len).step_by(INIT_STRIDE as usize) {
                e.write(buf + at)?;
            }
        }
        // spec_load: the input into buffer 0, then the validation samples
        copy(e, None, self.bufs[0], self.len)?;
        let samples = self.len.div_ceil(VALIDATE_SKIP);
        for i in 0..samples {
            e.read(self.bufs[0] + i * VALIDATE_SKIP)?;
            e.write(self.validate + i)?;
        }
        for &level in levels {
            let limits = LEVELS[level as usize - 1];
            let mut d = Deflate::new(e, t, wsize, limits, self.bufs[0], self.bufs[1], self.len + FUDGE_BUF);
            d.compress(data)?;
            let (items, compressed) = (std::mem::take(&mut d.stream), d.out_pos);
            // spec_reset(0), then inflate buffer 1 back into buffer 0
            copy(e, None, self.bufs[0], self.len)?;
            Inflate { e, t, wsize: wsize as u64, input: self.bufs[1], output: self.bufs[0] }.run(&items, compressed)?;
            for i in 0..samples {
                e.read(self.validate + i)?;
                e.read(self.bufs[0] + i * VALIDATE_SKIP)?;
            }
            // spec_reset(1)
            copy(e, None, self.bufs[1], compressed)?;
        }
        Ok(())
    }
}

/// Writes (and reads first, if `src` is given) `bytes` bytes, CHUNK at a time, a word
/// (8 bytes) per reference.
fn copy(e: &mut Emitter, src: Option<u64>, dst: u64, bytes: u64) -> Flow {
    for at in (0..bytes).step_by(CHUNK as usize) {
        let n = CHUNK.min(bytes - at);
        if let Some(src) = src {
            for w in (0..n).step_by(8) {
                e.read(src + at + w)?;
            }
        }
        for w in (0..n).step_by(8) {
            e.write(dst + at + w)?;
        }
    }
    Ok(())
}

/// One item of the compressed stream: a literal (`len` 0) or a match.
#[derive(Clone, Copy)]
struct Item {
    len: u16,
    dist: u32,
}

impl Item {
    /// Its bits in the compressed stream (fixed-length codes, see the module doc).
    fn bits(self) -> u64 {
        if self.len == 0 {
            8
        } else {
            12 + (u32::BITS - self.dist.leading_zeros()) as u64
        }
    }
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
    /// Tallied items since the last flush.
    items: Vec<Item>,
    matches: usize,
    /// Every item of the level's compressed stream, for the decompression.
    stream: Vec<Item>,
    /// Bytes in outbuf, and bytes already written to the output buffer.
    outcnt: u64,
    output: u64,
    out_pos: u64,
    /// Bytes the output buffer holds (its limit and slack).
    out_cap: u64,
    out_bits: u64,
}

impl<'e> Deflate<'e> {
    fn new(e: &'e mut Emitter, t: Tables, wsize: usize, limits: (usize, usize, usize), input: u64, output: u64, out_cap: u64) -> Self {
        let (max_insert, nice, max_chain) = limits;
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
            input,
            consumed: 0,
            items: Vec::new(),
            matches: 0,
            stream: Vec::new(),
            outcnt: 0,
            output,
            out_pos: 0,
            out_cap,
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

    fn compress(&mut self, data: &[u8]) -> Flow {
        // lm_init: clear the hash heads (and the links), fill the window
        let t = self.t;
        copy(self.e, None, t.head, self.wsize as u64 * t.entry)?;
        copy(self.e, None, t.prev, self.wsize as u64 * t.entry)?;
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
                let flush = self.tally(Item { len: match_length as u16, dist: (self.strstart - match_start) as u32 })?;
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
                self.tally(Item { len: 0, dist: 0 })?
            };
            if flush {
                self.flush_block()?;
            }
            while self.lookahead < MIN_LOOKAHEAD && self.consumed < data.len() {
                self.fill_window(data)?;
            }
        }
        self.flush_block()?;
        // the last partial byte, then what outbuf holds
        if !self.out_bits.is_multiple_of(8) {
            self.put_byte()?;
        }
        self.flush_outbuf()
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

    /// gzip's ct_tally: a literal or a match; true when the literal buffer or the
    /// distance buffer is full.
    fn tally(&mut self, item: Item) -> Got<bool> {
        let t = self.t;
        self.e.write(t.inbuf + self.items.len() as u64)?;
        if item.len > 0 {
            self.e.write(t.d_buf + self.matches as u64 * t.entry)?;
            self.matches += 1;
        }
        self.items.push(item);
        self.stream.push(item);
        Ok(self.items.len() == self.wsize - 1 || self.matches == self.wsize)
    }

    /// One byte of compressed output into outbuf (gzip's put_byte).
    fn put_byte(&mut self) -> Flow {
        self.e.write(self.t.outbuf + self.outcnt)?;
        self.outcnt += 1;
        if self.outcnt == self.wsize as u64 / 2 {
            self.flush_outbuf()?;
        }
        Ok(())
    }

    /// outbuf to the output buffer (flush_outbuf, write_buf, spec_write), up to the end of
    /// the buffer's slack.
    fn flush_outbuf(&mut self) -> Flow {
        let n = self.outcnt.min(self.out_cap - self.out_pos);
        copy(self.e, Some(self.t.outbuf), self.output + self.out_pos, n)?;
        self.out_pos += n;
        self.outcnt = 0;
        Ok(())
    }

    /// compress_block: the tallied items in order, their bits out through outbuf.
    fn flush_block(&mut self) -> Flow {
        let t = self.t;
        let mut dx = 0u64;
        for i in 0..self.items.len() {
            let item = self.items[i];
            self.e.read(t.inbuf + i as u64)?;
            if item.len > 0 {
                self.e.read(t.d_buf + dx * t.entry)?;
                dx += 1;
            }
            let bytes = (self.out_bits + item.bits()) / 8 - self.out_bits / 8;
            for _ in 0..bytes {
                self.put_byte()?;
            }
            self.out_bits += item.bits();
        }
        self.items.clear();
        self.matches = 0;
        Ok(())
    }

    /// gzip's fill_window: slide when needed, then read the next block of input.
    fn fill_window(&mut self, data: &[u8]) -> Flow {
        let (t, wsize) = (self.t, self.wsize);
        let mut more = 2 * wsize - self.lookahead - self.strstart;
        if self.strstart >= wsize + self.max_dist() {
            copy(self.e, Some(t.window + wsize as u64), t.window, wsize as u64)?;
            self.window.copy_within(wsize.., 0);
            self.strstart -= wsize;
            let entries = wsize as u64 * t.entry;
            copy(self.e, Some(t.head), t.head, entries)?;
            copy(self.e, Some(t.prev), t.prev, entries)?;
            for x in self.head.iter_mut().chain(self.prev.iter_mut()) {
                *x = x.saturating_sub(wsize as u32);
            }
            more += wsize;
        }
        let n = more.min(data.len() - self.consumed);
        let at = self.strstart + self.lookahead;
        // read_buf: spec_read copies the block from the input buffer into the window
        copy(self.e, Some(self.input + self.consumed as u64), t.window + at as u64, n as u64)?;
        self.window[at..at + n].copy_from_slice(&data[self.consumed..self.consumed + n]);
        self.filled = self.filled.max(at + n);
        self.consumed += n;
        self.lookahead += n;
        Ok(())
    }
}

/// gzip's inflate over the compressed stream of one level, from the input buffer into
/// the output buffer, through inbuf and the window.
struct Inflate<'e> {
    e: &'e mut Emitter,
    t: Tables,
    wsize: u64,
    input: u64,
    output: u64,
}

impl Inflate<'_> {
    fn run(self, items: &[Item], compressed: u64) -> Flow {
        let (t, wsize) = (self.t, self.wsize);
        // huft_build: the code tables
        copy(self.e, None, t.huft, HUFT_BYTES)?;
        // inbuf holds the compressed bytes [in_start, in_start + wsize)
        let mut in_start = 0u64;
        let mut in_end = 0u64;
        let mut bits = 0u64;
        let mut w = 0u64;
        let mut out_pos = 0u64;
        for (k, item) in items.iter().enumerate() {
            // the item's code bits: NEEDBITS reads inbuf a byte at a time
            let (from, to) = (bits / 8, (bits + item.bits()).div_ceil(8).min(compressed));
            for byte in from..to {
                if byte >= in_end {
                    // fill_inbuf: spec_read copies the next block of the input buffer
                    in_start = byte;
                    in_end = (byte + wsize).min(compressed);
                    copy(self.e, Some(self.input + in_start), t.inbuf, in_end - in_start)?;
                }
                self.e.read(t.inbuf + byte - in_start)?;
            }
            bits += item.bits();
            // the literal/length table entry, and the distance table's for a match
            self.e.read(t.huft + (k as u64 * 8) % (HUFT_BYTES / 2))?;
            if item.len == 0 {
                self.e.write(t.window + w)?;
                w += 1;
            } else {
                self.e.read(t.huft + HUFT_BYTES / 2 + (item.dist as u64 * 8) % (HUFT_BYTES / 2))?;
                let mut left = item.len as u64;
                while left > 0 {
                    // copy from `dist` back, a word at a time, within the window's wrap
                    let src = (w + wsize - item.dist as u64 % wsize) % wsize;
                    let n = left.min(8).min(wsize - w).min(wsize - src);
                    self.e.read(t.window + src)?;
                    self.e.write(t.window + w)?;
                    w += n;
                    left -= n;
                    if w == wsize {
                        copy(self.e, Some(t.window), self.output + out_pos, wsize)?;
                        out_pos += wsize;
                        w = 0;
                    }
                }
            }
            if w == wsize {
                copy(self.e, Some(t.window), self.output + out_pos, wsize)?;
                out_pos += wsize;
                w = 0;
            }
        }
        // flush_window: what the window holds
        copy(self.e, Some(t.window), self.output + out_pos, w)
    }
}
