//! The pagelab binary reader on arbitrary bytes as a plain file (first byte: the page
//! size to read at). Version 1 files (no checksums) reach the record parser directly;
//! version 2 and 3 (free records) inputs are also read with their checksums recomputed,
//! so that mutations of the body reach the parser and not only the checksum check.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pagelab_core::trace::TraceFormat;

#[path = "common.rs"]
mod common;

/// Recomputes the checksums of a version-2 or -3 file whose trailer can be walked.
fn reseal(b: &mut [u8]) -> Option<()> {
    let le32 = |b: &[u8], at: usize| -> Option<u32> { Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?)) };
    if b.len() < 56 || !(b[8] == 2 || b[8] == 3) {
        return None;
    }
    let trailer = usize::try_from(u64::from_le_bytes(b[48..56].try_into().ok()?)).ok()?;
    if trailer < 56 || trailer > b.len() {
        return None;
    }
    let count = le32(b, trailer)? as usize;
    let mut at = trailer + 4;
    for _ in 0..count.min(1 << 16) {
        let len = u16::from_le_bytes(b.get(at + 4..at + 6)?.try_into().ok()?) as usize;
        at += 6 + len;
        if at > b.len() {
            return None;
        }
    }
    let blocks = le32(b, at)? as usize;
    at += 4;
    let body = b.get(56..trailer)?.to_vec();
    for chunk in body.chunks(1 << 16).take(blocks) {
        b.get_mut(at..at + 4)?.copy_from_slice(&crc32(chunk).to_le_bytes());
        at += 4;
    }
    let mut meta = b[..56].to_vec();
    meta.extend_from_slice(b.get(trailer..at)?);
    b.get_mut(at..at + 4)?.copy_from_slice(&crc32(&meta).to_le_bytes());
    Some(())
}

/// CRC-32 (IEEE), bit by bit: the fuzz target does not share the engine's code.
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &x in data {
        c ^= x as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    common::read_all("x.plt", rest, Some(TraceFormat::Pagelab), common::page_size(selector));
    let mut sealed = rest.to_vec();
    if reseal(&mut sealed).is_some() {
        common::read_all("x.plt", &sealed, Some(TraceFormat::Pagelab), common::page_size(selector));
    }
});
