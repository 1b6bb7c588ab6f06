//! Walker's alias method (Vose's construction): O(1) draws from a fixed discrete
//! distribution with one random `u64` and one table lookup per draw. Used by `zipf`,
//! where rejection-inversion sampling (`rand_distr::Zipf`) costs several `powf`/`exp`
//! calls per draw and would dominate generation time.

use rand::RngCore;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Keep `own` when the high 32 random bits are below this, else take `other`.
    threshold: u32,
    own: u32,
    other: u32,
}

pub(crate) struct AliasTable {
    buckets: Vec<Bucket>,
}

impl AliasTable {
    /// Outcome `i` has probability `weights[i] / sum(weights)`; outcome values are
    /// `labels[i]` (so a permutation can be folded into the table for free).
    /// `weights` must be finite, non-negative, not all zero, and fewer than 2^32.
    pub fn new(weights: &[f64], labels: &[u32]) -> Self {
        let n = weights.len();
        assert!(n > 0 && n <= u32::MAX as usize && labels.len() == n);
        let sum: f64 = weights.iter().sum();
        let scale = n as f64 / sum;
        // Scaled probabilities: mean 1. Buckets below 1 are topped up by one above 1.
        let mut prob: Vec<f64> = weights.iter().map(|w| w * scale).collect();
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let mut small: Vec<u32> = Vec::new();
        let mut large: Vec<u32> = Vec::new();
        for (i, &p) in prob.iter().enumerate() {
            if p < 1.0 {
                small.push(i as u32);
            } else {
                large.push(i as u32);
            }
        }
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            alias[s as usize] = l;
            prob[l as usize] -= 1.0 - prob[s as usize];
            if prob[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Leftovers (rounding) are full buckets.
        for i in small.into_iter().chain(large) {
            prob[i as usize] = 1.0;
        }
        let buckets = (0..n)
            .map(|i| {
                let p = prob[i].clamp(0.0, 1.0);
                let own = labels[i];
                if p >= 1.0 {
                    Bucket { threshold: u32::MAX, own, other: own }
                } else {
                    let threshold = (p * 4_294_967_296.0) as u32;
                    Bucket { threshold, own, other: labels[alias[i] as usize] }
                }
            })
            .collect();
        AliasTable { buckets }
    }

    /// One draw: `resolve(rng.next_u64())`.
    #[inline(always)]
    pub fn sample<R: RngCore>(&self, rng: &mut R) -> u32 {
        self.resolve(rng.next_u64())
    }

    /// The outcome for the random word `r`: low 32 bits pick the bucket
    /// (multiply-shift), high 32 bits decide between its own outcome and its alias.
    #[inline(always)]
    pub fn resolve(&self, r: u64) -> u32 {
        let b = self.buckets[self.bucket(r)];
        if ((r >> 32) as u32) < b.threshold {
            b.own
        } else {
            b.other
        }
    }

    /// Hints that `resolve(r)` comes soon (see [`super::emitter::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, r: u64) {
        super::emitter::prefetch(&self.buckets[self.bucket(r)]);
    }

    #[inline(always)]
    fn bucket(&self, r: u64) -> usize {
        (((r & 0xffff_ffff) * self.buckets.len() as u64) >> 32) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::AliasTable;
    use rand::SeedableRng;

    #[test]
    fn workload_alias_matches_weights() {
        let weights = [1.0, 2.0, 3.0, 4.0, 0.0];
        let labels = [10, 11, 12, 13, 14];
        let t = AliasTable::new(&weights, &labels);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let mut counts = [0u64; 5];
        let n = 1_000_000;
        for _ in 0..n {
            counts[(t.sample(&mut rng) - 10) as usize] += 1;
        }
        assert_eq!(counts[4], 0, "zero weight drawn");
        for i in 0..4 {
            let expected = weights[i] / 10.0;
            let got = counts[i] as f64 / n as f64;
            assert!((got - expected).abs() < 0.005, "outcome {i}: {got} vs {expected}");
        }
    }
}
