//! The free variables of one insertion (attributes, dimensions of new placeholders), each
//! with a hint drawn from the fuzzer bytes through one of [`BINS`] exponential bins. Specs
//! create them ([`crate::ops::AttrCx`]); [`crate::gen::solve`] finds their values.

use super::Int;
use arbitrary::Unstructured;

/// Number of exponential bins a hint is drawn from (NNSmith's k).
pub const BINS: u32 = 6;

/// One free variable of an insertion.
#[derive(Clone, Debug)]
pub struct VarInfo {
    /// Human-readable name (`conv.stride0`, `in1.d2`), for debugging.
    pub name: String,
    /// Inclusive lower bound.
    pub lo: i64,
    /// Inclusive upper bound.
    pub hi: i64,
    /// Preferred value, drawn from the bytes.
    pub hint: i64,
    /// The exponential bin the hint came from, as an inclusive range.
    pub bin: (i64, i64),
    /// A value suggested by context (the dimension this one will meet), tried concretely when
    /// the hint fails.
    pub preferred: Option<i64>,
}

/// The free variables of one insertion attempt.
#[derive(Clone, Debug, Default)]
pub struct VarTable {
    pub(crate) vars: Vec<VarInfo>,
}

/// Offsets `[first, last]` of exponential bin `index` over a domain of `width + 1` values:
/// bin 0 is `{0}`, bin i is `[2^(i-1), 2^i - 1]`, the last bin is open up to `width`.
pub fn bin_range(index: u32, width: i64) -> (i64, i64) {
    let (first, last) = match index {
        0 => (0, 0),
        i if i + 1 >= BINS => (1i64 << (i - 1), width),
        i => (1i64 << (i - 1), (1i64 << i) - 1),
    };
    (first.min(width), last.min(width))
}

impl VarTable {
    /// Like [`VarTable::fresh`], but three times in four the hint is `preferred` (clamped to
    /// the domain): fresh dimensions then tend to match the tensors they meet.
    pub fn fresh_near(
        &mut self,
        name: impl Into<String>,
        lo: i64,
        hi: i64,
        preferred: Option<i64>,
        u: &mut Unstructured,
    ) -> Int {
        let var = self.fresh(name, lo, hi, u);
        if let Some(p) = preferred {
            let info = self.vars.last_mut().expect("just pushed");
            info.preferred = Some(p.clamp(info.lo, info.hi));
            if u.ratio(3u8, 4u8).unwrap_or(true) {
                info.hint = p.clamp(info.lo, info.hi);
            }
        }
        var
    }

    /// Creates a variable in `[lo, hi]` whose hint is decoded from exactly two bytes of `u`
    /// (bin, then position inside the bin).
    pub fn fresh(
        &mut self,
        name: impl Into<String>,
        lo: i64,
        hi: i64,
        u: &mut Unstructured,
    ) -> Int {
        let hi = hi.max(lo);
        let bin_byte = u.arbitrary::<u8>().unwrap_or(0);
        let pos_byte = u.arbitrary::<u8>().unwrap_or(0);
        let (first, last) = bin_range(u32::from(bin_byte) % BINS, hi - lo);
        let offset = first + i64::from(pos_byte) % (last - first + 1);
        self.vars.push(VarInfo {
            name: name.into(),
            lo,
            hi,
            hint: lo + offset,
            bin: (lo + first, lo + last),
            preferred: None,
        });
        Int::var(self.vars.len() - 1)
    }

    /// The variables created so far.
    pub fn vars(&self) -> &[VarInfo] {
        &self.vars
    }
}
