//! In-place bit-reversal permutation of n = 2^b elements, the reordering step of an
//! iterative radix-2 FFT (Cooley-Tukey; e.g. *Numerical Recipes* `four1`): for each i,
//! j = the b-bit reversal of i; if i < j, swap x[i] and x[j] (read x[i], read x[j],
//! write x[i], write x[j]). Indices equal to their reversal are never touched. The
//! reads of x[j] jump across the whole array: the paging-hostile access pattern of FFTs.

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "bit-reversal permutation of n elements (FFT reordering): swaps x[i] with x[rev(i)]";

pub(super) const PARAMS: &[ParamInfo] = &[param("n", "1048576", "number of elements, a power of two >= 4")];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 4, 1 << 62)?;
    if !n.is_power_of_two() {
        return Err(p.error(format!("parameter 'n': expected a power of two, got {n}")));
    }
    let mut layout = Layout::new(page_size, p.what());
    let x = layout.array(n)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| run(e, x, n)))
}

fn run(e: &mut Emitter, x: Array, n: u64) -> Flow {
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> (64 - bits);
        if i < j {
            e.read(x.at(i))?;
            e.read(x.at(j))?;
            e.write(x.at(i))?;
            e.write(x.at(j))?;
        }
    }
    Ok(())
}
