//! Gradient-guided value search on graphs built from vulnerable ops (Log, Sqrt, Pow, Div,
//! Asin, Acos, Exp chains): its success rate against plain sampling on the same graphs, and
//! an independent check of its results on ONNX Runtime.

mod common;

use dlcfuzz::backend::ort::OrtCpu;
use dlcfuzz::backend::Backend;
use dlcfuzz::emit::emit;
use dlcfuzz::gen::{Limits, Menu, TestCase};
use dlcfuzz::ir::{DType, Tensor};
use dlcfuzz::ops::registry;
use dlcfuzz::pipeline::Pipeline;
use dlcfuzz::values::search::{gradient_search, sample_search, SearchConfig};
use std::time::Duration;

const VULNERABLE: &[&str] = &[
    "Log", "Sqrt", "Pow", "Div", "Asin", "Acos", "Exp", "Add", "Mul", "Sub",
];

fn vulnerable_menu() -> Menu {
    Menu::new(|spec, sig, _class| {
        VULNERABLE.contains(&registry()[spec].op_type())
            && sig
                .inputs
                .iter()
                .chain(&sig.outputs)
                .all(|d| *d == DType::F32)
    })
}

#[test]
fn gradient_search_makes_vulnerable_graphs_valid_more_often_than_sampling() {
    let menu = vulnerable_menu();
    let ort = OrtCpu::new().expect("ONNX Runtime (run scripts/setup.sh)");
    let config = SearchConfig {
        budget: Duration::from_millis(50),
        max_steps: u32::MAX,
        seed: 1,
    };
    let (mut invalid, mut by_gradient, mut by_sampling, mut ort_finite) = (0, 0, 0, 0);
    for bytes in common::random_inputs(21, 300, 1000) {
        let case = TestCase::decode(&bytes, &menu, &Limits::exact(8));
        let (mut g, mut s) = (case.clone(), case.clone());
        let gradient = gradient_search(&mut g, &config);
        assert!(gradient.error.is_none(), "{:?}", gradient.error);
        if gradient.initially_valid {
            continue;
        }
        invalid += 1;
        if gradient.valid {
            by_gradient += 1;
            // Independent check: ONNX Runtime's unoptimized outputs are finite too.
            let model = emit(&g);
            let outs = ort
                .run(&model, &Pipeline::inputs(&g, &model), 0)
                .expect("ORT runs the searched model");
            if outs.iter().all(Tensor::is_finite) {
                ort_finite += 1;
            }
        }
        if sample_search(&mut s, &config).valid {
            by_sampling += 1;
        }
    }
    let rate = |n: usize| n as f64 / invalid.max(1) as f64;
    eprintln!(
        "initially invalid: {invalid}; made valid by gradient search {by_gradient} ({:.3}), by sampling {by_sampling} ({:.3}); ORT outputs finite for {ort_finite} of the gradient's",
        rate(by_gradient),
        rate(by_sampling)
    );
    assert!(invalid >= 50, "only {invalid} graphs needed a search");
    assert!(
        rate(by_gradient) >= 0.5,
        "gradient success {:.3}",
        rate(by_gradient)
    );
    assert!(
        by_gradient >= 2 * by_sampling,
        "gradient {by_gradient} vs sampling {by_sampling}"
    );
    assert!(ort_finite as f64 >= 0.97 * by_gradient as f64);
}
