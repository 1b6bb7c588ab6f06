//! One job's serial reference stream read once for all the nodes its data is split over
//! (partition.rs): each node filters the same serial stream, so instead of every node
//! generating it again (a 4-node job generated it four times: half of a gang run's time
//! went to generating and filtering), the first node to need a batch reads it from the
//! source and the others take the same batch. A batch is dropped once every node has
//! passed it; the nodes run within a barrier of each other in simulated time (gang.rs),
//! so few batches are held. The nodes see exactly the batches a source of their own would
//! give: the same records, cut at the same places.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::trace::{RefBatch, RefSource, SourceMeta};
use crate::{Error, Result};

/// Labels each record of a batch once for every reader (the split's owner of each
/// record: partition.rs), so that the readers need not work it out each.
pub type Labeler = Box<dyn FnMut(&RefBatch, &mut Vec<u16>) + Send>;

/// A batch as the readers get it: its records, a label per record (empty without a
/// labeler), and the source's distinct pages after it.
#[derive(Debug)]
pub struct TeeBatch {
    pub batch: RefBatch,
    pub labels: Vec<u16>,
    pub distinct: u32,
}

struct TeeState {
    source: Box<dyn RefSource>,
    labeler: Option<Labeler>,
    /// Batches not yet passed by every reader, from index `first`.
    batches: VecDeque<Arc<TeeBatch>>,
    first: u64,
    /// Each reader's next batch index.
    cursors: Vec<u64>,
    done: bool,
    /// The source's error, given to every reader that reaches it.
    failed: Option<String>,
    /// A dropped batch's vectors, reused for the next read.
    spare: Option<TeeBatch>,
}

/// A serial stream shared by `readers` readers (one per node).
pub struct SerialTee {
    state: Mutex<TeeState>,
    meta: SourceMeta,
}

impl std::fmt::Debug for SerialTee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SerialTee({})", self.meta.name)
    }
}

impl SerialTee {
    /// `labeler`: run once on each batch read, its labels handed to every reader.
    pub fn new(source: Box<dyn RefSource>, readers: usize, labeler: Option<Labeler>) -> Arc<SerialTee> {
        let meta = source.meta().clone();
        Arc::new(SerialTee {
            state: Mutex::new(TeeState { source, labeler, batches: VecDeque::new(), first: 0, cursors: vec![0; readers], done: false, failed: None, spare: None }),
            meta,
        })
    }

    pub fn meta(&self) -> &SourceMeta {
        &self.meta
    }

    /// Reader `reader`'s next batch; None at the end of the stream.
    pub fn next(&self, reader: usize) -> Result<Option<Arc<TeeBatch>>> {
        let mut st = self.state.lock().expect("serial tee");
        let at = st.cursors[reader];
        if at >= st.first + st.batches.len() as u64 {
            if let Some(msg) = &st.failed {
                return Err(Error::invalid(self.meta.name.clone(), msg.clone()));
            }
            if st.done {
                return Ok(None);
            }
            let mut tb = st.spare.take().unwrap_or(TeeBatch { batch: RefBatch::default(), labels: Vec::new(), distinct: 0 });
            match st.source.next_batch(&mut tb.batch) {
                Ok(0) => {
                    st.done = true;
                    return Ok(None);
                }
                Ok(_) => {
                    tb.distinct = st.source.distinct_pages();
                    tb.labels.clear();
                    if let Some(label) = st.labeler.as_mut() {
                        label(&tb.batch, &mut tb.labels);
                    }
                    st.batches.push_back(Arc::new(tb));
                }
                Err(e) => {
                    st.failed = Some(e.to_string());
                    return Err(e);
                }
            }
        }
        let batch = st.batches[(at - st.first) as usize].clone();
        st.cursors[reader] += 1;
        // drop what every reader has passed (keeping the vectors of one for reuse)
        let slowest = st.cursors.iter().copied().min().unwrap_or(0);
        while st.first < slowest {
            let front = st.batches.pop_front().expect("a batch below every cursor");
            st.first += 1;
            if let Ok(b) = Arc::try_unwrap(front) {
                st.spare = Some(b);
            }
        }
        Ok(Some(batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceSpec;

    fn spec() -> SourceSpec {
        SourceSpec::Workload { name: "sor".into(), params: [("n".to_string(), "200".to_string()), ("iterations".to_string(), "4".to_string())].into(), page_size: 4096, seed: 2 }
    }

    /// Every reader gets exactly the batches of a source of its own, however the reads
    /// interleave, and the tee holds only what some reader has not passed.
    #[test]
    fn readers_get_the_sources_batches_in_any_interleaving() {
        let mut own = spec().open().unwrap();
        let mut want = Vec::new();
        let mut b = RefBatch::default();
        while own.next_batch(&mut b).unwrap() > 0 {
            want.push((b.id.clone(), b.kind.clone(), b.repeat.clone(), own.distinct_pages()));
        }
        assert!(want.len() > 3);
        // a labeler that marks even pages: run once per batch, seen by every reader
        let labeler: Labeler = Box::new(|b: &RefBatch, out: &mut Vec<u16>| out.extend(b.id.iter().map(|&id| (id % 2) as u16)));
        let tee = SerialTee::new(spec().open().unwrap(), 3, Some(labeler));
        let mut got: Vec<Vec<_>> = vec![Vec::new(); 3];
        let mut done = [false; 3];
        let mut step = 0usize;
        while !done.iter().all(|&d| d) {
            // reader 0 twice as often as 1, reader 2 in bursts
            let r = [0, 0, 1, 2, 2, 2, 0, 1][step % 8];
            step += 1;
            if done[r] {
                continue;
            }
            match tee.next(r).unwrap() {
                Some(t) => {
                    assert_eq!(t.labels, t.batch.id.iter().map(|&id| (id % 2) as u16).collect::<Vec<_>>());
                    got[r].push((t.batch.id.clone(), t.batch.kind.clone(), t.batch.repeat.clone(), t.distinct));
                }
                None => done[r] = true,
            }
            let st = tee.state.lock().unwrap();
            let (lo, hi) = (st.cursors.iter().min().unwrap(), st.cursors.iter().max().unwrap());
            assert!(st.batches.len() as u64 <= hi - lo + 1);
        }
        for g in got {
            assert_eq!(g, want);
        }
    }
}
