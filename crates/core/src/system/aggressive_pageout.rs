//! Aggressive page-out (gang-adaptive-paging.txt section 3.2, figure 3): at a job
//! switch, page out the outgoing process at once until the free frames cover the
//! incoming process's working set, so that the incoming process's faults find free
//! frames and are not slowed by page-outs scattered among them.
//!
//! The working set is estimated, as the paper's kernel does, from the pages the incoming
//! process referenced during its previous quantum; on its first quantum there is no
//! estimate and nothing is done. Decision left open by the paper: the incoming process's
//! pages still resident need no frame, so the target is its working set minus its
//! resident pages, plus the high watermark (so that the faults do not wake kswapd).
//! Frames held by the writes in flight count as free: they are on their way.

use super::machine::Machine;
use super::reclaim::walk;

impl Machine {
    pub(super) fn aggressive_page_out(&mut self, out: u16, incoming: u16) {
        let Some(ws) = self.gang.as_ref().and_then(|g| g.working_set[incoming as usize]) else {
            return;
        };
        let need = ws.saturating_sub(self.procs[incoming as usize].rss);
        let target = need + self.pool.watermarks.high;
        let mut sent = 0;
        let written = self.disk.stats().pages_written;
        while self.pool.free + self.pool.writing < target && self.procs[out as usize].rss > 0 {
            let Some(gid) = walk(&mut self.pages, &mut self.procs[out as usize]) else {
                break;
            };
            sent += self.evict(gid) as u64;
        }
        self.flush_buffer();
        let stats = &mut self.gang.as_mut().unwrap().stats;
        stats.ao_pages += sent;
        stats.ao_written += self.disk.stats().pages_written - written;
    }
}
