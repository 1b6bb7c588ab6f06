//! Selective page-out (gang-adaptive-paging.txt section 3.1, figure 2): after a job
//! switch, reclaim takes the outgoing process's pages before any other process's, and
//! falls back to the default policy only when the outgoing process has none left. This
//! keeps the incoming process's residual pages, which a global LRU would evict first
//! because they are older than the outgoing process's ("false eviction").
//!
//! "Oldest first" within the outgoing process is the Linux 2.2 `swap_out` walk of its
//! page table with second chance by referenced bits, as in the paper's 2.2 prototype:
//! the process is stopped, so after one round every bit is clear.

use super::config::Mechanism;
use super::machine::Machine;
use super::memory::Gid;
use super::reclaim::walk;

impl Machine {
    /// The next victim of selective page-out, if it is on and the outgoing process still
    /// has a page that can go.
    pub(super) fn selective_victim(&mut self) -> Option<Gid> {
        let g = self.gang.as_ref()?;
        if !g.has(Mechanism::So) {
            return None;
        }
        let o = g.outgoing?;
        if self.procs[o as usize].rss == 0 {
            return None;
        }
        let gid = walk(&mut self.pages, &mut self.procs[o as usize])?;
        self.gang.as_mut().unwrap().stats.so_pages += 1;
        Some(gid)
    }
}
