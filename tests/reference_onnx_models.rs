//! The reference against the models with expected outputs that the pip `onnx` package ships
//! (`onnx/backend/test/data`): at least 30 models whose ops are all in the registry are
//! checked, and at least 95 % of them pass.

use dlcfuzz::reference::onnx_models::{check_all, default_data_dir, summarize, table};

#[test]
fn onnx_backend_test_models_pass() {
    let data = default_data_dir();
    if !data.is_dir() {
        eprintln!(
            "SKIPPED: no ONNX backend test data at {} (run scripts/setup.sh)",
            data.display()
        );
        return;
    }
    let reports = check_all(&data);
    eprint!("{}", table(&reports));
    let s = summarize(&reports);
    assert!(
        s.checked() >= 30,
        "only {} models were checked",
        s.checked()
    );
    assert!(
        s.pass_rate() >= 0.95,
        "pass rate {}/{} is below 95%",
        s.passed,
        s.checked()
    );
}
