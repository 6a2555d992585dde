//! Regressions of dlcfuzz's own bugs, each found by a campaign and kept here with the input
//! that showed it.

use dlcfuzz::ir::DType;
use dlcfuzz::oracle::Verdict;
use dlcfuzz::reference::apply;

/// The verdict of `target` (10-node graphs) on the input `bytes`.
fn verdict_of(target: &str, bytes: &[u8]) -> Verdict {
    let config = dlcfuzz::targets::TargetConfig::new(target, 10);
    let built = dlcfuzz::targets::build(&config).unwrap_or_else(|e| panic!("{target}: {e:?}"));
    built.run(bytes, &[], None).verdict
}

/// `target` finds nothing in `bytes`.
fn assert_no_finding(target: &str, bytes: &[u8]) {
    let verdict = verdict_of(target, bytes);
    assert!(!matches!(verdict, Verdict::Found(_)), "{verdict:?}");
}

/// The float64 reference of `op` on `x`.
fn reference_f64(op: &str, x: &[f64]) -> Vec<f64> {
    let t = tch::Tensor::from_slice(x);
    let out = apply(op, &[], &[Some(t)], &[DType::F64]).expect("the reference runs");
    let out = out[0].to_kind(tch::Kind::Double);
    let mut v = vec![0f64; x.len()];
    out.copy_data(&mut v, x.len());
    v
}

/// tract's Softplus(27.0) in float64 is 27.00000000000188, which is right; the reference
/// said 27 (libtorch's `softplus` returns `x` above a threshold of 20), and the float64 truth
/// of the precision oracle turned that into a false `reference-mismatch:Softplus(f64->f64)`.
#[test]
fn softplus_is_exact_above_twenty() {
    let x = [27.0, 40.0, -30.0, 0.5];
    let got = reference_f64("Softplus", &x);
    for (x, y) in x.iter().zip(got) {
        let exact = x.max(0.0) + (-x.abs()).exp().ln_1p();
        assert!(
            (y - exact).abs() <= 4.0 * f64::EPSILON * exact.abs(),
            "{x}: {y} vs {exact}"
        );
    }
    assert_ne!(reference_f64("Softplus", &[27.0])[0], 27.0);
}

/// Mish reads Softplus too: `x·tanh(softplus(x))` keeps its exact float64 value.
#[test]
fn mish_uses_the_exact_softplus() {
    let got = reference_f64("Mish", &[-25.0])[0];
    let softplus = (-25f64).exp().ln_1p();
    let exact = -25.0 * softplus.tanh();
    assert!(
        (got - exact).abs() <= 4.0 * f64::EPSILON * exact.abs(),
        "{got} vs {exact}"
    );
}

/// ONNX Runtime's InstanceNormalization over one element per instance (variance 0, scale 7)
/// computes `x·a + (b − mean·a)` with `a = 7 / sqrt(eps) ≈ 2214`: the result is the bias
/// within float32 rounding of `|x·a| ≈ 2560`, 1.1e-4 here. The precision analysis modelled
/// that affine form, but the elementary-op arm shadowed it for every normalization, so a
/// 10-minute `ort_cpu` campaign (seed 202) reported a false
/// `reference-mismatch:InstanceNormalization(f32,f32,f32->f32)`.
#[test]
fn instance_normalization_rounding_in_the_affine_form_is_not_a_finding() {
    assert_no_finding(
        "ort_cpu",
        include_bytes!("data/ort-instancenorm-zero-variance.bin"),
    );
}

/// OpenVINO drops a graph input that no output depends on, so the compiled model's input
/// indices stop following the graph's: the backend fed inputs by index, and a 30-minute
/// `openvino_cpu_patterns` campaign (seed 41) filed 137 tests as a crash (`Input port for
/// index 3 was not found!`, or a shape check on the wrong port). Inputs go by name now.
#[test]
fn openvino_is_fed_by_input_name() {
    let verdict = verdict_of(
        "openvino_cpu_patterns",
        include_bytes!("data/openvino-unused-input-dropped.bin"),
    );
    assert!(matches!(verdict, Verdict::Pass), "{verdict:?}");
}

/// A value search that cannot make every value finite leaves NaN in place (here `Acos` of an
/// input outside [-1, 1]), and a NaN reaching `QuantizeLinear` (or a float-to-integer `Cast`,
/// `ArgMax`, `ArgMin`) has no integer value: ONNX Runtime gives -128, the reference 0. A
/// fresh-seed 10-minute `ort_cpu` campaign (seed 2711) reported it as a
/// `reference-mismatch:QuantizeLinear(f32->i8)`; such a value is undefined now, never compared.
#[test]
fn nan_converted_to_an_integer_is_not_a_finding() {
    assert_no_finding(
        "ort_cpu",
        include_bytes!("data/ort-quantize-linear-nan-input.bin"),
    );
}

/// The precision analysis's "scaled up" and "scaled down" evaluations moved an elementary
/// op's result by its relative rounding allowance and by its absolute one in opposite
/// directions whenever the result was negative, so the two cancelled: tract's `Tanh` at -1
/// (0.99999940, 10 float32 ulp off) was judged against a spread of 1.3e-8 and reported as
/// `reference-mismatch:Tanh(f32->f32)` by a fresh-seed 10-minute campaign (seed 2711).
#[test]
fn a_negative_elementary_result_gets_its_whole_rounding_allowance() {
    assert_no_finding(
        "tract",
        include_bytes!("data/tract-tanh-saturated-negative.bin"),
    );
}

/// A float16 InstanceNormalization whose instances' sums of squares leave the float16 range
/// (values up to 9328): tract computes the statistics in float16 and overflows, ONNX Runtime
/// and the reference in float32; the operator text leaves their precision open. A fresh-seed
/// 10-minute `tract` campaign (seed 2711) reported it as a kernel bug.
#[test]
fn float16_instance_statistics_out_of_range_are_not_a_finding() {
    assert_no_finding(
        "tract",
        include_bytes!("data/tract-instancenorm-f16-statistics-overflow.bin"),
    );
}

/// ONNX Runtime rejects an exported `ConvTranspose` with `output_padding` 1, stride 1 and
/// dilation 2, which torch allows: the contested reading of the operator text, judged not a
/// bug, reported by a fresh-seed 10-minute `torch_onnx_export` campaign (seed 2711).
#[test]
fn a_contested_conv_transpose_output_padding_is_not_a_finding() {
    assert_no_finding(
        "torch_onnx_export",
        include_bytes!("data/export-conv-transpose-output-padding.bin"),
    );
}

/// `DequantizeLinear(uint8 weight) → MatMul` becomes `MatMulNBits` at ONNX Runtime's
/// `extended` level, and its default accuracy level 4 quantizes the float activations to int8
/// (0.3 % off here): a documented precision trade, reported as about ten "bugs" by a
/// fresh-seed 10-minute `ort_cpu` campaign (seed 4242). The precision analysis admits it now
/// (`reference::int8_activations`).
#[test]
fn int8_activations_of_a_quantized_matmul_are_not_a_finding() {
    assert_no_finding(
        "ort_cpu",
        include_bytes!("data/ort-dq-matmul-int8-activations.bin"),
    );
}

/// A linear `Resize` of uint64 values from 2^63 up: the reference read the u64 carrier as
/// signed and interpolated to about 0 where tract gave the right magnitude; reported by a
/// fresh-seed 10-minute `tract` campaign (seed 5151) once linear integer Resizes were compared.
#[test]
fn uint64_values_from_two_to_the_63_resize_as_values() {
    assert_no_finding(
        "tract",
        include_bytes!("data/tract-resize-u64-linear-high-values.bin"),
    );
}

/// A linear `Resize` of bools: a "weighted average" of bools is no bool, so the result is
/// undefined, not a finding (same campaign).
#[test]
fn an_interpolated_bool_resize_is_not_a_finding() {
    assert_no_finding("tract", include_bytes!("data/tract-resize-bool-linear.bin"));
}

/// A cubic `pytorch_half_pixel` `Resize` onto a length-1 axis: the operator text maps the
/// output to coordinate 0, `onnx.reference` to -0.5, and tract follows the latter; a spec
/// reading, not a finding (same campaign).
#[test]
fn pytorch_half_pixel_onto_one_output_is_a_spec_reading() {
    assert_no_finding(
        "tract",
        include_bytes!("data/tract-resize-pytorch-half-pixel-onto-one.bin"),
    );
}
