//! Conversions between [`crate::ir::Tensor`] and `tch::Tensor`, and the *carrier* kinds that
//! hold each of the 12 dtypes inside libtorch.
//!
//! libtorch (through tch) has no usable `uint16`, `uint32` or `uint64` element kind, so those
//! dtypes travel in a wider or equally wide signed kind:
//!
//! | dtype | carrier | held as |
//! |---|---|---|
//! | `u16` | `Int` (i32) | its value, always in `[0, 2^16)` |
//! | `u32` | `Int64` | its value, always in `[0, 2^32)` |
//! | `u64` | `Int64` | its bit pattern (values from 2^63 on read as negative) |
//!
//! Every other dtype has its own kind. `u16` and `u32` carriers are kept *canonical*: after an
//! op that may leave the range (add, sub, mul, shifts, casts) the result is wrapped modulo
//! 2^16 or 2^32 ([`wrap`]), which gives ONNX's wrap-around semantics because two's-complement
//! arithmetic agrees with unsigned arithmetic on the low bits. Canonical carriers hold the true
//! value, so comparisons, casts and divisions on them need no care. The `u64` carrier wraps by
//! itself but its order and division differ from the signed ones: the ops that depend on them
//! go through [`super::numeric`].

use super::eval::RefError;
use crate::ir::{Buffer, DType, Tensor};
use tch::Kind;

/// The libtorch kind that carries `dtype` (see the module docs).
pub fn carrier(dtype: DType) -> Kind {
    match dtype {
        DType::F16 => Kind::Half,
        DType::F32 => Kind::Float,
        DType::F64 => Kind::Double,
        DType::I8 => Kind::Int8,
        DType::I16 => Kind::Int16,
        DType::I32 | DType::U16 => Kind::Int,
        DType::I64 | DType::U32 | DType::U64 => Kind::Int64,
        DType::U8 => Kind::Uint8,
        DType::Bool => Kind::Bool,
    }
}

/// The dtype a carrier kind stands for when nothing else is known: the signed reading of
/// `Int` and `Int64`. `None` for kinds no dtype uses.
pub fn dtype_of_kind(kind: Kind) -> Option<DType> {
    Some(match kind {
        Kind::Half => DType::F16,
        Kind::Float => DType::F32,
        Kind::Double => DType::F64,
        Kind::Int8 => DType::I8,
        Kind::Int16 => DType::I16,
        Kind::Int => DType::I32,
        Kind::Int64 => DType::I64,
        Kind::Uint8 => DType::U8,
        Kind::Bool => DType::Bool,
        _ => return None,
    })
}

/// Brings `t` into the carrier of `dtype`: converts the kind (C-style: floats truncate toward
/// zero, integers wrap) and, for `u16`/`u32`, wraps the value into range.
pub fn wrap(t: &tch::Tensor, dtype: DType) -> Result<tch::Tensor, RefError> {
    let kind = carrier(dtype);
    let mut t = if t.kind() == kind {
        t.shallow_clone()
    } else if t.is_floating_point() && dtype.is_int() && kind != Kind::Int64 {
        // Float to a narrow integer: truncate to i64 first, then wrap, as a C cast through a
        // wide register does (libtorch's direct float to u8 conversion saturates on some paths).
        t.f_to_kind(Kind::Int64)?.f_to_kind(kind)?
    } else {
        t.f_to_kind(kind)?
    };
    let mask = match dtype {
        DType::U16 => Some(0xFFFFi64),
        DType::U32 => Some(0xFFFF_FFFFi64),
        _ => None,
    };
    if let Some(m) = mask {
        t = t.f_bitwise_and(m)?;
    }
    Ok(t)
}

/// The shape of a tensor as libtorch sizes.
pub(crate) fn sizes(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|d| *d as i64).collect()
}

/// `t` as a libtorch tensor in the carrier of its dtype (a fresh leaf, no gradient).
pub fn to_tch(t: &Tensor) -> tch::Tensor {
    let dims = sizes(&t.shape);
    let bytes: Vec<u8> = match &t.data {
        Buffer::U16(v) => v.iter().flat_map(|x| i32::from(*x).to_le_bytes()).collect(),
        Buffer::U32(v) => v.iter().flat_map(|x| i64::from(*x).to_le_bytes()).collect(),
        Buffer::U64(v) => v.iter().flat_map(|x| (*x as i64).to_le_bytes()).collect(),
        other => other.to_le_bytes(),
    };
    tch::Tensor::f_from_data_size(&bytes, &dims, carrier(t.data.dtype()))
        .expect("a buffer of the tensor's own size converts")
}

/// Reads `t` back as a tensor of `dtype`, converting it to the carrier of `dtype` first (with
/// [`wrap`]). Detaches: the result is plain data.
pub fn from_tch(t: &tch::Tensor, dtype: DType) -> Result<Tensor, RefError> {
    let t = wrap(&t.f_detach()?, dtype)?.f_contiguous()?;
    let shape: Vec<usize> = t.size().iter().map(|d| *d as usize).collect();
    let n: usize = shape.iter().product();
    let width = carrier(dtype).elt_size_in_bytes();
    let mut bytes = vec![0u8; n * width];
    t.f_copy_data_u8(&mut bytes, n)?;
    // The carriers of u16/u32/u64 are wider signed types; every other carrier is native.
    let wide = |t: DType| Buffer::from_le_bytes(t, &bytes).expect("whole elements");
    let data = match dtype {
        DType::U16 => Buffer::U16(match wide(DType::I32) {
            Buffer::I32(v) => v.into_iter().map(|x| x as u16).collect(),
            _ => unreachable!("read as i32"),
        }),
        DType::U32 => Buffer::U32(match wide(DType::I64) {
            Buffer::I64(v) => v.into_iter().map(|x| x as u32).collect(),
            _ => unreachable!("read as i64"),
        }),
        DType::U64 => Buffer::U64(match wide(DType::I64) {
            Buffer::I64(v) => v.into_iter().map(|x| x as u64).collect(),
            _ => unreachable!("read as i64"),
        }),
        native => wide(native),
    };
    Ok(Tensor { shape, data })
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn tensor(data: Buffer) -> Tensor {
        Tensor {
            shape: vec![2, data.len() / 2],
            data,
        }
    }

    #[test]
    fn every_dtype_round_trips_including_extreme_values() {
        let cases = vec![
            Buffer::F16(vec![
                f16::from_f32(1.5),
                f16::MIN,
                f16::MAX,
                f16::from_f32(-0.0),
            ]),
            Buffer::F32(vec![1.5, f32::MIN, f32::MAX, f32::INFINITY]),
            Buffer::F64(vec![1.5, f64::MIN, f64::MAX, f64::NEG_INFINITY]),
            Buffer::I8(vec![1, i8::MIN, i8::MAX, -1]),
            Buffer::I16(vec![1, i16::MIN, i16::MAX, -1]),
            Buffer::I32(vec![1, i32::MIN, i32::MAX, -1]),
            Buffer::I64(vec![1, i64::MIN, i64::MAX, -1]),
            Buffer::U8(vec![1, 0, u8::MAX, 128]),
            Buffer::U16(vec![1, 0, u16::MAX, 1 << 15]),
            Buffer::U32(vec![1, 0, u32::MAX, 1 << 31]),
            Buffer::U64(vec![1, 0, u64::MAX, 1 << 63]),
            Buffer::Bool(vec![true, false, false, true]),
        ];
        for data in cases {
            let t = tensor(data);
            let dtype = t.data.dtype();
            let back = from_tch(&to_tch(&t), dtype).unwrap();
            assert_eq!(back, t, "{dtype}");
            assert_eq!(to_tch(&t).kind(), carrier(dtype));
        }
    }

    #[test]
    fn wrap_gives_modular_unsigned_values_and_truncates_floats() {
        let t = tch::Tensor::from_slice(&[-1i64, 65536 + 7, 1 << 40]);
        let u16s = from_tch(&t, DType::U16).unwrap();
        assert_eq!(u16s.data, Buffer::U16(vec![65535, 7, 0]));
        let u32s = from_tch(&t, DType::U32).unwrap();
        assert_eq!(u32s.data, Buffer::U32(vec![u32::MAX, 65543, 0]));
        let f = tch::Tensor::from_slice(&[-1.75f32, 2.5, -0.5]);
        assert_eq!(
            from_tch(&f, DType::I32).unwrap().data,
            Buffer::I32(vec![-1, 2, 0])
        );
        assert_eq!(
            from_tch(&f, DType::U8).unwrap().data,
            Buffer::U8(vec![255, 2, 0])
        );
    }

    #[test]
    fn scalars_keep_an_empty_shape() {
        let t = Tensor {
            shape: vec![],
            data: Buffer::U32(vec![9]),
        };
        let x = to_tch(&t);
        assert_eq!(x.dim(), 0);
        assert_eq!(from_tch(&x, DType::U32).unwrap(), t);
    }
}
