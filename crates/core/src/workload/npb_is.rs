//! The memory access structure of NPB2 IS: integer sort by counting (bucket) sort. Only
//! addresses are simulated. Arrays, in layout order: key and key_buff (n_keys 8-byte
//! elements each) and count (max_key). Keys are drawn once, as NPB does: max_key/4 times
//! the sum of four seeded uniforms in [0, 1), a bell-shaped distribution.
//!
//! First create_seq writes every key. Then each iteration (NPB's rank, with the full sort
//! of full_verify folded in):
//! 1. like NPB, change two keys: write key[it] and key[it + 10] (when they exist);
//! 2. clear the counts: write count[0..max_key];
//! 3. count: for every i read key[i], read count[key[i]], write count[key[i]];
//! 4. prefix sum: for every k read count[k], write count[k] (the running sum in a register);
//! 5. place: for every i read key[i], read count[key[i]], write count[key[i]] (rank =
//!    --count[key]), write key_buff[rank];
//! 6. partial verification: for 5 evenly spaced i read key[i], read count[key[i]].

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "NPB IS access pattern: counting sort of random keys (random count[] updates, scattered key_buff writes)";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n_keys", "1048576", "number of keys (NPB class W = 2^20, A = 2^23)"),
    param("max_key", "65536", "keys are below this (NPB class W = 2^16, A = 2^19)"),
    param("iterations", "10", "rankings (NPB: 10)"),
];

/// Most keys, and largest max_key: the generator keeps keys and counts (4 bytes each).
const MAX_KEYS: u64 = 1 << 30;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let n_keys = p.count("n_keys", 1, MAX_KEYS)?;
    let max_key = p.count("max_key", 1, MAX_KEYS)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let a = Arrays { key: layout.array(n_keys)?, key_buff: layout.array(n_keys)?, count: layout.array(max_key)? };
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let scale = max_key as f64 / 4.0;
        let draw = |rng: &mut Pcg64| (0..4).map(|_| rng.gen::<f64>()).sum::<f64>() * scale;
        let mut keys: Vec<u32> = (0..n_keys).map(|_| (draw(&mut rng) as u64).min(max_key - 1) as u32).collect();
        let mut counts = vec![0u32; max_key as usize];
        // create_seq: the keys are written before they are sorted
        for i in 0..n_keys {
            e.write(a.key.at(i))?;
        }
        for it in 1..=iterations {
            for (i, value) in [(it, it % max_key), (it + 10, max_key - 1 - it % max_key)] {
                if i < n_keys {
                    keys[i as usize] = value as u32;
                    e.write(a.key.at(i))?;
                }
            }
            rank(e, &a, &keys, &mut counts)?;
        }
        Ok(())
    }))
}

struct Arrays {
    key: Array,
    key_buff: Array,
    count: Array,
}

fn rank(e: &mut Emitter, a: &Arrays, keys: &[u32], counts: &mut [u32]) -> Flow {
    for (k, c) in counts.iter_mut().enumerate() {
        *c = 0;
        e.write(a.count.at(k as u64))?;
    }
    for (i, &k) in keys.iter().enumerate() {
        e.read(a.key.at(i as u64))?;
        e.read(a.count.at(k as u64))?;
        e.write(a.count.at(k as u64))?;
        counts[k as usize] += 1;
    }
    let mut sum = 0;
    for (k, c) in counts.iter_mut().enumerate() {
        e.read(a.count.at(k as u64))?;
        sum += *c;
        *c = sum;
        e.write(a.count.at(k as u64))?;
    }
    for (i, &k) in keys.iter().enumerate() {
        e.read(a.key.at(i as u64))?;
        e.read(a.count.at(k as u64))?;
        e.write(a.count.at(k as u64))?;
        counts[k as usize] -= 1;
        e.write(a.key_buff.at(counts[k as usize] as u64))?;
    }
    let n = keys.len() as u64;
    for t in 0..5 {
        let i = t * n / 5;
        e.read(a.key.at(i))?;
        e.read(a.count.at(keys[i as usize] as u64))?;
    }
    Ok(())
}
