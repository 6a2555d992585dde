//! Element types of tensors, with their ONNX codes and numeric classes.

use serde::{Deserialize, Serialize};

/// The element type of a tensor. These are the 12 types dlcfuzz generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DType {
    /// IEEE half precision.
    F16,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// Boolean.
    Bool,
}

impl DType {
    /// Every supported element type, in a fixed order.
    pub const ALL: [DType; 12] = [
        DType::F16,
        DType::F32,
        DType::F64,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::Bool,
    ];
    /// Floating-point types.
    pub const FLOATS: [DType; 3] = [DType::F16, DType::F32, DType::F64];
    /// Signed integer types.
    pub const SIGNED: [DType; 4] = [DType::I8, DType::I16, DType::I32, DType::I64];
    /// Unsigned integer types.
    pub const UNSIGNED: [DType; 4] = [DType::U8, DType::U16, DType::U32, DType::U64];

    /// All integer types, signed then unsigned.
    pub fn ints() -> Vec<DType> {
        Self::SIGNED
            .iter()
            .chain(Self::UNSIGNED.iter())
            .copied()
            .collect()
    }

    /// All numeric (non-bool) types.
    pub fn numeric() -> Vec<DType> {
        Self::ALL
            .iter()
            .copied()
            .filter(|d| *d != DType::Bool)
            .collect()
    }

    /// Floats and signed integers (types with a sign).
    pub fn signed_numeric() -> Vec<DType> {
        Self::FLOATS
            .iter()
            .chain(Self::SIGNED.iter())
            .copied()
            .collect()
    }

    /// The ONNX `TensorProto.DataType` code.
    pub fn onnx_code(self) -> i32 {
        match self {
            DType::F32 => 1,
            DType::U8 => 2,
            DType::I8 => 3,
            DType::U16 => 4,
            DType::I16 => 5,
            DType::I32 => 6,
            DType::I64 => 7,
            DType::Bool => 9,
            DType::F16 => 10,
            DType::F64 => 11,
            DType::U32 => 12,
            DType::U64 => 13,
        }
    }

    /// Bytes per element.
    pub fn width(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// Short lowercase name (`f32`, `i64`, `bool`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::Bool => "bool",
        }
    }

    /// The numpy dtype name, for generated Python reproducers.
    pub fn numpy_name(self) -> &'static str {
        match self {
            DType::F16 => "float16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::Bool => "bool",
        }
    }

    /// Parses a name produced by [`DType::name`].
    pub fn from_name(name: &str) -> Option<DType> {
        Self::ALL.iter().copied().find(|d| d.name() == name)
    }

    /// True for f16, f32 and f64.
    pub fn is_float(self) -> bool {
        Self::FLOATS.contains(&self)
    }

    /// True for signed and unsigned integers.
    pub fn is_int(self) -> bool {
        Self::SIGNED.contains(&self) || Self::UNSIGNED.contains(&self)
    }

    /// True for unsigned integers.
    pub fn is_unsigned(self) -> bool {
        Self::UNSIGNED.contains(&self)
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_codes_are_distinct() {
        let mut codes: Vec<i32> = DType::ALL.iter().map(|d| d.onnx_code()).collect();
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), DType::ALL.len());
    }

    #[test]
    fn classes_partition_the_types() {
        for d in DType::ALL {
            let classes = [d.is_float(), d.is_int(), d == DType::Bool];
            assert_eq!(classes.iter().filter(|c| **c).count(), 1, "{d}");
        }
    }
}
