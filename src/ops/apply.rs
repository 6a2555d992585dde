//! One ONNX node on the reference: [`apply`] reads the input dtypes from their carriers,
//! widens float16 to float32, looks the operator up by op type and runs its
//! [`super::OpSpec::evaluate`], then wraps each output into its dtype's carrier.

use super::carrier;
use super::eval::{Args, RefError};
use crate::ir::DType;
use crate::ops::AttrValue;
use tch::{Kind, Tensor};

/// Runs one ONNX node. `inputs` are all the node's inputs in ONNX order (data inputs, then
/// constant operands such as axes, pads or shapes), `None` for an omitted optional input; each
/// tensor is in the carrier kind of its dtype (see [`carrier`]). Returns one tensor per entry
/// of `output_dtypes`, in their carriers.
///
/// Input dtypes are read from the tensors' kinds. An `Int64` (`Int`) tensor is taken as
/// `i64` (`i32`) unless an output dtype is an unsigned type carried by the same kind (`u32`
/// or `u64` for `Int64`, `u16` for `Int`): then it is read as that type. Ops whose unsigned
/// inputs give a signed or boolean output (comparisons, `Cast`, `ArgMax`) are only exact on
/// `u64` values from 2^63 up through [`apply_typed`], which takes the dtypes explicitly.
pub fn apply(
    op_type: &str,
    attrs: &[(String, AttrValue<i64>)],
    inputs: &[Option<Tensor>],
    output_dtypes: &[DType],
) -> Result<Vec<Tensor>, RefError> {
    let dtypes: Vec<Option<DType>> = inputs
        .iter()
        .map(|t| {
            let kind = t.as_ref()?.kind();
            let unsigned = output_dtypes
                .iter()
                .find(|d| d.is_unsigned() && carrier::carrier(**d) == kind && kind != Kind::Uint8);
            unsigned.copied().or_else(|| carrier::dtype_of_kind(kind))
        })
        .collect();
    apply_typed(op_type, attrs, inputs, &dtypes, output_dtypes)
}

/// [`apply`] with the dtype of every present input given (`None` for absent ones).
pub fn apply_typed(
    op_type: &str,
    attrs: &[(String, AttrValue<i64>)],
    inputs: &[Option<Tensor>],
    input_dtypes: &[Option<DType>],
    output_dtypes: &[DType],
) -> Result<Vec<Tensor>, RefError> {
    let Some(spec) = super::spec_of_op_type(op_type) else {
        return Err(RefError::Unsupported(format!("op type {op_type}")));
    };
    if input_dtypes.len() != inputs.len() {
        return Err(RefError::Failed(format!(
            "{op_type}: {} inputs but {} input dtypes",
            inputs.len(),
            input_dtypes.len()
        )));
    }
    // float16 is computed in float32 and rounded once, when the outputs are wrapped below.
    let inputs = inputs
        .iter()
        .map(|t| match t {
            Some(t) if t.kind() == Kind::Half => t.f_to_kind(Kind::Float).map(Some),
            Some(t) => Ok(Some(t.shallow_clone())),
            None => Ok(None),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let args = Args::new(op_type, attrs, inputs, input_dtypes.to_vec(), output_dtypes);
    let outs = spec.evaluate(&args)?;
    if outs.len() < output_dtypes.len() {
        return Err(RefError::Failed(format!(
            "{op_type}: computed {} outputs, {} wanted",
            outs.len(),
            output_dtypes.len()
        )));
    }
    outs.iter()
        .zip(output_dtypes)
        .map(|(t, d)| carrier::wrap(t, *d))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ops_are_unsupported_and_libtorch_errors_are_failures() {
        let x = Some(Tensor::from_slice(&[1.0f32, 2.0]));
        assert!(matches!(
            apply(
                "NoSuchOp",
                &[],
                &super::super::testing::dup(std::slice::from_ref(&x)),
                &[DType::F32]
            ),
            Err(RefError::Unsupported(_))
        ));
        let y = Some(Tensor::from_slice(&[1.0f32, 2.0, 3.0]));
        assert!(matches!(
            apply("Add", &[], &[x, y], &[DType::F32]),
            Err(RefError::Failed(_))
        ));
    }
}
