//! Where a workload's arrays live: one virtual address space, arrays of 8-byte elements
//! laid out one after another in declaration order, each starting on a page boundary.

use crate::{Error, Result};

/// Bytes per array element (f64 / i64).
pub(crate) const ELEM: u64 = 8;

/// Most distinct pages a workload may span: dense ids are `u32`.
pub(crate) const MAX_SPAN_PAGES: u64 = 1 << 32;

/// Allocates page-aligned arrays in a fresh address space starting at 0.
pub(crate) struct Layout {
    page_size: u64,
    next: u64,
    what: String,
}

/// A one-dimensional array of 8-byte elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Array {
    base: u64,
}

impl Array {
    /// Byte address of element `i`.
    #[inline(always)]
    pub fn at(self, i: u64) -> u64 {
        self.base + ELEM * i
    }
}

/// A row-major two-dimensional array of 8-byte elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Matrix {
    base: u64,
    cols: u64,
}

impl Matrix {
    /// Byte address of element (`i`, `j`).
    #[inline(always)]
    pub fn at(self, i: u64, j: u64) -> u64 {
        self.base + ELEM * (i * self.cols + j)
    }
}

/// An n x n x n grid of points with `comps` 8-byte elements each, stored with i fastest,
/// then j, then k, and the components of a point adjacent (Fortran's `u(comps, i, j, k)`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grid {
    base: u64,
    n: u64,
    comps: u64,
}

impl Grid {
    /// Points per dimension.
    pub fn n(self) -> u64 {
        self.n
    }

    /// Byte addresses of the components of point `[k, j, i]`, in order.
    #[inline(always)]
    pub fn point(self, [k, j, i]: [u64; 3]) -> impl Iterator<Item = u64> {
        let first = self.base + ELEM * (((k * self.n + j) * self.n + i) * self.comps);
        (0..self.comps).map(move |m| first + ELEM * m)
    }
}

impl Layout {
    /// `what` names the workload in errors ("workload lu").
    pub fn new(page_size: u64, what: String) -> Self {
        Layout { page_size, next: 0, what }
    }

    fn too_large(&self) -> Error {
        Error::invalid(
            self.what.clone(),
            format!("the arrays need more than {MAX_SPAN_PAGES} pages of {} bytes; choose smaller sizes", self.page_size),
        )
    }

    /// Reserves `bytes` at the next page boundary; returns the base address.
    pub fn bytes(&mut self, bytes: u64) -> Result<u64> {
        let base = self.next;
        let end = base.checked_add(bytes).ok_or_else(|| self.too_large())?;
        let end = end.checked_next_multiple_of(self.page_size).ok_or_else(|| self.too_large())?;
        if end / self.page_size > MAX_SPAN_PAGES {
            return Err(self.too_large());
        }
        self.next = end;
        Ok(base)
    }

    /// Reserves `pages` whole pages; returns the first page number.
    pub fn pages(&mut self, pages: u64) -> Result<u64> {
        let bytes = pages.checked_mul(self.page_size).ok_or_else(|| self.too_large())?;
        Ok(self.bytes(bytes)? / self.page_size)
    }

    pub fn array(&mut self, elements: u64) -> Result<Array> {
        let bytes = elements.checked_mul(ELEM).ok_or_else(|| self.too_large())?;
        Ok(Array { base: self.bytes(bytes)? })
    }

    pub fn matrix(&mut self, rows: u64, cols: u64) -> Result<Matrix> {
        let elements = rows.checked_mul(cols).ok_or_else(|| self.too_large())?;
        let bytes = elements.checked_mul(ELEM).ok_or_else(|| self.too_large())?;
        Ok(Matrix { base: self.bytes(bytes)?, cols })
    }

    pub fn grid(&mut self, n: u64, comps: u64) -> Result<Grid> {
        let elements = n.checked_mul(n).and_then(|x| x.checked_mul(n)).and_then(|x| x.checked_mul(comps));
        let bytes = elements.and_then(|x| x.checked_mul(ELEM)).ok_or_else(|| self.too_large())?;
        Ok(Grid { base: self.bytes(bytes)?, n, comps })
    }

    /// Pages spanned so far: every page number a workload emits is below this.
    pub fn span_pages(&self) -> u64 {
        self.next / self.page_size
    }
}
