//! A workload as a [`RefSource`]: the generator runs on its own thread and sends full
//! batches over a bounded channel; `next_batch` swaps them into the caller's batch (no
//! copy) and sends the caller's old vectors back for reuse. Dropping the source
//! disconnects the channel, the generator's next send fails, its loops unwind through
//! `?`, and the drop joins the thread.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::emitter::{Chunk, Emitter, Flow};
use crate::trace::{RefBatch, RefSource, SourceMeta};
use crate::{Error, Result};

/// Batches in flight between generator and consumer.
const CHANNEL_BATCHES: usize = 3;

/// What a workload's validation produces: the generator and facts about its stream.
pub(crate) struct Plan {
    /// Every page number the generator emits is below this.
    pub span_pages: u64,
    /// Exact number of records, when known in closed form.
    pub records: Option<u64>,
    pub run: Box<dyn FnOnce(&mut Emitter) -> Flow + Send + 'static>,
}

impl Plan {
    pub fn new(span_pages: u64, records: Option<u64>, run: impl FnOnce(&mut Emitter) -> Flow + Send + 'static) -> Self {
        Plan { span_pages, records, run: Box::new(run) }
    }
}

pub(crate) struct WorkloadSource {
    meta: SourceMeta,
    chunks: Option<Receiver<Chunk>>,
    recycle: SyncSender<RefBatch>,
    distinct: u32,
    thread: Option<JoinHandle<()>>,
}

impl WorkloadSource {
    /// Starts the generator thread.
    pub fn spawn(name: &str, page_size: u64, plan: Plan) -> Result<Self> {
        let (out, chunks) = sync_channel::<Chunk>(CHANNEL_BATCHES);
        let (recycle, recycled) = sync_channel::<RefBatch>(CHANNEL_BATCHES + 1);
        let Plan { span_pages, records, run } = plan;
        let thread = std::thread::Builder::new()
            .name(format!("workload-{name}"))
            .spawn(move || {
                let mut emitter = Emitter::new(page_size, span_pages, out, recycled);
                if run(&mut emitter).is_ok() {
                    let _ = emitter.finish();
                }
            })
            .map_err(|e| Error::invalid(format!("workload {name}"), format!("cannot start the generator thread: {e}")))?;
        Ok(WorkloadSource {
            meta: SourceMeta {
                name: format!("workload:{name}"),
                page_size,
                processes: vec![(0, name.to_string())],
                records,
            },
            chunks: Some(chunks),
            recycle,
            distinct: 0,
            thread: Some(thread),
        })
    }

    /// Waits for the generator thread; a panic in it becomes an error.
    fn join(&mut self) -> Result<()> {
        if let Some(thread) = self.thread.take() {
            if let Err(panic) = thread.join() {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_string());
                let name = self.meta.name.trim_start_matches("workload:");
                return Err(Error::invalid(format!("workload {name}"), format!("generator failed: {message}")));
            }
        }
        Ok(())
    }
}

impl RefSource for WorkloadSource {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }

    fn next_batch(&mut self, batch: &mut RefBatch) -> Result<usize> {
        batch.clear();
        let Some(chunks) = &self.chunks else { return Ok(0) };
        match chunks.recv() {
            Ok(Chunk { batch: mut full, distinct }) => {
                std::mem::swap(batch, &mut full);
                self.distinct = distinct;
                // `full` now holds the caller's old vectors: hand them back for reuse.
                let _ = self.recycle.try_send(full);
                Ok(batch.len())
            }
            Err(_) => {
                // The generator finished (or failed): the stream ends here.
                self.chunks = None;
                self.join()?;
                Ok(0)
            }
        }
    }

    fn distinct_pages(&self) -> u32 {
        self.distinct
    }
}

impl Drop for WorkloadSource {
    fn drop(&mut self) {
        // Disconnect first so a generator blocked in (or about to) send stops, then wait.
        self.chunks = None;
        let _ = self.join();
    }
}
