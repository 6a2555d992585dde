//! Every emitted model passes `onnx.checker.check_model(full_check=True)` (needs pip `onnx`,
//! which scripts/setup.sh installs into .deps/py).

mod common;

use dlcfuzz::emit::emit;
use dlcfuzz::gen::{Limits, Menu, TestCase};

#[test]
fn two_thousand_models_pass_the_onnx_checker() {
    let available = common::python_has_onnx();
    if !available {
        eprintln!("SKIPPED: python3 cannot import onnx (run scripts/setup.sh)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let menu = Menu::everything();
    for (k, bytes) in common::random_inputs(4, 2000, 1200).iter().enumerate() {
        let case = TestCase::decode(bytes, &menu, &Limits::default());
        std::fs::write(dir.path().join(format!("m{k:04}.onnx")), emit(&case).bytes)
            .expect("write model");
    }
    let report = common::check_models(dir.path());
    assert_eq!(report["checked"], 2000);
    let failed = report["failed"].as_array().expect("failed list");
    assert!(
        failed.is_empty(),
        "{} models fail the checker, e.g. {:?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
}
