//! Page-out clustering of a BSD VM (mclustering-pageout.txt section 2): the cluster of a
//! dirty victim, mClustering's buffer of clusters (Algorithm 1), and the two swap
//! allocation policies. Pure functions over page numbers and a [`SwapSpace`], so the
//! paper's worked examples (figures 1 and 2) are unit tests.

use super::swap::SwapSpace;

/// The cluster of `victim`: the contiguous virtual pages around it that satisfy the
/// clustering condition `ok` (same VM area, dirty, in the inactive list, not busy).
/// Section 2: traverse up to `back` pages backward from the victim, then forward from
/// the page after it; when one direction meets a page that fails the condition, the
/// other direction goes on until the cluster has `max` pages. Returns the inclusive
/// range (first, last).
pub fn compose_cluster(victim: u64, max: u32, back: u32, ok: impl Fn(u64) -> bool) -> (u64, u64) {
    let max = max as u64;
    let (mut lo, mut hi) = (victim, victim);
    let mut back_blocked = false;
    while victim - lo < back as u64 {
        if lo == 0 || !ok(lo - 1) {
            back_blocked = true;
            break;
        }
        lo -= 1;
    }
    let mut forward_blocked = false;
    while hi - lo + 1 < max {
        if hi == u64::MAX || !ok(hi + 1) {
            forward_blocked = true;
            break;
        }
        hi += 1;
    }
    if forward_blocked && !back_blocked {
        while hi - lo + 1 < max && lo > 0 && ok(lo - 1) {
            lo -= 1;
        }
    }
    (lo, hi)
}

/// mClustering's buffer of `capacity` pages that collects whole clusters (Algorithm 1).
/// A cluster that does not fit flushes the buffer first; a cluster is never split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterBuffer<T> {
    capacity: usize,
    clusters: Vec<Vec<T>>,
    pages: usize,
}

impl<T> ClusterBuffer<T> {
    pub fn new(capacity: u32) -> Self {
        ClusterBuffer { capacity: capacity as usize, clusters: Vec::new(), pages: 0 }
    }

    pub fn pages(&self) -> usize {
        self.pages
    }

    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }

    /// Lines 3-12: puts `cluster` in the buffer, and returns what must be written now:
    /// the buffer's previous contents when the cluster did not fit (lines 8-11), or the
    /// full buffer when it is exactly full. A cluster larger than the buffer goes out
    /// alone after the buffer.
    pub fn offer(&mut self, cluster: Vec<T>) -> Vec<Vec<Vec<T>>> {
        let mut writes = Vec::new();
        if self.pages + cluster.len() > self.capacity && !self.clusters.is_empty() {
            writes.push(self.take());
        }
        if cluster.len() > self.capacity {
            writes.push(vec![cluster]);
            return writes;
        }
        self.pages += cluster.len();
        self.clusters.push(cluster);
        if self.pages == self.capacity {
            writes.push(self.take());
        }
        writes
    }

    /// Lines 13-14 (and the end of a page-out run): empties the buffer.
    pub fn take(&mut self) -> Vec<Vec<T>> {
        self.pages = 0;
        std::mem::take(&mut self.clusters)
    }
}

/// One disk write: `pages` consecutive slots from `slot`, holding the listed pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write<T> {
    pub slot: u64,
    pub pages: Vec<T>,
}

/// BSD VM's allocation for one cluster: a contiguous run for all of it; else the largest
/// free run (at most 15 pages, section 2) for its first pages, and the same again for
/// the rest. None when the swap area is full.
pub fn allocate_bsd<T: Clone>(swap: &mut SwapSpace, cluster: &[T]) -> Option<Vec<Write<T>>> {
    if let Some(slot) = swap.allocate(cluster.len() as u32) {
        return Some(vec![Write { slot, pages: cluster.to_vec() }]);
    }
    let mut writes = Vec::new();
    let mut rest = cluster;
    while !rest.is_empty() {
        let run = (swap.largest_free_run() as usize).min(rest.len()).min(15);
        if run == 0 {
            // full: give back what was taken so the caller sees a clean failure
            for w in &writes {
                let w: &Write<T> = w;
                swap.free(w.slot, w.pages.len() as u32);
            }
            return None;
        }
        let slot = swap.allocate(run as u32).expect("a run of the largest free length exists");
        writes.push(Write { slot, pages: rest[..run].to_vec() });
        rest = &rest[run..];
    }
    Some(writes)
}

/// mClustering's allocation for a buffer of clusters: one contiguous run for the whole
/// buffer (one write); else a run per cluster (a write each); else BSD's method for a
/// cluster that fits nowhere whole (section 2). Clusters are never split otherwise.
pub fn allocate_mclustering<T: Clone>(swap: &mut SwapSpace, clusters: &[Vec<T>]) -> Option<Vec<Write<T>>> {
    let all: Vec<T> = clusters.iter().flatten().cloned().collect();
    if let Some(slot) = swap.allocate(all.len() as u32) {
        return Some(vec![Write { slot, pages: all }]);
    }
    let mut writes = Vec::new();
    for c in clusters {
        match swap.allocate(c.len() as u32) {
            Some(slot) => writes.push(Write { slot, pages: c.clone() }),
            None => writes.extend(allocate_bsd(swap, c)?),
        }
    }
    Some(writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figure 1: six using (dirty) pages in the inactive list, victims in list order
    /// P2A, P6B, P8C; P1A, P3A, P4A are P2A's dirty neighbours in area A; a buffer of
    /// six pages. (P9X is unused: clean, freed without a write.)
    #[test]
    fn figure_1_three_clusters_one_write() {
        // virtual pages: area A = 1..=4, area B = 6, area C = 8; areas are apart
        let dirty = [1u64, 2, 3, 4, 6, 8];
        let ok = |p: u64| dirty.contains(&p);
        assert_eq!(compose_cluster(2, 16, 8, ok), (1, 4));
        assert_eq!(compose_cluster(6, 16, 8, ok), (6, 6));
        assert_eq!(compose_cluster(8, 16, 8, ok), (8, 8));
        let clusters = vec![vec![1u64, 2, 3, 4], vec![6], vec![8]];
        // BSD VM: one write per cluster
        let mut swap = SwapSpace::new(64);
        let bsd: Vec<_> = clusters.iter().flat_map(|c| allocate_bsd(&mut swap, c).unwrap()).collect();
        assert_eq!(bsd.len(), 3);
        // mClustering: the three clusters fill the buffer of six: one write of six pages
        let mut buf = ClusterBuffer::new(6);
        let mut flushed = Vec::new();
        for c in clusters {
            flushed.extend(buf.offer(c));
        }
        assert_eq!(flushed, vec![vec![vec![1, 2, 3, 4], vec![6], vec![8]]]);
        let mut swap = SwapSpace::new(64);
        let w = allocate_mclustering(&mut swap, &flushed[0]).unwrap();
        assert_eq!(w, vec![Write { slot: 0, pages: vec![1, 2, 3, 4, 6, 8] }]);
    }

    /// Figure 2: C1 = {P1A, P2A}, C2 = {P4B, P5B}, C3 = {P7C, P8C, P9C}; a buffer of six
    /// holding C1 and C2 has room for two pages, so C3 is not split: C1 and C2 are written
    /// (4 pages), then C3 starts the next buffer, written by the next flush.
    #[test]
    fn figure_2_flush_before_overflow() {
        let mut buf = ClusterBuffer::new(6);
        assert!(buf.offer(vec![1u64, 2]).is_empty());
        assert!(buf.offer(vec![4, 5]).is_empty());
        let flushed = buf.offer(vec![7, 8, 9]);
        assert_eq!(flushed, vec![vec![vec![1, 2], vec![4, 5]]]);
        assert_eq!(buf.pages(), 3);
        assert_eq!(buf.take(), vec![vec![7, 8, 9]]);
        assert!(buf.is_empty());
    }

    #[test]
    fn cluster_traversal_rules() {
        let all = |_: u64| true;
        // 8 back, then forward to 16 in all
        assert_eq!(compose_cluster(100, 16, 8, all), (92, 107));
        // backward blocked after 2: forward goes on to 16
        assert_eq!(compose_cluster(100, 16, 8, |p| p >= 98), (98, 113));
        // forward blocked at once: backward goes on past 8 to 16
        assert_eq!(compose_cluster(100, 16, 8, |p| p <= 100), (85, 100));
        // both blocked: what was traversed
        assert_eq!(compose_cluster(100, 16, 8, |p| (97..=102).contains(&p)), (97, 102));
        // near page 0
        assert_eq!(compose_cluster(3, 16, 8, all), (0, 15));
        // the FreeBSD 32-page bound
        assert_eq!(compose_cluster(100, 32, 8, all), (92, 123));
    }

    #[test]
    fn buffer_exactly_full_is_written_and_oversized_clusters_go_alone() {
        let mut buf = ClusterBuffer::new(4);
        assert_eq!(buf.offer(vec![1, 2, 3, 4]), vec![vec![vec![1, 2, 3, 4]]]);
        assert!(buf.offer(vec![5]).is_empty());
        assert_eq!(buf.offer((10..16).collect()), vec![vec![vec![5]], vec![(10..16).collect::<Vec<_>>()]]);
        assert!(buf.is_empty());
    }

    #[test]
    fn allocation_on_a_fragmented_swap() {
        // holes of 3 slots: 0-2 free, 3 used, 4-6 free, 7 used, ...
        let mut swap = SwapSpace::new(32);
        for s in (3..32).step_by(4) {
            assert_eq!(swap.allocate(4).map(|_| ()), Some(()));
            let _ = s;
        }
        let mut swap = SwapSpace::new(32);
        assert_eq!(swap.allocate(32), Some(0));
        for s in (0..32).step_by(4) {
            swap.free(s, 3);
        }
        // BSD: a 5-page cluster does not fit whole: 3 + 2 in two writes
        let w = allocate_bsd(&mut swap, &[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(w.iter().map(|w| w.pages.len()).collect::<Vec<_>>(), vec![3, 2]);
        // mClustering: a buffer of two 2-page clusters: no run of 4, one run each
        let w = allocate_mclustering(&mut swap, &[vec![10, 11], vec![12, 13]]).unwrap();
        assert_eq!(w.len(), 2);
        assert!(w.iter().all(|w| w.pages.len() == 2));
        // full
        let mut full = SwapSpace::new(2);
        assert!(allocate_bsd(&mut full, &[1, 2, 3]).is_none());
        assert_eq!(full.used(), 0);
    }
}
