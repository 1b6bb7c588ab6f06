//! Batch streaming with read-ahead: a source is read on a second thread while the
//! caller consumes the previous batch, so decoding a trace overlaps with simulating it.
//! Batch buffers are recycled; at most a few batches are in flight, so memory stays
//! bounded however long the stream is.

use std::sync::mpsc::sync_channel;

use crate::trace::{Progress, RefBatch, RefSource, BATCH_RECORDS};
use crate::{Error, Result};

/// Batches in flight between the reader thread and the consumer.
const IN_FLIGHT: usize = 3;

/// Calls `consume(batch, distinct_pages_so_far)` for every batch of `src`, in order, and
/// `progress(records_so_far)` after each; returns the number of records. A progress hook
/// that returns `false` stops the run with [`Error::Interrupted`].
pub fn for_each_batch<F>(src: &mut dyn RefSource, progress: Progress, mut consume: F) -> Result<u64>
where
    F: FnMut(&RefBatch, usize) -> Result<()>,
{
    let (full_tx, full_rx) = sync_channel::<Result<(RefBatch, u32)>>(IN_FLIGHT);
    let (empty_tx, empty_rx) = sync_channel::<RefBatch>(IN_FLIGHT + 1);
    for _ in 0..IN_FLIGHT {
        empty_tx.send(RefBatch::with_capacity(BATCH_RECORDS)).expect("fresh channel");
    }
    std::thread::scope(|scope| {
        scope.spawn(move || {
            while let Ok(mut batch) = empty_rx.recv() {
                match src.next_batch(&mut batch) {
                    Ok(0) => return,
                    Ok(_) => {
                        let distinct = src.distinct_pages();
                        if full_tx.send(Ok((batch, distinct))).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = full_tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        let mut done = 0u64;
        let result = (|| {
            while let Ok(message) = full_rx.recv() {
                let (batch, distinct) = message?;
                consume(&batch, distinct as usize)?;
                done += batch.len() as u64;
                if !progress(done) {
                    return Err(Error::Interrupted);
                }
                let _ = empty_tx.send(batch);
            }
            Ok(done)
        })();
        // Dropping both ends of our side lets the reader finish whatever it is doing.
        drop(full_rx);
        drop(empty_tx);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::VecSource;

    #[test]
    fn every_record_once_in_order() {
        let pages: Vec<u64> = (0..200_000u64).map(|i| i % 977).collect();
        let mut src = VecSource::from_pages(&pages);
        let mut seen = Vec::new();
        let n = for_each_batch(&mut src, &mut |_| true, |b, distinct| {
            assert!(distinct <= 977);
            seen.extend_from_slice(&b.page);
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 200_000);
        assert_eq!(seen, pages);
    }

    #[test]
    fn stop_from_progress_and_from_consumer() {
        let pages: Vec<u64> = (0..300_000u64).collect();
        let mut src = VecSource::from_pages(&pages);
        let r = for_each_batch(&mut src, &mut |_| false, |_, _| Ok(()));
        assert!(matches!(r, Err(Error::Interrupted)));
        let mut src = VecSource::from_pages(&pages);
        let r = for_each_batch(&mut src, &mut |_| true, |_, _| Err(Error::invalid("x", "stop")));
        assert!(matches!(r, Err(Error::Invalid { .. })));
    }
}
