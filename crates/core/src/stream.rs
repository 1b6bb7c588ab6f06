//! Batch streaming with read-ahead: a source is read on a second thread while the
//! caller consumes the previous batch, so decoding a trace overlaps with simulating it.
//! Batch buffers are recycled; at most a few batches are in flight, so memory stays
//! bounded however long the stream is.

use std::sync::mpsc::sync_channel;

use crate::trace::{Densifier, Progress, RefBatch, RefSource, BATCH_RECORDS};
use crate::{Error, Result};

/// Batches in flight between the reader thread and the consumer.
const IN_FLIGHT: usize = 3;

/// Calls `consume(batch, distinct_pages_so_far)` for every batch of `src`, in order, and
/// `progress(records_so_far)` after each; returns the number of records. A progress hook
/// that returns `false` stops the run with [`Error::Interrupted`].
///
/// A source that hands over its id assignment ([`RefSource::detach_ids`]: the text and
/// oracleGeneral readers, whose 64-bit page numbers are looked up in a table far larger
/// than the cache) has it done on a third thread, between reading and consuming: on two
/// cores the reading and the lookups then share the core the simulation leaves, where
/// they were one thread that a cheap simulation waited for.
pub fn for_each_batch<F>(src: &mut dyn RefSource, progress: Progress, consume: F) -> Result<u64>
where
    F: FnMut(&RefBatch, usize) -> Result<()>,
{
    for_each_batch_staged(src, None, progress, consume)
}

/// Work on a batch, with its ids, before the consumer gets it.
pub type Stage<'a> = &'a mut (dyn FnMut(&mut RefBatch) + Send);

/// [`for_each_batch`], with `stage` run on every batch once its ids are assigned, on the
/// id stage's thread (the reader's, for a source without one): work that needs the
/// ids but not the consumer's state leaves the consumer's core.
pub fn for_each_batch_staged<F>(src: &mut dyn RefSource, stage: Option<Stage>, progress: Progress, consume: F) -> Result<u64>
where
    F: FnMut(&RefBatch, usize) -> Result<()>,
{
    match src.detach_ids() {
        None => stream(src, None, stage, progress, consume).0,
        Some(ids) => {
            let (result, ids) = stream(src, Some(ids), stage, progress, consume);
            if let Some(ids) = ids {
                src.attach_ids(ids);
            }
            result
        }
    }
}

type Full = Result<(RefBatch, u32)>;

/// The reader thread (and with `ids`, the id stage after it) and the consumer here;
/// returns the result and `ids` back.
fn stream<F>(src: &mut dyn RefSource, ids: Option<Densifier>, mut stage: Option<Stage>, progress: Progress, mut consume: F) -> (Result<u64>, Option<Densifier>)
where
    F: FnMut(&RefBatch, usize) -> Result<()>,
{
    let in_flight = if ids.is_some() { IN_FLIGHT + 1 } else { IN_FLIGHT };
    let (full_tx, full_rx) = sync_channel::<Full>(in_flight);
    let (empty_tx, empty_rx) = sync_channel::<RefBatch>(in_flight + 1);
    for _ in 0..in_flight {
        empty_tx.send(RefBatch::with_capacity(BATCH_RECORDS)).expect("fresh channel");
    }
    std::thread::scope(|scope| {
        // with an id stage, the reader sends to it and it to the consumer
        let (read_tx, id_stage, mut stage) = match ids {
            None => (full_tx, None, stage),
            Some(mut ids) => {
                let (read_tx, read_rx) = sync_channel::<Full>(in_flight);
                let id_stage = scope.spawn(move || {
                    while let Ok(message) = read_rx.recv() {
                        let message = message.map(|(mut batch, _)| {
                            let RefBatch { id, pid, page, .. } = &mut batch;
                            ids.ids(pid, page, id);
                            if let Some(stage) = stage.as_mut() {
                                stage(&mut batch);
                            }
                            (batch, ids.len())
                        });
                        let failed = message.is_err();
                        if full_tx.send(message).is_err() || failed {
                            break;
                        }
                    }
                    ids
                });
                (read_tx, Some(id_stage), None)
            }
        };
        scope.spawn(move || {
            while let Ok(mut batch) = empty_rx.recv() {
                match src.next_batch(&mut batch) {
                    Ok(0) => return,
                    Ok(_) => {
                        if let Some(stage) = stage.as_mut() {
                            stage(&mut batch);
                        }
                        let distinct = src.distinct_pages();
                        if read_tx.send(Ok((batch, distinct))).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = read_tx.send(Err(e));
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
        // Dropping both ends of our side lets the other threads finish what they do.
        drop(full_rx);
        drop(empty_tx);
        (result, id_stage.map(|s| s.join().expect("the id stage does not panic")))
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

    /// A source that hands over its ids (a CSV file here) gets them assigned on the id
    /// stage: the same ids as its own assignment, and its count of distinct pages back
    /// after the stream, also after a stop.
    #[test]
    fn the_id_stage_assigns_the_ids_the_source_would() {
        use crate::trace::open_trace;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut text = String::from("pid,page\n");
        for i in 0..200_000u64 {
            text.push_str(&format!("{},{}\n", i % 3, (i * 7919) % 5003 + (i % 11) * (1 << 40)));
        }
        std::fs::write(&path, text).unwrap();
        let mut own = open_trace(&path, None, None).unwrap();
        let (mut want, mut batch) = (Vec::new(), RefBatch::default());
        while own.next_batch(&mut batch).unwrap() > 0 {
            want.extend_from_slice(&batch.id);
        }
        let mut src = open_trace(&path, None, None).unwrap();
        let mut got: Vec<u32> = Vec::new();
        let n = for_each_batch(src.as_mut(), &mut |_| true, |b, distinct| {
            got.extend_from_slice(&b.id);
            // the ids assigned so far: every one of them is in a batch up to this one
            assert_eq!(distinct as u32, got.iter().copied().max().unwrap() + 1);
            Ok(())
        })
        .unwrap();
        assert_eq!((n as usize, &got), (want.len(), &want));
        assert_eq!(src.distinct_pages(), own.distinct_pages());
        // stopped after the first batch: the ids come back, and count what was assigned
        let mut src = open_trace(&path, None, None).unwrap();
        let r = for_each_batch(src.as_mut(), &mut |_| false, |_, _| Ok(()));
        assert!(matches!(r, Err(Error::Interrupted)));
        assert!(src.distinct_pages() > 0 && src.detach_ids().is_some());
    }

    /// The stage sees every batch once, with its ids, before the consumer, and what it
    /// writes reaches the consumer: with an id stage (a CSV) and without (pages in
    /// memory).
    #[test]
    fn the_stage_sees_every_batch_with_its_ids() {
        use crate::trace::open_trace;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let pages: Vec<u64> = (0..150_000u64).map(|i| (i * 7919) % 4001).collect();
        let text: String = std::iter::once("pid,page\n".to_string()).chain(pages.iter().map(|p| format!("0,{p}\n"))).collect();
        std::fs::write(&path, text).unwrap();
        let sources: Vec<Box<dyn RefSource>> = vec![open_trace(&path, None, None).unwrap(), Box::new(VecSource::from_pages(&pages))];
        for mut src in sources {
            let mut staged = 0usize;
            let mut stage = |b: &mut RefBatch| {
                staged += b.len();
                b.next_keys = b.id.iter().map(|&id| (id, id + 1)).collect();
            };
            let mut ids = Vec::new();
            let n = for_each_batch_staged(src.as_mut(), Some(&mut stage), &mut |_| true, |b, _| {
                assert!(b.next_keys.iter().zip(&b.id).all(|(&(a, z), &id)| a == id && z == id + 1));
                ids.extend_from_slice(&b.id);
                Ok(())
            })
            .unwrap();
            assert_eq!((n as usize, staged, ids.len()), (pages.len(), pages.len(), pages.len()));
            assert_eq!(ids.iter().max(), Some(&4000));
        }
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
