//! An in-memory [`RefSource`] over a vector of references: for tests, small generated
//! inputs and the Python API's list inputs.

use super::{Densifier, RefBatch, RefSource, Reference, SourceMeta, BATCH_RECORDS};

pub struct VecSource {
    meta: SourceMeta,
    refs: Vec<Reference>,
    pos: usize,
    densifier: Densifier,
}

impl VecSource {
    /// `refs` are taken as records: no folding is applied.
    pub fn new(name: &str, page_size: u64, refs: Vec<Reference>) -> Self {
        let mut pids: Vec<u32> = Vec::new();
        for r in &refs {
            if !pids.contains(&r.pid) {
                pids.push(r.pid);
            }
        }
        VecSource {
            meta: SourceMeta {
                name: name.to_string(),
                page_size,
                processes: pids.into_iter().map(|p| (p, String::new())).collect(),
                records: Some(refs.len() as u64),
            },
            refs,
            pos: 0,
            densifier: Densifier::new(),
        }
    }

    /// Names process `pid` (as a trace's process table would).
    pub fn set_process_name(&mut self, pid: u32, name: &str) {
        match self.meta.processes.iter_mut().find(|(p, _)| *p == pid) {
            Some(e) => e.1 = name.to_string(),
            None => self.meta.processes.push((pid, name.to_string())),
        }
    }

    /// Convenience: single-process reads of the given page numbers.
    pub fn from_pages(pages: &[u64]) -> Self {
        let refs = pages
            .iter()
            .map(|&page| Reference { pid: 0, page, kind: super::AccessKind::Read, repeat: 1, gap: 0 })
            .collect();
        Self::new("pages", 4096, refs)
    }
}

impl RefSource for VecSource {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }
    fn next_batch(&mut self, batch: &mut RefBatch) -> crate::Result<usize> {
        batch.clear();
        let end = (self.pos + BATCH_RECORDS).min(self.refs.len());
        for r in &self.refs[self.pos..end] {
            let id = self.densifier.id(r.pid, r.page);
            batch.push(id, r);
        }
        let n = end - self.pos;
        self.pos = end;
        Ok(n)
    }
    fn distinct_pages(&self) -> u32 {
        self.densifier.len()
    }
}
