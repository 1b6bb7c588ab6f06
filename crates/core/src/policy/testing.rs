//! Test support shared by the policies' unit tests: a driver that plays a reference
//! string against one policy exactly as the replay engine's pool simulation does.

use std::collections::BTreeSet;

use super::ReplacementPolicy;
use crate::trace::PageId;

/// Drives `policy` over `stream` with `c` frames; `check(policy, step, resident)` runs
/// after every reference. Returns the faults and the victims in order.
pub fn drive<P: ReplacementPolicy>(policy: &mut P, c: usize, stream: &[PageId], mut check: impl FnMut(&P, usize, usize)) -> (u64, Vec<PageId>) {
    let pages = *stream.iter().max().unwrap() as usize + 1;
    policy.reserve_pages(pages);
    let mut resident = vec![false; pages];
    let (mut count, mut faults, mut victims) = (0, 0, Vec::new());
    for (t, &x) in stream.iter().enumerate() {
        if resident[x as usize] {
            policy.on_hit(x, t as u64);
        } else {
            faults += 1;
            policy.on_miss(x, t as u64);
            if count == c {
                let v = policy.select_victim(t as u64);
                assert!(resident[v as usize] && v != x, "victim {v} for {x} at {t}");
                resident[v as usize] = false;
                victims.push(v);
            } else {
                count += 1;
            }
            policy.on_insert(x, t as u64);
            resident[x as usize] = true;
        }
        check(policy, t, count);
    }
    (faults, victims)
}

/// [`drive`]'s faults.
pub fn run<P: ReplacementPolicy>(policy: &mut P, c: usize, stream: &[PageId], check: impl FnMut(&P, usize, usize)) -> u64 {
    drive(policy, c, stream, check).0
}

/// Plays `stream` against a variable-size policy as the replay's pool simulation does
/// (hit, or miss and insert; then drain `release`), checking that every released page
/// was resident and is not the page just referenced, and with `only_at_faults` that
/// pages leave only at faults. `check(policy, t, resident, faulted)` runs after every
/// record, once its releases are done. Returns the faults.
pub fn drive_variable<P: ReplacementPolicy>(
    policy: &mut P,
    stream: &[PageId],
    only_at_faults: bool,
    mut check: impl FnMut(&P, usize, &BTreeSet<PageId>, bool),
) -> u64 {
    let pages = *stream.iter().max().unwrap() as usize + 1;
    policy.reserve_pages(pages);
    let mut resident = BTreeSet::new();
    let mut faults = 0;
    for (t, &x) in stream.iter().enumerate() {
        let t64 = t as u64;
        let faulted = !resident.contains(&x);
        if faulted {
            faults += 1;
            policy.on_miss(x, t64);
            policy.on_insert(x, t64);
            resident.insert(x);
        } else {
            policy.on_hit(x, t64);
        }
        while let Some(gone) = policy.release(t64) {
            assert!(faulted || !only_at_faults, "{gone} released at {t}, a hit");
            assert!(resident.remove(&gone), "{gone} released at {t} but not resident");
            assert_ne!(gone, x, "the page just referenced released at {t}");
        }
        check(policy, t, &resident, faulted);
    }
    faults
}
