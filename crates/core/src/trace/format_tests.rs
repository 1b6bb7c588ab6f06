//! Tests of the trace formats: round trips, detection, page sizes, bad inputs.
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::error::Position;
use crate::Error;

fn r(pid: u32, page: u64, kind: AccessKind, repeat: u32, gap: u32) -> Reference {
    Reference { pid, page, kind, repeat, gap }
}

fn sample() -> Vec<Reference> {
    use AccessKind::*;
    vec![
        r(7, 100, Read, 1, 0),
        r(7, 101, Write, 3, 0),
        r(9, 100, Instruction, 1, 12),
        r(7, 100, Read, 2, 0),
        r(9, 100, Read, 70000, 0),
        r(7, u64::MAX, Write, 1, 5),
        r(9, 0, Read, 1, 0),
        r(7, 101, Read, 1, u32::MAX),
    ]
}

fn collect(src: &mut dyn RefSource) -> crate::Result<Vec<(PageId, Reference)>> {
    let mut out = Vec::new();
    let mut b = RefBatch::default();
    loop {
        let n = src.next_batch(&mut b)?;
        if n == 0 {
            return Ok(out);
        }
        assert!(n <= BATCH_RECORDS && n == b.len());
        for i in 0..n {
            out.push((b.id[i], b.get(i)));
        }
    }
}

fn read(path: &Path, format: Option<TraceFormat>, ps: Option<u64>) -> crate::Result<Vec<(PageId, Reference)>> {
    let mut s = open_trace(path, format, ps)?;
    collect(s.as_mut())
}

fn write(refs: &[Reference], page_size: u64, out: &Path, format: TraceFormat, compress: bool) -> u64 {
    let mut src = VecSource::new("mem", page_size, refs.to_vec());
    convert(&mut src, out, format, compress, &mut |_| true).unwrap()
}

fn expected(refs: &[Reference]) -> Vec<(PageId, Reference)> {
    let mut src = VecSource::new("mem", 4096, refs.to_vec());
    collect(&mut src).unwrap()
}

fn format_err(e: Error) -> (PathBuf, Position, String) {
    match e {
        Error::Format { file, position, message } => (file, position, message),
        other => panic!("expected a format error, got {other:?}"),
    }
}

/// Offset of the block-checksum count in a version-2 pagelab file: the end of the
/// process table that starts at `trailer_offset`.
fn checksum_table_at(b: &[u8]) -> usize {
    let mut at = u64::from_le_bytes(b[48..56].try_into().unwrap()) as usize;
    let count = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    at += 4;
    for _ in 0..count {
        let len = u16::from_le_bytes([b[at + 4], b[at + 5]]) as usize;
        at += 6 + len;
    }
    at
}

/// Recomputes the checksums of a version-2 raw pagelab file after a test changed it, as
/// docs/trace-format.md lays them out: a CRC-32 per 64 KiB block of the body, then one of
/// the header and the trailer.
fn reseal(b: &mut [u8]) {
    let trailer = u64::from_le_bytes(b[48..56].try_into().unwrap()) as usize;
    let mut at = checksum_table_at(b) + 4;
    for block in b[56..trailer].chunks(1 << 16).map(crc32fast::hash).collect::<Vec<_>>() {
        b[at..at + 4].copy_from_slice(&block.to_le_bytes());
        at += 4;
    }
    let mut h = crc32fast::Hasher::new();
    h.update(&b[..56]);
    h.update(&b[trailer..at]);
    b[at..at + 4].copy_from_slice(&h.finalize().to_le_bytes());
}

/// The same trace in format version 1 (no checksums).
fn to_version_1(b: &[u8]) -> Vec<u8> {
    let mut v = b[..checksum_table_at(b)].to_vec();
    v[8] = 1;
    v
}

/// Canonical folding, the same rule the text readers apply.
fn fold(refs: &[Reference]) -> Vec<Reference> {
    let mut out: Vec<Reference> = Vec::new();
    for &x in refs {
        if let Some(p) = out.last_mut() {
            if p.pid == x.pid && p.page == x.page && p.kind == x.kind && x.gap == 0 {
                if let Some(s) = p.repeat.checked_add(x.repeat) {
                    p.repeat = s;
                    continue;
                }
            }
        }
        out.push(x);
    }
    out
}

#[test]
fn pagelab_round_trip_raw_and_zstd() {
    let dir = tempfile::tempdir().unwrap();
    for compress in [false, true] {
        let p = dir.path().join(if compress { "a.plt.zst" } else { "a.plt" });
        assert_eq!(write(&sample(), 8192, &p, TraceFormat::Pagelab, compress), 8);
        let mut s = open_trace(&p, None, None).unwrap();
        assert_eq!(s.meta().page_size, 8192);
        assert_eq!(s.meta().records, Some(8));
        assert_eq!(s.meta().processes, vec![(7, String::new()), (9, String::new())]);
        let got = collect(s.as_mut()).unwrap();
        assert_eq!(got, expected(&sample()));
        assert_eq!(s.distinct_pages(), 5);
        // info
        let mut s = open_trace(&p, None, None).unwrap();
        let info = trace_info(s.as_mut(), &mut |_| true).unwrap();
        assert_eq!(info.records, 8);
        assert_eq!(info.references, 1 + 3 + 1 + 2 + 70000 + 1 + 1 + 1);
        assert_eq!(info.writes, 4);
        assert_eq!(info.instructions, 1);
        assert_eq!(info.distinct_pages, 5);
        assert_eq!(info.footprint_bytes, 5 * 8192);
        assert_eq!(info.processes.iter().map(|p| (p.pid, p.distinct_pages)).collect::<Vec<_>>(), vec![(7, 3), (9, 2)]);
    }
}

#[test]
fn pagelab_header_and_compression_flag() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.plt");
    write(&sample(), 4096, &p, TraceFormat::Pagelab, true);
    let b = std::fs::read(&p).unwrap();
    assert_eq!(&b[..8], b"PAGELAB\0");
    assert_eq!(u16::from_le_bytes([b[10], b[11]]), 3); // zstd + gaps
    assert_eq!(&b[56..60], &[0x28, 0xB5, 0x2F, 0xFD]);
}

#[test]
fn whole_file_zstd_pagelab() {
    let dir = tempfile::tempdir().unwrap();
    for inner_compressed in [false, true] {
        let p = dir.path().join("a.plt");
        write(&sample(), 4096, &p, TraceFormat::Pagelab, inner_compressed);
        let z = dir.path().join("whole.zst");
        std::fs::write(&z, zstd::encode_all(&std::fs::read(&p).unwrap()[..], 3).unwrap()).unwrap();
        let mut s = open_trace(&z, None, None).unwrap();
        assert_eq!(collect(s.as_mut()).unwrap(), expected(&sample()));
        assert_eq!(s.meta().processes.iter().map(|p| p.0).collect::<Vec<_>>(), vec![7, 9]);
    }
}

#[test]
fn pagelab_process_names_survive() {
    let dir = tempfile::tempdir().unwrap();
    let lk = b"==1== Lackey\nI  00001000,3\n L 00002000,8\n";
    let p = dir.path().join("cap.plt");
    let st = capture_lackey(&lk[..], "prog", &p, 4096, false, false, &mut |_| true).unwrap();
    assert_eq!(st, CaptureStats { lines: 3, references: 2, records: 2, distinct_pages: 2 });
    let s = open_trace(&p, None, None).unwrap();
    assert_eq!(s.meta().processes, vec![(0, "prog".to_string())]);
    // names survive a second conversion
    let mut s = s;
    let q = dir.path().join("copy.plt");
    convert(s.as_mut(), &q, TraceFormat::Pagelab, false, &mut |_| true).unwrap();
    assert_eq!(open_trace(&q, None, None).unwrap().meta().processes, vec![(0, "prog".to_string())]);
}

/// `trace capture --data-only`: instruction fetches are dropped while parsing; loads,
/// stores and modifies (and the pages an access spans) stay, and fold as before.
#[test]
fn capture_data_only_drops_instruction_fetches() {
    let dir = tempfile::tempdir().unwrap();
    let lk = b"==1== Lackey\nI  00001000,3\n L 00002000,8\nI  00001003,2\n S 00002008,4\n M 00003ffc,8\nI  00005000,4\n";
    let all = dir.path().join("all.plt");
    let st = capture_lackey(&lk[..], "prog", &all, 4096, false, false, &mut |_| true).unwrap();
    // I 1, L 2, I 1, S 2, M 3 and 4 (it spans two pages), I 5
    assert_eq!(st, CaptureStats { lines: 7, references: 7, records: 7, distinct_pages: 5 });
    let data = dir.path().join("data.plt");
    let st = capture_lackey(&lk[..], "prog", &data, 4096, false, true, &mut |_| true).unwrap();
    // what is left: the load, the store, the modify's two pages
    assert_eq!(st, CaptureStats { lines: 7, references: 4, records: 4, distinct_pages: 3 });
    let mut s = open_trace(&data, None, None).unwrap();
    let got: Vec<(u64, AccessKind)> = collect(s.as_mut()).unwrap().iter().map(|(_, r)| (r.page, r.kind)).collect();
    assert_eq!(got, vec![(2, AccessKind::Read), (2, AccessKind::Write), (3, AccessKind::Write), (4, AccessKind::Write)]);
}

#[test]
fn csv_round_trip_raw_and_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let refs = fold(&sample());
    for compress in [false, true] {
        let p = dir.path().join(if compress { "a.csv.zst" } else { "a.csv" });
        write(&refs, 8192, &p, TraceFormat::Csv, compress);
        let mut s = open_trace(&p, None, None).unwrap();
        assert_eq!(s.meta().page_size, 8192);
        assert_eq!(collect(s.as_mut()).unwrap(), expected(&refs));
    }
    // a gap that first appears after the header
    let mut late: Vec<Reference> = (0..BATCH_RECORDS as u64 + 10).map(|i| r(1, i % 3, AccessKind::Read, 1, 0)).collect();
    late.push(r(1, 6, AccessKind::Write, 2, 9));
    let p = dir.path().join("late.csv");
    write(&late, 4096, &p, TraceFormat::Csv, false);
    assert_eq!(read(&p, None, None).unwrap(), expected(&late));
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.starts_with("# page_size=4096\npid,page,kind,repeat\n"), "{text}");
}

#[test]
fn csv_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.txt");
    // headerless: value | value kind | pid value | pid value kind; 0x = address
    std::fs::write(&p, "# page_size=8192\n# comment\n\n5\n0x4000 w\n3 5\n3 7 I\n3,7,i\n").unwrap();
    let got: Vec<Reference> = read(&p, None, None).unwrap().into_iter().map(|x| x.1).collect();
    use AccessKind::*;
    assert_eq!(got, vec![r(0, 5, Read, 1, 0), r(0, 2, Write, 1, 0), r(3, 5, Read, 1, 0), r(3, 7, Instruction, 2, 0)]);
    // header, case-insensitive, whitespace separated, aliases
    std::fs::write(&p, "PID Address Op Count\n1 0x1000 store 3\n1 4097 L 1\n").unwrap();
    let got: Vec<Reference> = read(&p, None, None).unwrap().into_iter().map(|x| x.1).collect();
    assert_eq!(got, vec![r(1, 1, Write, 3, 0), r(1, 1, Read, 1, 0)]);
}

#[test]
fn csv_page_size_regrouping_end_to_end_example() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.csv");
    std::fs::write(&p, "pid,addr,kind\n1,0x0,r\n1,0x64,r\n1,0x1388,r\n1,0x2328,r\n1,0x11170,r\n1,0x1004,r\n").unwrap();
    let got = read(&p, None, Some(8192)).unwrap();
    assert_eq!(got.iter().map(|x| x.1.page).collect::<Vec<_>>(), vec![0, 1, 8, 0]);
    assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 2, 0]);
    assert_eq!(got[0].1.repeat, 3);
    // byte addresses can be read at a smaller page size than the default
    assert_eq!(read(&p, None, Some(1024)).unwrap().len(), 5);
    // page numbers of 4096-byte pages cannot
    let q = dir.path().join("b.csv");
    std::fs::write(&q, "1\n2\n").unwrap();
    let e = read(&q, None, Some(1024)).unwrap_err();
    assert!(e.to_string().contains("line 1"), "{e}");
}

#[test]
fn pagelab_regrouping() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.plt");
    use AccessKind::*;
    let refs = vec![r(1, 0, Read, 1, 0), r(1, 1, Read, 2, 0), r(1, 2, Read, 1, 0), r(1, 5, Write, 1, 0), r(1, 3, Read, 1, 0)];
    write(&refs, 4096, &p, TraceFormat::Pagelab, false);
    let mut s = open_trace(&p, None, Some(8192)).unwrap();
    assert_eq!(s.meta().page_size, 8192);
    assert_eq!(s.meta().records, None);
    let got = collect(s.as_mut()).unwrap();
    assert_eq!(got, vec![(0, r(1, 0, Read, 3, 0)), (1, r(1, 1, Read, 1, 0)), (2, r(1, 2, Write, 1, 0)), (1, r(1, 1, Read, 1, 0))]);
    // smaller than native, or not a valid page size
    for bad in [2048, 3000, 0] {
        match open_trace(&p, None, Some(bad)) {
            Err(Error::Invalid { message, .. }) => assert!(message.contains("a.plt") && message.contains(&bad.to_string()), "{message}"),
            Err(e) => panic!("unexpected {e}"),
            Ok(_) => panic!("page size {bad} accepted"),
        }
    }
}

#[test]
fn oracle_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    use AccessKind::*;
    let refs = vec![r(0, 10, Read, 2, 0), r(0, 11, Write, 1, 0), r(0, 10, Read, 1, 0), r(3, 12, Read, 3, 0)];
    for compress in [false, true] {
        let p = dir.path().join(if compress { "a.oracleGeneral.zst" } else { "a.oracleGeneral" });
        assert_eq!(write(&refs, 4096, &p, TraceFormat::Oracle, compress), 7);
        if !compress {
            let b = std::fs::read(&p).unwrap();
            assert_eq!(b.len(), 7 * 24);
            let next: Vec<i64> = b.chunks(24).map(|c| i64::from_le_bytes(c[16..24].try_into().unwrap())).collect();
            assert_eq!(next, vec![1, 3, -1, -1, 5, 6, -1]);
            let clock: Vec<u32> = b.chunks(24).map(|c| u32::from_le_bytes(c[0..4].try_into().unwrap())).collect();
            assert_eq!(clock, (0..7).collect::<Vec<_>>());
            assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 4096);
        }
        let got = read(&p, None, None).unwrap();
        let pages: Vec<u64> = got.iter().flat_map(|x| std::iter::repeat(x.1.page).take(x.1.repeat as usize)).collect();
        assert_eq!(pages, vec![10, 10, 11, 10, 12, 12, 12]);
        assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 0, 2]);
    }
}

#[test]
fn lackey_reading_and_page_crossing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.lackey");
    std::fs::write(
        &p,
        "==12== Lackey, an example Valgrind tool\n--12-- hello\n\nI  00000ffe,4\n L 00001000,8\n S 00002ff8,16\n M 00005000,4\n",
    )
    .unwrap();
    let mut s = open_trace(&p, None, None).unwrap();
    assert_eq!(s.meta().processes, vec![(0, "t.lackey".to_string())]);
    let got: Vec<Reference> = collect(s.as_mut()).unwrap().into_iter().map(|x| x.1).collect();
    use AccessKind::*;
    assert_eq!(
        got,
        vec![r(0, 0, Instruction, 1, 0), r(0, 1, Instruction, 1, 0), r(0, 1, Read, 1, 0), r(0, 2, Write, 1, 0), r(0, 3, Write, 1, 0), r(0, 5, Write, 1, 0)]
    );
    // detection by content for a file without a telling name
    let q = dir.path().join("noext");
    std::fs::copy(&p, &q).unwrap();
    assert_eq!(format::detect(&q).unwrap(), TraceFormat::Lackey);
}

#[test]
fn detection() {
    let dir = tempfile::tempdir().unwrap();
    let plt = dir.path().join("x.data");
    write(&sample(), 4096, &plt, TraceFormat::Pagelab, false);
    assert_eq!(format::detect(&plt).unwrap(), TraceFormat::Pagelab);
    let csvz = dir.path().join("x.csv.zst");
    write(&fold(&sample()), 4096, &csvz, TraceFormat::Csv, true);
    assert_eq!(format::detect(&csvz).unwrap(), TraceFormat::Csv);
    let txt = dir.path().join("noext");
    std::fs::write(&txt, "1\n2\n").unwrap();
    assert_eq!(format::detect(&txt).unwrap(), TraceFormat::Csv);
    let bin = dir.path().join("x.oracleGeneral");
    write(&sample(), 4096, &bin, TraceFormat::Oracle, false);
    assert_eq!(format::detect(&bin).unwrap(), TraceFormat::Oracle);
    let unknown = dir.path().join("x.weird");
    std::fs::write(&unknown, [0u8, 1, 2, 3]).unwrap();
    let e = format::detect(&unknown).unwrap_err().to_string();
    assert!(e.contains("x.weird") && e.contains("--format") && e.contains("oracle"), "{e}");
    let missing = dir.path().join("absent.plt");
    assert!(matches!(open_trace(&missing, None, None), Err(Error::Io { .. })));
    assert!(matches!(open_trace(&missing, Some(TraceFormat::Csv), None), Err(Error::Io { .. })));
}

#[test]
fn wrong_magic_and_unfinished_header() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.plt");
    std::fs::write(&p, [b"NOTATRACE".as_slice(), &[0u8; 100]].concat()).unwrap();
    let (file, pos, msg) = format_err(read(&p, Some(TraceFormat::Pagelab), None).unwrap_err());
    assert_eq!((file, pos), (p.clone(), Position::Byte(0)));
    assert!(msg.contains("magic"), "{msg}");
    // an unfinished writer leaves the placeholder record count
    let good = dir.path().join("good.plt");
    write(&sample(), 4096, &good, TraceFormat::Pagelab, false);
    let mut b = std::fs::read(&good).unwrap();
    b[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&p, &b).unwrap();
    let (_, pos, msg) = format_err(read(&p, None, None).unwrap_err());
    assert_eq!(pos, Position::Byte(24));
    assert!(msg.contains("never finished"), "{msg}");
    // unsupported version
    let mut b = std::fs::read(&good).unwrap();
    b[8] = 4;
    std::fs::write(&p, &b).unwrap();
    let (_, pos, _) = format_err(read(&p, None, None).unwrap_err());
    assert_eq!(pos, Position::Byte(8));
}

#[test]
fn truncated_pagelab_every_cut_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut refs = sample();
    refs.extend((0..300).map(|i| r(1, i % 37, AccessKind::Read, 1 + (i % 3) as u32, 0)));
    for compress in [false, true] {
        let good = dir.path().join("good.plt");
        write(&refs, 4096, &good, TraceFormat::Pagelab, compress);
        let b = std::fs::read(&good).unwrap();
        let cut = dir.path().join("cut.plt");
        for n in 0..b.len() {
            std::fs::write(&cut, &b[..n]).unwrap();
            let e = read(&cut, None, None).expect_err("a cut file must not read");
            let s = e.to_string();
            assert!(s.starts_with(&cut.display().to_string()), "{s}");
            match e {
                Error::Format { position: Position::Byte(_), .. } => {}
                other => panic!("cut at {n}: {other}"),
            }
        }
        // also as a whole-file zstd of a cut file
        let z = dir.path().join("cut.zst");
        for n in (0..b.len()).step_by(7) {
            std::fs::write(&z, zstd::encode_all(&b[..n], 1).unwrap()).unwrap();
            let res = read(&z, Some(TraceFormat::Pagelab), None);
            assert!(res.is_err(), "cut at {n} of {}: {:?} {:?}", b.len(), res.map(|v| v.len()), &b[n..]);
        }
        // extra bytes at the end
        std::fs::write(&cut, [&b[..], &[0u8]].concat()).unwrap();
        assert!(matches!(read(&cut, None, None), Err(Error::Format { .. })));
    }
}

#[test]
fn truncated_body_message() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.plt");
    write(&sample(), 4096, &good, TraceFormat::Pagelab, false);
    let mut b = std::fs::read(&good).unwrap();
    // claim one more record than there are (the body then ends early)
    let n = u64::from_le_bytes(b[24..32].try_into().unwrap());
    b[24..32].copy_from_slice(&(n + 1).to_le_bytes());
    reseal(&mut b);
    std::fs::write(&good, &b).unwrap();
    let e = read(&good, None, None).unwrap_err().to_string();
    assert!(e.contains("expected record 8 of 9, found end of file"), "{e}");
}

#[test]
fn corrupt_zstd_body() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("z.plt.zst");
    let refs: Vec<Reference> = (0..20000u64).map(|i| r(0, (i * 7919) % 3000, AccessKind::Read, 1, 0)).collect();
    write(&refs, 4096, &good, TraceFormat::Pagelab, true);
    let b = std::fs::read(&good).unwrap();
    for start in [70, b.len() / 3, b.len() / 2 + 20, b.len() - 40] {
        let mut d = b.clone();
        for x in &mut d[start..start + 16] {
            *x ^= 0xFF;
        }
        let bad = dir.path().join("bad.plt.zst");
        std::fs::write(&bad, &d).unwrap();
        let e = read(&bad, None, None).expect_err("corruption must be detected");
        let s = e.to_string();
        assert!(s.contains("bad.plt.zst"), "{s}");
        assert!(matches!(e, Error::Format { .. }), "{s}");
    }
    // a corrupted whole-file csv.zst
    let csvz = dir.path().join("c.csv.zst");
    write(&refs, 4096, &csvz, TraceFormat::Csv, true);
    let mut d = std::fs::read(&csvz).unwrap();
    let mid = d.len() / 2;
    for x in &mut d[mid..mid + 16] {
        *x ^= 0xFF;
    }
    std::fs::write(&csvz, &d).unwrap();
    assert!(matches!(read(&csvz, None, None), Err(Error::Format { .. })));
}

#[test]
fn bad_tag_bits_and_ids() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.plt");
    write(&[r(0, 1, AccessKind::Read, 1, 0), r(0, 1, AccessKind::Write, 1, 0)], 4096, &good, TraceFormat::Pagelab, false);
    let b = std::fs::read(&good).unwrap();
    // the second record starts at 56 + 13: tag then id
    assert_eq!(b[69], 1);
    for (at, val, want) in [(69, 0x21u8, "tag"), (69, 0x03, "tag"), (70, 5, "page id below 1")] {
        let mut d = b.clone();
        d[at] = val;
        reseal(&mut d);
        std::fs::write(&good, &d).unwrap();
        let (_, pos, msg) = format_err(read(&good, None, None).unwrap_err());
        assert_eq!(pos, Position::Byte(69));
        assert!(msg.contains(want), "{msg}");
    }
}

#[test]
fn mutated_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.plt");
    let refs: Vec<Reference> = (0..500u64).map(|i| r((i % 3) as u32, i % 41, AccessKind::from_code((i % 3) as u8).unwrap(), 1 + (i % 2) as u32, (i % 5) as u32)).collect();
    let mut rng = 12345u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for (fmt, compress) in [(TraceFormat::Pagelab, false), (TraceFormat::Pagelab, true), (TraceFormat::Csv, false), (TraceFormat::Oracle, false)] {
        write(&fold(&refs), 4096, &good, fmt, compress);
        let b = std::fs::read(&good).unwrap();
        let bad = dir.path().join("bad");
        for _ in 0..300 {
            let mut d = b.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() % d.len() as u64) as usize;
                d[i] = next() as u8;
            }
            std::fs::write(&bad, &d).unwrap();
            let _ = read(&bad, Some(fmt), None);
            let _ = read(&bad, None, None);
        }
    }
}

#[test]
fn text_garbage_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.csv");
    std::fs::write(&p, "0x1000\n0x2000\nhello world\n0x3000\n").unwrap();
    let (file, pos, msg) = format_err(read(&p, None, None).unwrap_err());
    assert_eq!((file, pos), (p.clone(), Position::Line(3)));
    assert!(msg.contains("hello world"), "{msg}");
    std::fs::write(&p, "pid,page\n1,2\n1,x\n").unwrap();
    let e = read(&p, None, None).unwrap_err().to_string();
    assert!(e.contains("line 3") && e.contains("'page'") && e.contains("'x'"), "{e}");
    std::fs::write(&p, "pid,page\n1,2,3\n").unwrap();
    assert!(read(&p, None, None).unwrap_err().to_string().contains("line 2"));
    std::fs::write(&p, "# page_size=3000\n1\n").unwrap();
    assert!(read(&p, None, None).unwrap_err().to_string().contains("line 1"));
    std::fs::write(&p, "1\n\u{fffd}\u{0}\n").unwrap();
    assert!(read(&p, None, None).unwrap_err().to_string().contains("line 2"));
}

#[test]
fn lackey_cut_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.lackey");
    std::fs::write(&p, "I  04017c2a,3\n L 04e2ac40,8\n S 04e2").unwrap();
    let (file, pos, _) = format_err(read(&p, Some(TraceFormat::Lackey), None).unwrap_err());
    assert_eq!((file, pos), (p.clone(), Position::Line(3)));
    // in capture too, naming the input
    let out = dir.path().join("c.plt");
    let e = capture_lackey(&b"I  04017c2a,3\n L 04e2ac40,8\n S 04e2"[..], "lackey output of prog", &out, 4096, false, false, &mut |_| true)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("lackey output of prog: line 3"), "{e}");
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn oracle_bad_length() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.oracleGeneral");
    std::fs::write(&p, vec![0u8; 24 * 3 + 5]).unwrap();
    let (file, pos, _) = format_err(read(&p, Some(TraceFormat::Oracle), None).unwrap_err());
    assert_eq!((file, pos), (p.clone(), Position::Byte(72)));
    let z = dir.path().join("x.oracleGeneral.zst");
    std::fs::write(&z, zstd::encode_all(&vec![0u8; 24 * 3 + 5][..], 1).unwrap()).unwrap();
    let (_, pos, _) = format_err(read(&z, None, None).unwrap_err());
    assert_eq!(pos, Position::Byte(72));
}

#[test]
fn convert_leaves_no_temp_file_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("g.csv");
    std::fs::write(&src, "1\n2\n3\n".repeat(30000) + "garbage\n").unwrap();
    for fmt in [TraceFormat::Pagelab, TraceFormat::Csv, TraceFormat::Oracle] {
        let out = dir.path().join("out");
        let mut s = open_trace(&src, None, None).unwrap();
        let e = convert(s.as_mut(), &out, fmt, false, &mut |_| true).unwrap_err().to_string();
        assert!(e.contains("g.csv: line 90001"), "{e}");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("g.csv")]);
    }
    // interrupted by the progress hook
    std::fs::write(&src, "1\n2\n3\n".repeat(30000)).unwrap();
    let out = dir.path().join("out.plt");
    let mut s = open_trace(&src, None, None).unwrap();
    assert!(matches!(convert(s.as_mut(), &out, TraceFormat::Pagelab, true, &mut |_| false), Err(Error::Interrupted)));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // lackey cannot be written
    let mut s = open_trace(&src, None, None).unwrap();
    assert!(matches!(convert(s.as_mut(), &out, TraceFormat::Lackey, false, &mut |_| true), Err(Error::Invalid { .. })));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn trace_info_interrupt() {
    let mut s = VecSource::from_pages(&[1, 2, 3]);
    assert!(matches!(trace_info(&mut s, &mut |_| false), Err(Error::Interrupted)));
}

#[test]
fn big_batches_span_chunks() {
    // more than one batch and more than one read chunk, with ids crossing chunk borders
    let dir = tempfile::tempdir().unwrap();
    let refs: Vec<Reference> = (0..300_000u64)
        .map(|i| r((i % 2) as u32, (i * 2654435761) % 50_000, AccessKind::from_code((i % 3) as u8).unwrap(), 1 + (i % 4) as u32, (i % 7) as u32))
        .collect();
    let want = expected(&refs);
    for compress in [false, true] {
        let p = dir.path().join("big.plt");
        write(&refs, 4096, &p, TraceFormat::Pagelab, compress);
        assert_eq!(read(&p, None, None).unwrap(), want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn prop_round_trip(raw in proptest::collection::vec((0u32..3, 0u64..20, 0u8..3, 1u32..4, 0u32..3), 0..200), compress in any::<bool>()) {
        let refs: Vec<Reference> = raw.iter().map(|&(pid, page, k, repeat, gap)| r(pid, page, AccessKind::from_code(k).unwrap(), repeat, gap)).collect();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.plt");
        write(&refs, 4096, &p, TraceFormat::Pagelab, compress);
        prop_assert_eq!(read(&p, None, None).unwrap(), expected(&refs));
        let folded = fold(&refs);
        let c = dir.path().join("a.csv");
        write(&folded, 4096, &c, TraceFormat::Csv, compress);
        prop_assert_eq!(read(&c, None, None).unwrap(), expected(&folded));
    }
}

/// Decode throughput of a 10M-record pagelab trace:
/// `cargo test --release -p pagelab-core trace::format_tests::throughput -- --ignored --nocapture`
#[test]
#[ignore]
fn throughput() {
    let dir = tempfile::tempdir().unwrap();
    let n = 10_000_000u64;
    for (label, span) in [("25% random over 1M pages", 1_000_000u64), ("25% random over 50k pages", 50_000)] {
    let mut x = 88172645463325252u64;
    let refs: Vec<Reference> = (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let page = if x % 4 == 0 { x % span } else { i / 8 % (span / 5) };
            r(0, page, AccessKind::from_code((x % 2) as u8).unwrap(), 1 + (x % 3 == 0) as u32, 0)
        })
        .collect();
    eprintln!("{label}:");
    for compress in [false, true] {
        let p = dir.path().join("big.plt");
        let t = std::time::Instant::now();
        write(&refs, 4096, &p, TraceFormat::Pagelab, compress);
        let w = t.elapsed();
        let size = std::fs::metadata(&p).unwrap().len();
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let mut s = open_trace(&p, None, None).unwrap();
            let mut b = RefBatch::default();
            let mut total = 0u64;
            let mut sum = 0u64;
            loop {
                let k = s.next_batch(&mut b).unwrap();
                if k == 0 {
                    break;
                }
                total += k as u64;
                sum += b.id[k - 1] as u64;
            }
            let d = t.elapsed();
            assert_eq!(total, n);
            eprintln!(
                "pagelab {} ({} MB): write {:.2}s, read {n} records in {:.3}s ({:.1} M records/s) [{sum}]",
                if compress { "zstd" } else { "raw" },
                size / 1_000_000,
                w.as_secs_f64(),
                d.as_secs_f64(),
                n as f64 / d.as_secs_f64() / 1e6
            );
        }
    }
    }
}

/// Issue 20: the raw format had no checksum, so a flipped payload byte was read as a
/// different trace. Version 2 has a CRC-32 per 64 KiB body block and one of the header and
/// trailer: every single-byte change of a file is an error, and one in the body names
/// its block's position.
#[test]
fn every_flipped_byte_of_a_raw_trace_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.plt");
    write(&sample(), 4096, &good, TraceFormat::Pagelab, false);
    let b = std::fs::read(&good).unwrap();
    assert_eq!(u16::from_le_bytes([b[8], b[9]]), 2);
    let bad = dir.path().join("bad.plt");
    for i in 0..b.len() {
        for bit in [0x01u8, 0x80] {
            let mut d = b.clone();
            d[i] ^= bit;
            std::fs::write(&bad, &d).unwrap();
            let e = read(&bad, None, None).expect_err(&format!("byte {i} flipped by {bit:#x} must be found"));
            assert!(matches!(e, Error::Format { .. }), "byte {i}: {e}");
        }
    }
    // a body byte: the error names the file, the block's position and the checksum
    let trailer = u64::from_le_bytes(b[48..56].try_into().unwrap()) as usize;
    let mut d = b.clone();
    d[60] ^= 0x04;
    std::fs::write(&bad, &d).unwrap();
    let e = read(&bad, None, None).unwrap_err();
    let text = e.to_string();
    assert!(text.starts_with(&format!("{}: byte 56: expected body block 0 (bytes 56..{trailer}) to match its CRC-32", bad.display())), "{text}");
    assert!(!text.contains('\n'));
    // a long body: the block of the damage is named
    let refs: Vec<Reference> = (0..100_000u64).map(|i| r(0, (i * 7919) % 50_000, AccessKind::Read, 1, 0)).collect();
    write(&refs, 4096, &good, TraceFormat::Pagelab, false);
    let mut d = std::fs::read(&good).unwrap();
    d[56 + 3 * 65536 + 10] ^= 0x10;
    std::fs::write(&bad, &d).unwrap();
    let (_, pos, msg) = format_err(read(&bad, None, None).unwrap_err());
    assert_eq!(pos, Position::Byte(56 + 3 * 65536));
    assert!(msg.starts_with("expected body block 3 "), "{msg}");
}

/// Version 1 files (no checksums) are still read, including the worked example of the
/// previous docs/trace-format.md byte for byte.
#[test]
fn version_1_files_are_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.plt");
    for compress in [false, true] {
        write(&sample(), 4096, &good, TraceFormat::Pagelab, compress);
        let v1 = to_version_1(&std::fs::read(&good).unwrap());
        let old = dir.path().join("old.plt");
        std::fs::write(&old, &v1).unwrap();
        assert_eq!(read(&old, None, None).unwrap(), expected(&sample()));
        let z = dir.path().join("old.plt.zst");
        std::fs::write(&z, zstd::encode_all(&v1[..], 1).unwrap()).unwrap();
        assert_eq!(read(&z, None, None).unwrap(), expected(&sample()));
    }
    let example: Vec<u8> = [
        "5041 4745 4c41 4200 0100 0200 0000 0000 0010 0000 0000 0000 0300 0000 0000 0000",
        "0500 0000 0000 0000 0200 0000 0000 0000 5f00 0000 0000 0000 0401 0000 0010 0000",
        "0000 0000 000d 0100 0000 1100 0000 0000 0000 0300 0000 1000 0000 00fa 0000 0001",
        "0000 0001 0000 0004 0064 656d 6f",
    ]
    .concat()
    .split_whitespace()
    .flat_map(|w| (0..w.len()).step_by(2).map(move |i| u8::from_str_radix(&w[i..i + 2], 16).unwrap()))
    .collect();
    let old = dir.path().join("example-v1.plt");
    std::fs::write(&old, &example).unwrap();
    let got = read(&old, None, None).unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(got[1].1, r(1, 0x11, AccessKind::Write, 3, 0));
    assert_eq!(got[2].1, r(1, 0x10, AccessKind::Read, 1, 250));
}

/// A whole-file zstd of a changed raw trace (a valid zstd frame around it) is caught by
/// the block checksums, checked when the trailer is reached.
#[test]
fn whole_file_zstd_of_a_changed_trace_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.plt");
    write(&sample(), 4096, &good, TraceFormat::Pagelab, false);
    let mut d = std::fs::read(&good).unwrap();
    d[60] ^= 0x04;
    let z = dir.path().join("bad.zst");
    std::fs::write(&z, zstd::encode_all(&d[..], 1).unwrap()).unwrap();
    let (_, pos, msg) = format_err(read(&z, Some(TraceFormat::Pagelab), None).unwrap_err());
    assert_eq!(pos, Position::Byte(56));
    assert!(msg.contains("CRC-32"), "{msg}");
}

/// Issue 20: a body with more first touches than the header's distinct_pages is an error
/// at the first one too many, as it is read (not after the table grew without bound).
#[test]
fn first_touches_beyond_the_header_are_an_error_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.plt");
    let refs: Vec<Reference> = (0..5000u64).map(|i| r(0, i, AccessKind::Read, 1, 0)).collect();
    write(&refs, 4096, &good, TraceFormat::Pagelab, false);
    let mut b = std::fs::read(&good).unwrap();
    b[40..48].copy_from_slice(&10u64.to_le_bytes());
    reseal(&mut b);
    std::fs::write(&good, &b).unwrap();
    let (_, pos, msg) = format_err(read(&good, None, None).unwrap_err());
    // records of 13 bytes, the eleventh (record 10) starts at 56 + 130
    assert_eq!(pos, Position::Byte(56 + 130));
    assert_eq!(msg, "expected at most 10 distinct pages as the header says, found a first touch of one more in record 10 of 5000");
    // the same inside a whole-file zstd stream (no trailer read up front)
    let z = dir.path().join("t.zst");
    std::fs::write(&z, zstd::encode_all(&b[..], 1).unwrap()).unwrap();
    let (_, _, msg) = format_err(read(&z, Some(TraceFormat::Pagelab), None).unwrap_err());
    assert!(msg.contains("in record 10 of 5000"), "{msg}");
}

/// Issue 20: text lines are capped (4 KiB): a zstd file holding one huge line is an error
/// at its line after reading a few KiB, not gigabytes.
#[test]
fn text_lines_longer_than_4_kib_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.csv.zst");
    let mut text = b"1\n2\n".to_vec();
    text.extend(std::iter::repeat_n(b'1', 50_000_000));
    std::fs::write(&huge, zstd::encode_all(&text[..], 3).unwrap()).unwrap();
    let (file, pos, msg) = format_err(read(&huge, None, None).unwrap_err());
    assert_eq!((file, pos), (huge.clone(), Position::Line(3)));
    assert!(msg.starts_with("expected a line of at most 4096 bytes, found a longer one"), "{msg}");
    let lackey = dir.path().join("x.lackey");
    std::fs::write(&lackey, [b"I  0401a2b0,3\n".as_slice(), &vec![b' '; 5000], b"L 04e2ac40,8\n"].concat()).unwrap();
    let (_, pos, _) = format_err(read(&lackey, None, None).unwrap_err());
    assert_eq!(pos, Position::Line(2));
    // 4096 bytes of line content (plus CR LF) are fine
    let edge = dir.path().join("edge.csv");
    let line = format!("{}5", "0".repeat(4095));
    std::fs::write(&edge, format!("{line}\r\n{line}\n")).unwrap();
    assert_eq!(read(&edge, None, None).unwrap().len(), 1);
    std::fs::write(&edge, format!("0{line}\n")).unwrap();
    assert!(read(&edge, None, None).is_err());
}

/// A process table whose count is beyond distinct pages + 65536 is refused before it
/// is read (a compressed stream could otherwise make it billions of entries).
#[test]
fn an_oversized_process_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.plt");
    write(&sample(), 4096, &good, TraceFormat::Pagelab, false);
    let mut b = std::fs::read(&good).unwrap();
    let trailer = u64::from_le_bytes(b[48..56].try_into().unwrap()) as usize;
    b[trailer..trailer + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let z = dir.path().join("t.zst");
    std::fs::write(&z, zstd::encode_all(&b[..], 1).unwrap()).unwrap();
    let (_, pos, msg) = format_err(read(&z, Some(TraceFormat::Pagelab), None).unwrap_err());
    assert_eq!(pos, Position::Byte(trailer as u64));
    assert!(msg.starts_with("expected at most 65541 processes"), "{msg}");
}

/// The worked example of docs/trace-format.md (version 2), byte for byte: the writer
/// makes exactly these bytes and the reader reads them.
#[test]
fn the_documented_version_2_example() {
    let hex = "5041 4745 4c41 4200 0200 0200 0000 0000 0010 0000 0000 0000 0300 0000 0000 0000 \
               0500 0000 0000 0000 0200 0000 0000 0000 5f00 0000 0000 0000 0401 0000 0010 0000 \
               0000 0000 000d 0100 0000 1100 0000 0000 0000 0300 0000 1000 0000 00fa 0000 0001 \
               0000 0001 0000 0004 0064 656d 6f01 0000 0071 fc5d d8f0 b0bf 19";
    let bytes: Vec<u8> = hex
        .split_whitespace()
        .flat_map(|w| (0..w.len()).step_by(2).map(move |i| u8::from_str_radix(&w[i..i + 2], 16).unwrap()))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo.plt");
    let refs = vec![r(1, 0x10, AccessKind::Read, 1, 0), r(1, 0x11, AccessKind::Write, 3, 0), r(1, 0x10, AccessKind::Read, 1, 250)];
    let mut src = VecSource::new("mem", 4096, refs.clone());
    src.set_process_name(1, "demo");
    convert(&mut src, &out, TraceFormat::Pagelab, false, &mut |_| true).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
    assert_eq!(read(&out, None, None).unwrap(), expected(&refs));
}

#[test]
fn free_records_round_trip_and_need_version_3() {
    use AccessKind::*;
    // a free has repeat 0; one with a gap, one the first touch of its page
    let refs = vec![r(0, 5, Write, 2, 0), r(0, 6, Read, 1, 0), r(0, 5, Free, 0, 0), r(0, 5, Read, 1, 0), r(1, 9, Free, 0, 3), r(1, 9, Write, 1, 0)];
    let dir = tempfile::tempdir().unwrap();
    for compress in [false, true] {
        let p = dir.path().join(format!("f{compress}.plt"));
        assert_eq!(write(&refs, 4096, &p, TraceFormat::Pagelab, compress), 6);
        let b = std::fs::read(&p).unwrap();
        assert_eq!(u16::from_le_bytes([b[8], b[9]]), 3, "a trace with frees is version 3");
        assert_eq!(read(&p, None, None).unwrap(), expected(&refs));
        let info = trace_info(open_trace(&p, None, None).unwrap().as_mut(), &mut |_| true).unwrap();
        assert_eq!((info.records, info.references, info.frees, info.distinct_pages), (6, 5, 2, 3));
        assert_eq!((info.reads, info.writes), (2, 3));
    }
    // without frees the writer still writes version 2, byte for byte as before
    let p = dir.path().join("plain.plt");
    write(&sample(), 4096, &p, TraceFormat::Pagelab, false);
    assert_eq!(std::fs::read(&p).unwrap()[8], 2);
    // csv: kind f, repeat 0
    let c = dir.path().join("f.csv");
    write(&refs, 4096, &c, TraceFormat::Csv, false);
    let text = std::fs::read_to_string(&c).unwrap();
    assert!(text.contains("\n0,5,f,0,0\n") && text.contains("\n1,9,f,0,3\n"), "{text}");
    assert_eq!(read(&c, None, None).unwrap(), expected(&refs));
    // oracleGeneral has no frees: dropped, the rest as ever
    let o = dir.path().join("f.oracleGeneral");
    assert_eq!(write(&refs, 4096, &o, TraceFormat::Oracle, false), 5);
    let pages: Vec<u64> = read(&o, None, None).unwrap().iter().map(|(_, x)| x.page).collect();
    assert_eq!(pages, [5, 6, 5, 9]);
    // read at a larger page size, a free of part of a page frees nothing
    for path in [&p.with_file_name("ffalse.plt"), &c] {
        let merged = read(path, None, Some(8192)).unwrap();
        assert!(merged.iter().all(|(_, x)| x.kind != Free), "{}", path.display());
        assert_eq!(merged.iter().map(|(_, x)| x.repeat as u64).sum::<u64>(), 5);
    }
}

#[test]
fn free_records_bad_forms() {
    use AccessKind::*;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f.plt");
    write(&[r(0, 1, Read, 1, 0), r(0, 1, Free, 0, 0)], 4096, &p, TraceFormat::Pagelab, false);
    let b = std::fs::read(&p).unwrap();
    // the free is the second record, at 56 + 13: tag 3, id 0
    assert_eq!(&b[69..74], &[3, 0, 0, 0, 0]);
    // a free with a repeat count
    let mut d = b.clone();
    d[69] = 3 | 0x08;
    d.splice(74..74, [1, 0, 0, 0]);
    let trailer = u64::from_le_bytes(d[48..56].try_into().unwrap()) + 4;
    d[48..56].copy_from_slice(&trailer.to_le_bytes());
    reseal(&mut d);
    std::fs::write(&p, &d).unwrap();
    let (_, pos, msg) = format_err(read(&p, None, None).unwrap_err());
    assert_eq!(pos, Position::Byte(69));
    assert!(msg.contains("free record (kind 3) without a repeat count"), "{msg}");
    // the same record in a version 2 file is a bad tag, as before (with as many
    // references as records, which version 2 requires of its header)
    let mut d = b.clone();
    d[8] = 2;
    d[32..40].copy_from_slice(&2u64.to_le_bytes());
    reseal(&mut d);
    std::fs::write(&p, &d).unwrap();
    let (_, pos, msg) = format_err(read(&p, None, None).unwrap_err());
    assert_eq!(pos, Position::Byte(69));
    assert!(msg.contains("kind 0-2"), "{msg}");
    // version 2 holds no frees: fewer references than records is a header error there
    let mut d = b.clone();
    d[8] = 2;
    reseal(&mut d);
    std::fs::write(&p, &d).unwrap();
    let (_, pos, msg) = format_err(read(&p, None, None).unwrap_err());
    assert_eq!(pos, Position::Byte(32));
    assert!(msg.contains("at least as many references as records"), "{msg}");
    // version 4 is unknown
    let mut d = b.clone();
    d[8] = 4;
    reseal(&mut d);
    std::fs::write(&p, &d).unwrap();
    let (_, _, msg) = format_err(read(&p, None, None).unwrap_err());
    assert!(msg.contains("version 1 to 3, found version 4"), "{msg}");
    // csv: a free's repeat may be 0 or 1 (read as 0), not more; a reference's not 0
    let c = dir.path().join("f.csv");
    std::fs::write(&c, "pid,page,kind,repeat\n0,4,w,1\n0,4,f,1\n0,4,free,0\n").unwrap();
    let got: Vec<(AccessKind, u32)> = read(&c, None, None).unwrap().iter().map(|(_, x)| (x.kind, x.repeat)).collect();
    assert_eq!(got, [(Write, 1), (Free, 0)], "two frees of the page in a row fold into one");
    std::fs::write(&c, "pid,page,kind,repeat\n0,4,w,1\n0,4,f,2\n").unwrap();
    let (_, pos, msg) = format_err(read(&c, None, None).unwrap_err());
    assert_eq!(pos, Position::Line(3));
    assert!(msg.contains("expected 0 or 1 for a free"), "{msg}");
    std::fs::write(&c, "pid,page,kind,repeat\n0,4,w,0\n").unwrap();
    let (_, pos, msg) = format_err(read(&c, None, None).unwrap_err());
    assert_eq!(pos, Position::Line(2));
    assert!(msg.contains("repeat count from 1"), "{msg}");
}

/// The message of the format error that reading `contents` as the file `p` (at
/// `page_size`) ends in, which must be at line `line`.
fn error_at_line(p: &Path, contents: &str, page_size: Option<u64>, line: u64) -> String {
    std::fs::write(p, contents).unwrap();
    let (_, pos, msg) = format_err(read(p, None, page_size).unwrap_err());
    assert_eq!(pos, Position::Line(line), "{msg}");
    msg
}

/// `head`, then lines from `line` (its text, and the reference it holds) up to 768 KiB,
/// several fills of the text reader's 256 KiB buffer: the text, the references and the
/// number of lines.
fn mixed_text(seed: u64, head: &str, mut line: impl FnMut(&mut rand_pcg::Pcg64) -> (String, Option<Reference>)) -> (String, Vec<Reference>, u64) {
    use rand::SeedableRng;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let (mut text, mut refs) = (String::from(head), Vec::new());
    while text.len() < 3 << 18 {
        let (l, r) = line(&mut rng);
        text.push_str(&l);
        refs.extend(r);
    }
    let lines = text.matches('\n').count() as u64;
    (text, refs, lines)
}

/// Each `bad` line after `text` (of `lines` lines) is an error at its line saying what it
/// must, and again after 70,000 `plain` lines, more than the line reader's longest turn,
/// so that the line is tried in place.
fn bad_lines_are_errors_at_their_line(p: &Path, text: &str, lines: u64, plain: &str, bad: &[(&str, &str)]) {
    let run = plain.repeat(70_000);
    for (before, skipped) in [("", 0), (&*run, 70_000)] {
        for (line, why) in bad {
            let msg = error_at_line(p, &format!("{text}{before}{line}"), None, lines + skipped + 1);
            assert!(msg.contains(why), "{msg}");
        }
    }
}

/// A CSV of plain lines read in place (`CsvSource::take_plain_lines`) mixed with every
/// form only the line reader takes, over several fills of the reader's 256 KiB buffer:
/// the same records as the references written, and errors at their line.
#[test]
fn csv_lines_read_in_place_agree_with_the_line_reader() {
    use rand::Rng;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mixed.csv");
    let (text, refs, lines) = mixed_text(19, "# page_size=4096\npid,page,kind,repeat\n", |rng| {
        let (pid, page, repeat) = (rng.gen_range(0..3u32), rng.gen_range(0..1u64 << 40), rng.gen_range(1..4u32));
        let kind = [AccessKind::Read, AccessKind::Write, AccessKind::Instruction][rng.gen_range(0..3)];
        let k = ["r", "w", "i"][kind as usize];
        let line = match rng.gen_range(0..12) {
            0 => format!("{pid},{page},{k},{repeat}\r\n"),
            1 if rng.gen_bool(0.5) => format!("{pid},{page},{k},{repeat}\r\r\n"),
            1 => format!("  {pid}, {page} ,{k},{repeat}\n"),
            2 => format!("{pid},0x{page:x},{k},{repeat}\n"),
            3 => format!("{pid},{page:030},{k},{repeat}\n"),
            4 => format!("{pid},{page},{},{repeat}\n", ["read", "Write", "instr"][kind as usize]),
            5 => return ("# a comment\n\n".to_string(), None),
            _ => format!("{pid},{page},{k},{repeat}\n"),
        };
        (line, Some(r(pid, page, kind, repeat, 0)))
    });
    std::fs::write(&p, &text).unwrap();
    assert_eq!(read(&p, None, None).unwrap(), expected(&fold(&refs)));
    // a bad line after them: its line number, however the lines before were read
    let long = format!("1,{},r,1\n", "0".repeat(5000));
    bad_lines_are_errors_at_their_line(&p, &text, lines, "1,7,r,1\n", &[("1,2,r,0\n", "repeat"), (&long, "at most 4096 bytes")]);
    // the last line without its newline
    std::fs::write(&p, format!("{text}2,5,w,1")).unwrap();
    let mut with_last = refs.clone();
    with_last.push(r(2, 5, AccessKind::Write, 1, 0));
    assert_eq!(read(&p, None, None).unwrap(), expected(&fold(&with_last)));
}

/// The same for a file without a header: lines of one decimal page number are read in
/// place, every other form (hex addresses, pid and kind fields, spaces, comments) by the
/// line reader, and a page size that cannot read the page numbers is an error at its
/// line either way.
#[test]
fn headerless_lines_read_in_place_agree_with_the_line_reader() {
    use rand::Rng;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pages.txt");
    let (text, refs, lines) = mixed_text(29, "# page_size=4096\n", |rng| {
        let page = rng.gen_range(0..1u64 << 40);
        let read = Some(r(0, page, AccessKind::Read, 1, 0));
        match rng.gen_range(0..10) {
            0 => (format!("{page}\r\n"), read),
            1 => (format!("0x{:x}\n", page << 12), read),
            2 => (format!("3 {page} w\n"), Some(r(3, page, AccessKind::Write, 1, 0))),
            3 => (format!(" {page}\n"), read),
            4 => (format!("{page:025}\n"), read),
            5 => ("# a comment\n\n".to_string(), None),
            _ => (format!("{page}\n"), read),
        }
    });
    std::fs::write(&p, &text).unwrap();
    assert_eq!(read(&p, None, None).unwrap(), expected(&fold(&refs)));
    let bad = "expected a page number or address";
    bad_lines_are_errors_at_their_line(&p, &text, lines, "7\n", &[("12x\n", bad), ("99999999999999999999\n", bad)]);
    // page numbers of 4 KiB pages cannot be read at 1 KiB: the first data line is the
    // line reader's, the second is tried in place, refused, and worded at its line
    let msg = error_at_line(&p, "0x1000\n5\n", Some(1024), 2);
    assert!(msg.contains("cannot be read at page size 1024"), "{msg}");
}
