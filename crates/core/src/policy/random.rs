//! RANDOM: evict a resident page chosen uniformly by a seeded generator (PCG), so runs
//! are reproducible bit for bit.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::ReplacementPolicy;
use crate::trace::PageId;

const NONE: u32 = u32::MAX;

#[derive(Debug)]
pub struct RandomPolicy {
    resident: Vec<PageId>,
    position: Vec<u32>,
    rng: Pcg64Mcg,
}

impl RandomPolicy {
    pub fn new(seed: u64) -> Self {
        RandomPolicy { resident: Vec::new(), position: Vec::new(), rng: Pcg64Mcg::seed_from_u64(seed) }
    }

    fn remove_at(&mut self, i: usize) -> PageId {
        let page = self.resident.swap_remove(i);
        if i < self.resident.len() {
            self.position[self.resident[i] as usize] = i as u32;
        }
        self.position[page as usize] = NONE;
        page
    }
}

impl ReplacementPolicy for RandomPolicy {
    fn name(&self) -> &'static str {
        "random"
    }
    fn reserve_pages(&mut self, pages: usize) {
        if pages > self.position.len() {
            self.position.resize(pages, NONE);
        }
    }
    #[inline]
    fn on_hit(&mut self, _page: PageId, _time: u64) {}
    #[inline]
    fn on_repeat(&mut self, _page: PageId, _time: u64, _n: u32) {}
    #[inline]
    fn on_insert(&mut self, page: PageId, _time: u64) {
        self.position[page as usize] = self.resident.len() as u32;
        self.resident.push(page);
    }
    fn select_victim(&mut self, _time: u64) -> PageId {
        let i = self.rng.gen_range(0..self.resident.len());
        self.remove_at(i)
    }
    fn on_remove(&mut self, page: PageId) {
        let i = self.position[page as usize] as usize;
        self.remove_at(i);
    }
}
