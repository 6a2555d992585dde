//! PyTorch's element types ([`ScalarType`]): the types the torch program surface computes
//! in, a superset of the ONNX-side [`DType`]s that adds `bfloat16`. Values cross the Python
//! host's pipe in a carrier [`DType`] (`bfloat16` travels as float32 and is cast there).

use super::DType;
use serde::{Deserialize, Serialize};

/// A torch element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScalarType {
    /// `torch.bool`.
    Bool,
    /// `torch.uint8`.
    U8,
    /// `torch.int8`.
    I8,
    /// `torch.int16`.
    I16,
    /// `torch.int32`.
    I32,
    /// `torch.int64`.
    I64,
    /// `torch.float16`.
    F16,
    /// `torch.bfloat16`.
    BF16,
    /// `torch.float32`.
    F32,
    /// `torch.float64`.
    F64,
}

impl ScalarType {
    /// Every type, in promotion order within each category.
    pub const ALL: [ScalarType; 10] = [
        ScalarType::Bool,
        ScalarType::U8,
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ];
    /// Floating-point types.
    pub const FLOATS: [ScalarType; 4] = [
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ];
    /// Integer types.
    pub const INTS: [ScalarType; 5] = [
        ScalarType::U8,
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
    ];

    /// The attribute name in `torch` (`bfloat16`, `int64`, ...).
    pub fn torch_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::U8 => "uint8",
            ScalarType::I8 => "int8",
            ScalarType::I16 => "int16",
            ScalarType::I32 => "int32",
            ScalarType::I64 => "int64",
            ScalarType::F16 => "float16",
            ScalarType::BF16 => "bfloat16",
            ScalarType::F32 => "float32",
            ScalarType::F64 => "float64",
        }
    }

    /// The number TorchScript knows this type by (`c10::ScalarType`): `torch::jit::compile`
    /// resolves no `torch.float32` constant, and a `ScalarType` argument is an `int` there.
    pub fn c10_code(self) -> u8 {
        match self {
            ScalarType::U8 => 0,
            ScalarType::I8 => 1,
            ScalarType::I16 => 2,
            ScalarType::I32 => 3,
            ScalarType::I64 => 4,
            ScalarType::F16 => 5,
            ScalarType::F32 => 6,
            ScalarType::F64 => 7,
            ScalarType::Bool => 11,
            ScalarType::BF16 => 15,
        }
    }

    /// The global a rendered Python program names this type by (`DT_BF16`), so that a run
    /// can rebind every type at once (the widened run of the oracle).
    pub fn global(self) -> String {
        format!("DT_{}", self.short().to_uppercase())
    }

    /// Short name (`bf16`, `i64`, `bool`).
    pub fn short(self) -> &'static str {
        match self {
            ScalarType::BF16 => "bf16",
            other => other.carrier().name(),
        }
    }

    /// Parses [`ScalarType::torch_name`].
    pub fn from_torch_name(name: &str) -> Option<ScalarType> {
        Self::ALL.into_iter().find(|s| s.torch_name() == name)
    }

    /// The type values of this type travel in (`bfloat16` as float32).
    pub fn carrier(self) -> DType {
        match self {
            ScalarType::Bool => DType::Bool,
            ScalarType::U8 => DType::U8,
            ScalarType::I8 => DType::I8,
            ScalarType::I16 => DType::I16,
            ScalarType::I32 => DType::I32,
            ScalarType::I64 => DType::I64,
            ScalarType::F16 => DType::F16,
            ScalarType::BF16 | ScalarType::F32 => DType::F32,
            ScalarType::F64 => DType::F64,
        }
    }

    /// The torch type of an ONNX-side type, when torch has it.
    pub fn of_dtype(dtype: DType) -> Option<ScalarType> {
        Self::ALL
            .into_iter()
            .find(|s| *s != ScalarType::BF16 && s.carrier() == dtype)
    }

    /// Floating point.
    pub fn is_float(self) -> bool {
        Self::FLOATS.contains(&self)
    }

    /// Integer (not bool).
    pub fn is_int(self) -> bool {
        Self::INTS.contains(&self)
    }

    /// Boolean.
    pub fn is_bool(self) -> bool {
        self == ScalarType::Bool
    }

    /// The category torch's type promotion orders by: bool < integer < floating.
    pub fn category(self) -> u8 {
        if self.is_bool() {
            0
        } else if self.is_int() {
            1
        } else {
            2
        }
    }

    /// The type of the widened run: every float as float64, every integer as int64 (a
    /// computation whose result changes under widening overflowed or lost precision).
    pub fn widened(self) -> ScalarType {
        match self.category() {
            0 => ScalarType::Bool,
            1 => ScalarType::I64,
            _ => ScalarType::F64,
        }
    }

    /// `(rtol, atol)` for comparing two computations of this type that may round
    /// differently (fused kernels keep intermediates in float32).
    pub fn tolerance(self) -> (f64, f64) {
        match self {
            ScalarType::F64 => (1e-7, 1e-9),
            ScalarType::F32 => (1e-4, 1e-5),
            ScalarType::F16 => (1e-2, 1e-3),
            ScalarType::BF16 => (5e-2, 1e-2),
            _ => (0.0, 0.0),
        }
    }
}

impl std::fmt::Display for ScalarType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.short())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_globals_are_distinct() {
        let mut globals: Vec<String> = ScalarType::ALL.iter().map(|s| s.global()).collect();
        for s in ScalarType::ALL {
            assert_eq!(ScalarType::from_torch_name(s.torch_name()), Some(s));
        }
        globals.sort();
        globals.dedup();
        assert_eq!(globals.len(), ScalarType::ALL.len());
        assert_eq!(ScalarType::BF16.global(), "DT_BF16");
    }

    #[test]
    fn onnx_types_map_back_and_bfloat16_travels_as_float32() {
        for s in ScalarType::ALL {
            if s != ScalarType::BF16 {
                assert_eq!(ScalarType::of_dtype(s.carrier()), Some(s));
            }
        }
        assert_eq!(ScalarType::BF16.carrier(), DType::F32);
        assert_eq!(ScalarType::of_dtype(DType::U16), None);
    }
}
