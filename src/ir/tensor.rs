//! Tensor types (dtype plus concrete shape) and tensor values.

use super::DType;
use half::f16;
use serde::{Deserialize, Serialize};

/// A tensor type: element type plus a concrete shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorType {
    /// Element type.
    pub dtype: DType,
    /// Concrete dimensions; empty for a scalar.
    pub shape: Vec<usize>,
}

impl TensorType {
    /// Builds a tensor type.
    pub fn new(dtype: DType, shape: Vec<usize>) -> Self {
        Self { dtype, shape }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
}

impl std::fmt::Display for TensorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{:?}", self.dtype, self.shape)
    }
}

/// Typed storage of tensor elements, one variant per [`DType`].
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Buffer {
    F16(Vec<f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
}

/// Lossy conversion of one element to `f64`, for comparisons and reports.
trait ToF64: Copy {
    fn to_f64(self) -> f64;
}
macro_rules! to_f64_as {
    ($($t:ty),*) => { $(impl ToF64 for $t { fn to_f64(self) -> f64 { self as f64 } })* };
}
to_f64_as!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64);
impl ToF64 for f16 {
    fn to_f64(self) -> f64 {
        self.to_f64_const()
    }
}
impl ToF64 for bool {
    fn to_f64(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
}

impl Buffer {
    /// The element type held.
    pub fn dtype(&self) -> DType {
        macro_rules! arm {
            ($($v:ident),*) => { match self { $(Buffer::$v(_) => DType::$v,)* } };
        }
        arm!(F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        macro_rules! arm {
            ($($v:ident),*) => { match self { $(Buffer::$v(x) => x.len(),)* } };
        }
        arm!(F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool)
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element widened to `f64` (exact for all but 64-bit integers beyond 2^53).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        macro_rules! arm {
            ($($v:ident),*) => { match self { $(Buffer::$v(x) => x.iter().map(|e| e.to_f64()).collect(),)* } };
        }
        arm!(F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool)
    }

    /// Builds a buffer of `dtype` from `f64` values, rounding toward the nearest representable
    /// value (integers are truncated after rounding, booleans are `v != 0`).
    pub fn from_f64(dtype: DType, values: &[f64]) -> Buffer {
        match dtype {
            DType::F16 => Buffer::F16(values.iter().map(|v| f16::from_f64(*v)).collect()),
            DType::F32 => Buffer::F32(values.iter().map(|v| *v as f32).collect()),
            DType::F64 => Buffer::F64(values.to_vec()),
            DType::I8 => Buffer::I8(values.iter().map(|v| v.round() as i8).collect()),
            DType::I16 => Buffer::I16(values.iter().map(|v| v.round() as i16).collect()),
            DType::I32 => Buffer::I32(values.iter().map(|v| v.round() as i32).collect()),
            DType::I64 => Buffer::I64(values.iter().map(|v| v.round() as i64).collect()),
            DType::U8 => Buffer::U8(values.iter().map(|v| v.round() as u8).collect()),
            DType::U16 => Buffer::U16(values.iter().map(|v| v.round() as u16).collect()),
            DType::U32 => Buffer::U32(values.iter().map(|v| v.round() as u32).collect()),
            DType::U64 => Buffer::U64(values.iter().map(|v| v.round() as u64).collect()),
            DType::Bool => Buffer::Bool(values.iter().map(|v| *v != 0.0).collect()),
        }
    }

    /// Reads little-endian raw bytes of `dtype` (the layout [`Buffer::to_le_bytes`] writes);
    /// `None` when the length is not a whole number of elements.
    pub fn from_le_bytes(dtype: DType, raw: &[u8]) -> Option<Buffer> {
        let width = dtype.width();
        if !raw.len().is_multiple_of(width) {
            return None;
        }
        macro_rules! le {
            ($t:ty) => {
                raw.chunks_exact(width)
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("element width")))
                    .collect::<Vec<$t>>()
            };
        }
        Some(match dtype {
            DType::F16 => Buffer::F16(le!(u16).into_iter().map(half::f16::from_bits).collect()),
            DType::F32 => Buffer::F32(le!(f32)),
            DType::F64 => Buffer::F64(le!(f64)),
            DType::I8 => Buffer::I8(le!(i8)),
            DType::I16 => Buffer::I16(le!(i16)),
            DType::I32 => Buffer::I32(le!(i32)),
            DType::I64 => Buffer::I64(le!(i64)),
            DType::U8 => Buffer::U8(le!(u8)),
            DType::U16 => Buffer::U16(le!(u16)),
            DType::U32 => Buffer::U32(le!(u32)),
            DType::U64 => Buffer::U64(le!(u64)),
            DType::Bool => Buffer::Bool(raw.iter().map(|b| *b != 0).collect()),
        })
    }

    /// Little-endian raw bytes, as ONNX `raw_data` and numpy expect.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        macro_rules! arm {
            ($($v:ident),*) => { match self {
                $(Buffer::$v(x) => x.iter().flat_map(|e| e.to_le_bytes()).collect(),)*
                Buffer::Bool(x) => x.iter().map(|b| *b as u8).collect(),
            } };
        }
        arm!(F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64)
    }
}

/// A tensor value: shape plus typed elements.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Concrete dimensions.
    pub shape: Vec<usize>,
    /// Elements in row-major order.
    pub data: Buffer,
}

impl Tensor {
    /// Whether every element is finite (always true for integer and boolean tensors).
    pub fn is_finite(&self) -> bool {
        self.data.to_f64_vec().iter().all(|v| v.is_finite())
    }

    /// A tensor of type `ty` with every element `value`.
    pub fn full(ty: &TensorType, value: f64) -> Tensor {
        Tensor {
            shape: ty.shape.clone(),
            data: Buffer::from_f64(ty.dtype, &vec![value; ty.numel()]),
        }
    }

    /// The tensor's type.
    pub fn ty(&self) -> TensorType {
        TensorType::new(self.data.dtype(), self.shape.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_round_trip_keeps_values_for_every_dtype() {
        let values = [0.0, 1.0, 2.0, 3.0];
        for dtype in DType::ALL {
            let buf = Buffer::from_f64(dtype, &values);
            assert_eq!(buf.dtype(), dtype);
            let back = buf.to_f64_vec();
            let expect: Vec<f64> = if dtype == DType::Bool {
                vec![0.0, 1.0, 1.0, 1.0]
            } else {
                values.to_vec()
            };
            assert_eq!(back, expect, "{dtype}");
        }
    }

    #[test]
    fn full_tensors_have_the_type_and_value() {
        let ty = TensorType::new(DType::U16, vec![2, 3]);
        let t = Tensor::full(&ty, 1.0);
        assert_eq!(t.ty(), ty);
        assert_eq!(t.data.to_f64_vec(), vec![1.0; 6]);
    }

    #[test]
    fn le_bytes_have_the_element_width() {
        let buf = Buffer::from_f64(DType::I32, &[1.0, -1.0]);
        assert_eq!(buf.to_le_bytes(), vec![1, 0, 0, 0, 255, 255, 255, 255]);
        assert_eq!(Buffer::from_f64(DType::F16, &[1.0]).to_le_bytes().len(), 2);
    }
}
