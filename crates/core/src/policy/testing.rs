//! Test support shared by the policies' unit tests: a driver that plays a reference
//! string against one policy exactly as the replay engine's pool simulation does.

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
