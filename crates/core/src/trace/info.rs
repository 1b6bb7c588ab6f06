//! `trace info`: one pass over a source that counts what it holds.
use rustc_hash::FxHashMap;

use super::{AccessKind, Progress, RefBatch, RefSource, BATCH_RECORDS};
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pid: u32,
    pub name: String,
    pub references: u64,
    pub distinct_pages: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceInfo {
    pub name: String,
    pub page_size: u64,
    pub records: u64,
    pub references: u64,
    pub distinct_pages: u64,
    pub footprint_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    pub instructions: u64,
    /// Free records: pages given back (munmap, brk), which are not references.
    pub frees: u64,
    pub processes: Vec<ProcessInfo>,
}

pub fn trace_info(src: &mut dyn RefSource, progress: Progress) -> Result<TraceInfo> {
    let mut batch = RefBatch::with_capacity(BATCH_RECORDS);
    let (mut records, mut references) = (0u64, 0u64);
    let mut by_kind = [0u64; 3];
    let mut frees = 0u64;
    // per process: (pid, references, distinct pages), in order of first appearance
    let mut procs: Vec<(u32, u64, u64)> = Vec::new();
    let mut index: FxHashMap<u32, usize> = FxHashMap::default();
    // ids are assigned in first-touch order: an id not seen before is the next one
    let mut seen: Vec<bool> = Vec::new();
    loop {
        let n = src.next_batch(&mut batch)?;
        if n == 0 {
            break;
        }
        let mut last: Option<(u32, usize)> = None;
        for i in 0..batch.len() {
            let pid = batch.pid[i];
            let p = match last {
                Some((lp, li)) if lp == pid => li,
                _ => {
                    let next = procs.len();
                    let li = *index.entry(pid).or_insert(next);
                    if li == next {
                        procs.push((pid, 0, 0));
                    }
                    last = Some((pid, li));
                    li
                }
            };
            let r = batch.repeat[i] as u64;
            references += r;
            match batch.kind[i] {
                AccessKind::Free => frees += 1,
                k => by_kind[k as usize] += r,
            }
            procs[p].1 += r;
            let id = batch.id[i] as usize;
            if id >= seen.len() {
                seen.resize((id + 1).max(seen.len() * 2), false);
            }
            if !seen[id] {
                seen[id] = true;
                procs[p].2 += 1;
            }
        }
        records += n as u64;
        if !progress(records) {
            return Err(Error::Interrupted);
        }
    }
    let meta = src.meta();
    let distinct = src.distinct_pages() as u64;
    let name_of = |pid: u32| meta.processes.iter().find(|(p, _)| *p == pid).map(|(_, n)| n.clone()).unwrap_or_default();
    Ok(TraceInfo {
        name: meta.name.clone(),
        page_size: meta.page_size,
        records,
        references,
        distinct_pages: distinct,
        footprint_bytes: distinct * meta.page_size,
        reads: by_kind[AccessKind::Read as usize],
        writes: by_kind[AccessKind::Write as usize],
        instructions: by_kind[AccessKind::Instruction as usize],
        frees,
        processes: procs
            .into_iter()
            .map(|(pid, references, distinct_pages)| ProcessInfo { pid, name: name_of(pid), references, distinct_pages })
            .collect(),
    })
}
